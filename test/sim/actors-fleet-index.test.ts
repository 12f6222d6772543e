import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FleetIndex } from '../../src/sim/actors/fleet-index.js';
import type { KubeObject } from '../../src/sim/store/sim-store.js';

const pod = (name: string, node: string, claims: string[]): KubeObject => ({
  metadata: { namespace: 'ns', name },
  spec: { nodeName: node, volumes: claims.map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })) },
});
const pv = (name: string, claim: string, modes: string[]): KubeObject => ({
  metadata: { name },
  spec: { claimRef: { namespace: 'ns', name: claim }, csi: { driver: 'd', volumeHandle: `h-${name}` }, accessModes: modes },
});

test('fleet index: a pod resolves its volumes all or none, through its claims\' PVs', () => {
  const index = new FleetIndex();
  index.applyEvent('ADDED', 'pods', pod('p', 'n1', ['a', 'b']));
  index.applyEvent('ADDED', 'persistentvolumes', pv('pv-a', 'a', ['ReadWriteOnce']));
  const rec = index.pod('ns/p');
  assert.ok(rec);
  assert.deepEqual(rec.claims, ['a', 'b']);
  assert.equal(index.podVolumes(rec), undefined, 'claim b has no PV yet');
  assert.equal(index.unboundClaim(rec), 'ns/b');
  assert.equal(index.allClaimsRwo(rec), false, 'an unbound claim is not RWO');

  index.applyEvent('ADDED', 'persistentvolumes', pv('pv-b', 'b', ['ReadWriteOnce', 'ReadWriteOncePod']));
  const names = (ids: readonly number[] | undefined) => ids?.map((v) => index.volumeName(v));
  const resolved = index.podVolumes(rec);
  assert.deepEqual(names(resolved), ['kubernetes.io/csi/d^h-pv-a', 'kubernetes.io/csi/d^h-pv-b']);
  assert.equal(index.unboundClaim(rec), undefined);
  assert.equal(index.allClaimsRwo(rec), true);
  assert.deepEqual(index.podVolumes(rec), resolved, 'resolved again alike');

  // A PV event that leaves the claim's volume as it was keeps the volume generation; a changed volume bumps it.
  const gen = index.volumeGeneration();
  index.applyEvent('MODIFIED', 'persistentvolumes', pv('pv-b', 'b', ['ReadWriteOnce']));
  assert.deepEqual(index.podVolumes(rec), resolved);
  assert.equal(index.volumeGeneration(), gen);
  index.applyEvent('MODIFIED', 'persistentvolumes', pv('pv-b', 'b', ['ReadWriteMany']));
  assert.equal(index.allClaimsRwo(rec), false, 'an RWX claim makes the pod movable only with detach');
  index.applyEvent('MODIFIED', 'persistentvolumes', { ...pv('pv-b', 'b', ['ReadWriteMany']), spec: { claimRef: { namespace: 'ns', name: 'b' }, csi: { driver: 'd', volumeHandle: 'other' } } });
  assert.deepEqual(names(index.podVolumes(rec)), ['kubernetes.io/csi/d^h-pv-a', 'kubernetes.io/csi/d^other']);
  assert.ok(index.volumeGeneration() > gen);
  // A PV deleted under a running pod stays in use (a kubelet keeps it mounted).
  index.applyEvent('DELETED', 'persistentvolumes', pv('pv-a', 'a', ['ReadWriteOnce']));
  assert.deepEqual(names(index.podVolumes(rec)), ['kubernetes.io/csi/d^h-pv-a', 'kubernetes.io/csi/d^other']);

  // A pod event with other claims replaces the keys.
  assert.deepEqual(rec.claimKeys, ['ns/a', 'ns/b']);
  index.applyEvent('MODIFIED', 'pods', pod('p', 'n1', ['b']));
  assert.deepEqual(rec.claimKeys, ['ns/b']);
  assert.deepEqual(names(index.podVolumes(rec)), ['kubernetes.io/csi/d^other'], 'new claims are resolved anew');
});

test('fleet index: internAll reuses the previous ids of unchanged names and interns new ones', () => {
  const index = new FleetIndex();
  const first = index.internAll(['v1', 'v2'], undefined);
  assert.deepEqual(first.map((v) => index.volumeName(v)), ['v1', 'v2']);
  // Fresh strings with the same text map to the same ids; a changed entry gets its own id.
  const again = index.internAll([`v${1}`, 'v3', 'v2'], first);
  assert.deepEqual(again.map((v) => index.volumeName(v)), ['v1', 'v3', 'v2']);
  assert.equal(again[0], first[0]);
  assert.equal(again[2], first[1], 'a name that moved position is found by interning');
  const shifted = index.internAll(['v3', 'v2', 'v4'], again);
  assert.deepEqual(shifted.map((v) => index.volumeName(v)), ['v3', 'v2', 'v4'], 'entries one off their old position');
  assert.deepEqual(shifted.slice(0, 2), again.slice(1));
  assert.deepEqual(index.internAll([], again), []);
});

test('fleet index: a pod update says whether it changed what the index keeps (node, claims, deleting, terminal)', () => {
  const index = new FleetIndex();
  const base = pod('p', 'n1', ['a']);
  assert.equal(index.applyEvent('ADDED', 'pods', base), true);
  const annotated = { ...base, metadata: { ...base.metadata, annotations: { x: '1' } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } };
  assert.equal(index.applyEvent('MODIFIED', 'pods', annotated), false, 'an annotation and a condition');
  assert.equal(index.applyEvent('MODIFIED', 'pods', { ...annotated, status: { phase: 'Running' } }), false, 'a phase that is not terminal');
  assert.equal(index.applyEvent('MODIFIED', 'pods', { ...annotated, status: { phase: 'Succeeded' } }), true, 'terminal');
  assert.equal(index.applyEvent('MODIFIED', 'pods', { ...base, metadata: { ...base.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }), true, 'deleting (and no longer terminal)');
  assert.equal(index.applyEvent('MODIFIED', 'pods', pod('p', 'n2', ['a'])), true, 'another node');
  assert.equal(index.applyEvent('MODIFIED', 'pods', pod('p', 'n2', ['a', 'b'])), true, 'another claim');
  assert.equal(index.applyEvent('MODIFIED', 'pods', pod('p', 'n2', ['a', 'b'])), false, 'the same again');
  assert.equal(index.applyEvent('DELETED', 'pods', base), true);
  assert.equal(index.applyEvent('MODIFIED', 'persistentvolumes', pv('pv-a', 'a', ['ReadWriteOnce'])), true, 'other resources: always');
});

test('fleet index: pods, their nodes, claims and bound volumes agree with Map models over random events', () => {
  const podName = fc.constantFrom('p1', 'p2', 'p3', 'p4', 'p5');
  const claim = fc.constantFrom('a', 'b', 'c', 'd');
  const evt = fc.oneof(
    fc.record({ k: fc.constant('pod' as const), type: fc.constantFrom('ADDED' as const, 'MODIFIED' as const, 'DELETED' as const), name: podName, node: fc.option(fc.constantFrom('n1', 'n2'), { nil: undefined }), claims: fc.uniqueArray(claim, { maxLength: 3 }), deleting: fc.boolean(), terminal: fc.boolean() }),
    fc.record({ k: fc.constant('pv' as const), gone: fc.boolean(), claim, handle: fc.constantFrom('h1', 'h2', 'h3'), rwo: fc.boolean() }),
  );
  fc.assert(
    fc.property(fc.array(evt, { maxLength: 120 }), (events) => {
      const index = new FleetIndex();
      const pods = new Map<string, { node: string | undefined; claims: string[]; deleting: boolean; terminal: boolean }>();
      const bound = new Map<string, { volume: string; rwo: boolean }>();
      for (const e of events) {
        if (e.k === 'pod') {
          const o = pod(e.name, e.node ?? '', e.claims);
          if (!e.node) delete (o.spec as { nodeName?: string }).nodeName;
          if (e.deleting) o.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
          if (e.terminal) o.status = { phase: 'Failed' };
          index.applyEvent(e.type, 'pods', o);
          if (e.type === 'DELETED') pods.delete(`ns/${e.name}`);
          else pods.set(`ns/${e.name}`, { node: e.node, claims: e.claims, deleting: e.deleting, terminal: e.terminal });
        } else {
          const o = pv(`pv-${e.claim}`, e.claim, e.rwo ? ['ReadWriteOnce'] : ['ReadWriteMany']);
          (o.spec as { csi: { volumeHandle: string } }).csi.volumeHandle = e.handle;
          index.applyEvent(e.gone ? 'DELETED' : 'MODIFIED', 'persistentvolumes', o);
          if (e.gone) bound.delete(`ns/${e.claim}`);
          else bound.set(`ns/${e.claim}`, { volume: `kubernetes.io/csi/d^${e.handle}`, rwo: e.rwo });
        }
        assert.equal(index.podCount(), pods.size);
        assert.equal(index.boundVolumeCount(), bound.size);
        for (const n of ['n1', 'n2']) {
          const id = index.findNode(n);
          const want = [...pods].filter(([, p]) => p.node === n).map(([k]) => k).sort();
          assert.deepEqual(id === undefined ? [] : index.podsOn(id).map((p) => index.podKey(p)).sort(), want);
        }
        for (const [key, m] of pods) {
          const rec = index.pod(key);
          assert.ok(rec);
          assert.equal(rec.key, key);
          assert.equal(rec.node, m.node === undefined ? -1 : index.findNode(m.node));
          assert.equal(rec.deleting, m.deleting);
          assert.equal(rec.terminal, m.terminal);
          assert.deepEqual(rec.claims, m.claims);
          const keys = m.claims.map((c) => `ns/${c}`);
          assert.equal(index.unboundClaim(rec), keys.find((k) => !bound.has(k)));
          assert.equal(index.allClaimsRwo(rec), keys.length > 0 && keys.every((k) => bound.get(k)?.rwo === true));
          if (keys.every((k) => bound.has(k))) assert.deepEqual(index.podVolumes(rec)?.map((v) => index.volumeName(v)), keys.map((k) => bound.get(k)?.volume));
        }
        for (const key of ['ns/p1', 'ns/p2', 'ns/p3', 'ns/p4', 'ns/p5']) if (!pods.has(key)) assert.equal(index.pod(key), undefined);
      }
    }),
    { numRuns: 300 },
  );
});
