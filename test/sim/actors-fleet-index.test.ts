import { test } from 'node:test';
import assert from 'node:assert/strict';
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
