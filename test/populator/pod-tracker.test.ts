import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { PodTracker, trackedVolumes, type TrackedPod } from '../../src/populator/pod-tracker.js';
import { ReferencePodTracker, referenceVolumes } from './pod-tracker-reference.js';

const vols = (...claims: Array<string | undefined>) => claims.map((claimName) => ({ claimName }));

it('PodTracker.setClaims: pods by claim follow each pod\'s current claims (added, kept, renamed, reordered, dropped)', () => {
  const t = new PodTracker();
  t.setClaims('ns/p1', 'ns', vols('a', undefined, 'b'));
  t.setClaims('ns/p2', 'ns', vols('a'));
  assert.deepEqual([...t.podsOfClaim('ns/a')].sort(), ['ns/p1', 'ns/p2']);
  assert.deepEqual(t.podsOfClaim('ns/b'), ['ns/p1']);
  t.setClaims('ns/p1', 'ns', vols('a', 'b')); // same claims, one fewer non-claim volume
  assert.deepEqual(t.podsOfClaim('ns/b'), ['ns/p1']);
  t.setClaims('ns/p1', 'ns', vols('b', 'a')); // reordered
  assert.deepEqual([...t.podsOfClaim('ns/a')].sort(), ['ns/p1', 'ns/p2']);
  t.setClaims('ns/p1', 'ns', vols('a', 'bb')); // a claim whose name only extends the old one
  assert.deepEqual(t.podsOfClaim('ns/b'), []);
  assert.deepEqual(t.podsOfClaim('ns/bb'), ['ns/p1']);
  t.setClaims('ns/p2', 'ns', vols(undefined));
  assert.deepEqual(t.podsOfClaim('ns/a'), ['ns/p1']);
  t.clearClaims('ns/p1');
  assert.deepEqual(t.podsOfClaim('ns/a'), []);
  assert.deepEqual(t.podsOfClaim('ns/bb'), []);
});

it('PodTracker volumes: recorded once each, in order, a lone one without a list, removable in any order', () => {
  const t = new PodTracker();
  const p = t.create('uid-1', 'ns', 'ns/p1', 'node-a');
  const held = () => trackedVolumes(t.get('uid-1')!);
  assert.deepEqual(held(), []);
  t.addVolume(p, 'v1');
  t.addVolume(p, 'v1');
  assert.deepEqual(held(), ['v1']);
  assert.equal(t.get('uid-1')!.volumes, 'v1');
  t.addVolume(p, 'v2');
  t.addVolume(p, 'v3');
  t.addVolume(p, 'v2');
  assert.deepEqual(held(), ['v1', 'v2', 'v3']);
  // A snapshot: removing while iterating it visits every volume once.
  const seen: string[] = [];
  for (const v of held()) {
    seen.push(v);
    t.removeVolume(p, v);
  }
  assert.deepEqual(seen, ['v1', 'v2', 'v3']);
  assert.deepEqual(held(), []);
  t.addVolume(p, 'v4');
  t.removeVolume(p, 'v5');
  assert.deepEqual(held(), ['v4']);
  t.removeVolume(p, 'v4');
  assert.deepEqual(held(), []);
  assert.deepEqual(t.get('uid-1'), { uid: 'uid-1', namespace: 'ns', key: 'ns/p1', nodeName: 'node-a', volumes: undefined });
});

it('setClaims tells whether the claims held for the pod changed', () => {
  const t = new PodTracker();
  assert.equal(t.setClaims('ns/p', 'ns', [{ claimName: 'c1' }]), true);
  assert.deepEqual(t.podsOfClaim('ns/c1'), ['ns/p']);
  assert.equal(t.setClaims('ns/p', 'ns', [{ claimName: 'c1' }]), false, 'unchanged');
  assert.equal(t.setClaims('ns/p', 'ns', [{ claimName: 'c2' }]), true, 'changed');
  assert.deepEqual(t.podsOfClaim('ns/c1'), []);
  assert.equal(t.setClaims('ns/p', 'ns', [{}]), true, 'claims dropped');
  assert.equal(t.setClaims('ns/p', 'ns', [{}]), false, 'still none');
  assert.deepEqual(t.podsOfClaim('ns/c2'), []);
});

it('a pod naming one claim twice is listed once, and leaves it whole', () => {
  const t = new PodTracker();
  t.setClaims('ns/p', 'ns', vols('a', 'a'));
  t.setClaims('ns/q', 'ns', vols('a'));
  assert.deepEqual(t.podsOfClaim('ns/a'), ['ns/p', 'ns/q']);
  assert.equal(t.setClaims('ns/p', 'ns', vols('a', 'a')), false);
  t.clearClaims('ns/p');
  assert.deepEqual(t.podsOfClaim('ns/a'), ['ns/q']);
});

it('names that are not ASCII round-trip and compare as the strings they are', () => {
  const t = new PodTracker();
  const p = t.create('üid', 'nś', 'nś/pöd', 'nöde');
  t.addVolume(p, 'vól');
  t.addVolume(p, 'vól');
  assert.deepEqual(t.get('üid'), { uid: 'üid', namespace: 'nś', key: 'nś/pöd', nodeName: 'nöde', volumes: 'vól' });
  // 'Ã©' is two chars whose codes are the two UTF-8 bytes of 'é'.
  t.setClaims('nś/pöd', 'nś', vols('é'));
  assert.equal(t.setClaims('nś/pöd', 'nś', vols('é')), false);
  assert.equal(t.setClaims('nś/pöd', 'nś', vols('\u00c3\u00a9')), true);
  assert.deepEqual(t.podsOfClaim('nś/é'), []);
  assert.deepEqual(t.podsOfClaim('nś/\u00c3\u00a9'), ['nś/pöd']);
});

/** One tracker operation, over small pools of names so that they collide. */
const uid = fc.constantFrom('u1', 'u2', 'u3', 'u4', 'u5', 'u6');
const ns = fc.constantFrom('ns', 'kube-system');
const podName = fc.constantFrom('p1', 'p2', 'p3', 'p4');
const node = fc.constantFrom('node-a', 'node-b', 'node-c');
const volume = fc.constantFrom('v1', 'v2', 'v3', 'kubernetes.io/csi/d^h1', 'kubernetes.io/csi/d^h2');
const claim = fc.option(fc.constantFrom('c1', 'c2', 'c3', 'c'), { nil: undefined });
const op = fc.oneof(
  fc.record({ op: fc.constant('create' as const), uid, ns, name: podName, node }),
  fc.record({ op: fc.constant('delete' as const), uid }),
  fc.record({ op: fc.constant('addVolume' as const), uid, volume }),
  fc.record({ op: fc.constant('removeVolume' as const), uid, volume }),
  fc.record({ op: fc.constant('setClaims' as const), ns, name: podName, claims: fc.array(claim, { maxLength: 4 }) }),
  fc.record({ op: fc.constant('clearClaims' as const), ns, name: podName }),
);

function decoded(t: TrackedPod | { uid: string; namespace: string; key: string; nodeName: string; volumes: string | string[] | undefined } | undefined) {
  return t === undefined ? undefined : { uid: t.uid, namespace: t.namespace, key: t.key, nodeName: t.nodeName, volumes: t.volumes };
}

it('the packed tracker answers as the Map-based one, whatever the sequence of operations', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
      const packed = new PodTracker();
      const model = new ReferencePodTracker();
      for (const o of ops) {
        switch (o.op) {
          case 'create':
            packed.create(o.uid, o.ns, `${o.ns}/${o.name}`, o.node);
            model.create(o.uid, o.ns, `${o.ns}/${o.name}`, o.node);
            break;
          case 'delete':
            packed.delete(o.uid);
            model.delete(o.uid);
            break;
          case 'addVolume':
          case 'removeVolume': {
            const p = packed.get(o.uid);
            const m = model.get(o.uid);
            assert.deepEqual(decoded(p), decoded(m));
            if (p === undefined || m === undefined) break;
            if (o.op === 'addVolume') {
              packed.addVolume(p, o.volume);
              model.addVolume(m, o.volume);
            } else {
              packed.removeVolume(p, o.volume);
              model.removeVolume(m, o.volume);
            }
            assert.deepEqual(trackedVolumes(packed.get(o.uid)!), referenceVolumes(m));
            break;
          }
          case 'setClaims': {
            const volumes = o.claims.map((claimName) => ({ claimName }));
            const changed = packed.setClaims(`${o.ns}/${o.name}`, o.ns, volumes);
            const stored = model.setClaims(`${o.ns}/${o.name}`, o.ns, volumes);
            // The model tells only of claims stored anew; the packed tracker also of claims dropped.
            if (stored !== undefined) assert.equal(changed, true);
            if (!changed) assert.equal(stored, undefined);
            break;
          }
          case 'clearClaims':
            packed.clearClaims(`${o.ns}/${o.name}`);
            model.clearClaims(`${o.ns}/${o.name}`);
            break;
        }
        assert.equal(packed.size, model.size);
      }
      assert.deepEqual([...packed.values()].map(decoded).sort(byUid), [...model.values()].map(decoded).sort(byUid));
      for (const n of ['ns', 'kube-system']) {
        for (const c of ['c1', 'c2', 'c3', 'c']) assert.deepEqual(packed.podsOfClaim(`${n}/${c}`), model.podsOfClaim(`${n}/${c}`));
      }
      for (const u of ['u1', 'u2', 'u3', 'u4', 'u5', 'u6']) assert.deepEqual(decoded(packed.get(u)), decoded(model.get(u)));
    }),
    { numRuns: 300 },
  );
});

it('values walks the live pods: one deleted before it is reached is not yielded', () => {
  const t = new PodTracker();
  for (let i = 0; i < 5; i++) t.create(`u${i}`, 'ns', `ns/p${i}`, 'n');
  const seen: string[] = [];
  for (const p of t.values()) {
    seen.push(p.uid);
    if (p.uid === 'u1') t.delete('u3');
  }
  assert.deepEqual(seen, ['u0', 'u1', 'u2', 'u4']);
});

function byUid(a: { uid: string } | undefined, b: { uid: string } | undefined): number {
  return a!.uid < b!.uid ? -1 : a!.uid > b!.uid ? 1 : 0;
}
