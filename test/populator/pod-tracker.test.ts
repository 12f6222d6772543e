import assert from 'node:assert/strict';
import { it } from 'node:test';
import { PodTracker, trackedVolumes } from '../../src/populator/pod-tracker.js';
import { KeySets } from '../../src/populator/key-sets.js';

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

it('KeySets: one member stored alone, several in a set; members is a snapshot', () => {
  const k = new KeySets();
  k.add('x', 'm1');
  k.add('x', 'm1');
  assert.deepEqual(k.members('x'), ['m1']);
  k.add('x', 'm2');
  const snapshot = k.members('x');
  k.delete('x', 'm1');
  assert.deepEqual([...snapshot].sort(), ['m1', 'm2']);
  assert.deepEqual(k.members('x'), ['m2']);
  k.delete('x', 'nope');
  k.delete('x', 'm2');
  assert.equal(k.size, 0);
  k.add('y', 'm');
  k.delete('y', 'other');
  assert.deepEqual(k.members('y'), ['m']);
});

it('PodTracker volumes: recorded once each, in order, a lone one without a list, removable in any order', () => {
  const t = new PodTracker();
  const p = t.create('uid-1', 'ns', 'ns/p1', 'node-a');
  assert.deepEqual(trackedVolumes(p), []);
  t.addVolume(p, 'v1');
  t.addVolume(p, 'v1');
  assert.deepEqual(trackedVolumes(p), ['v1']);
  t.addVolume(p, 'v2');
  t.addVolume(p, 'v3');
  t.addVolume(p, 'v2');
  assert.deepEqual(trackedVolumes(p), ['v1', 'v2', 'v3']);
  // The list handed out is a copy: removing while iterating it visits every volume once.
  const seen: string[] = [];
  for (const v of trackedVolumes(p)) {
    seen.push(v);
    t.removeVolume(p, v);
  }
  assert.deepEqual(seen, ['v1', 'v2', 'v3']);
  assert.deepEqual(trackedVolumes(p), []);
  t.addVolume(p, 'v4');
  t.removeVolume(p, 'v5');
  assert.deepEqual(trackedVolumes(p), ['v4']);
  t.removeVolume(p, 'v4');
  assert.deepEqual(trackedVolumes(p), []);
  assert.equal(t.get('uid-1'), p);
});

it('setClaims hands back the pod key it stored (for the tracked pod to share), and nothing when the claims did not change', () => {
  const t = new PodTracker();
  const built = ['ns', 'pod-with-a-long-name'].join('/');
  const stored = t.setClaims(built, 'ns', [{ claimName: 'c1' }]);
  assert.equal(stored, 'ns/pod-with-a-long-name');
  assert.deepEqual(t.podsOfClaim('ns/c1'), ['ns/pod-with-a-long-name']);
  assert.equal(t.setClaims(built, 'ns', [{ claimName: 'c1' }]), undefined, 'unchanged: nothing stored');
  assert.equal(t.setClaims(built, 'ns', [{ claimName: 'c2' }]), 'ns/pod-with-a-long-name', 'changed: stored anew');
  assert.deepEqual(t.podsOfClaim('ns/c1'), []);
  assert.equal(t.setClaims(built, 'ns', [{}]), undefined, 'no claims: nothing stored');
});
