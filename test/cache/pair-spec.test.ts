// Each desired (volume, node) entry keeps the spec its first pod gave it (§C), the spec its
// attach sends (J1, L2): entries of one volume may hold different specs (two PVs with one CSI
// handle), and only an entry whose spec is not its volume's first (by value) costs a map
// entry; the entries of a volume that all share one spec cost nothing per pair.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createWorldState, type WorldState } from '../../src/cache/world-state.js';
import type { WorldCore } from '../../src/cache/world-core.js';
import type { VolumeSpec } from '../../src/plugins/volume-spec.js';
import { volumeInfoFor } from '../../src/populator/volume-info.js';

const coreOf = (state: WorldState) => (state as unknown as { core: WorldCore }).core;

function setup(nodeCount = 3) {
  const state = createWorldState({ capacity: { nodes: 16, volumes: 16, pairs: 64 } });
  const nodes = Array.from({ length: nodeCount }, (_, i) => {
    const n = state.internNode(`node-${i + 1}`);
    state.setNodeManaged(n);
    return n;
  });
  return { state, core: coreOf(state), nodes, v: state.internVolume('kubernetes.io/csi/d^shared') };
}

const spec = (name: string) => ({ name, origin: 'pv', source: { type: 'csi', driver: 'd', volumeHandle: 'shared' } });

it('entries sharing their volume\'s spec cost no per-pair entry', () => {
  const { state, core, nodes, v } = setup(8);
  const s = spec('pv1');
  nodes.forEach((n, i) => assert.equal(state.addDesiredPod(v, n, `pod-${i}`, s), 'added'));
  assert.equal(core.records.pairSpecs.size, 0);
  for (const n of nodes) {
    assert.deepEqual(state.desiredSpec(v, n), s, 'the spec given');
    assert.equal(state.specName(v, n), 'pv1');
  }
});

it('an entry created with another spec keeps it; its going drops it; the others keep theirs', () => {
  const { state, core, nodes: [n1, n2, n3], v } = setup();
  const s1 = spec('pv1');
  const s2 = spec('pv2');
  state.addDesiredPod(v, n1, 'pod-a', s1);
  state.addDesiredPod(v, n2, 'pod-b', s2);
  state.addDesiredPod(v, n3, 'pod-c', s1);
  assert.equal(core.records.pairSpecs.size, 1, 'only node-2\'s entry differs');
  assert.deepEqual(state.desiredSpec(v, n1), s1);
  assert.deepEqual(state.desiredSpec(v, n2), s2);
  assert.deepEqual(state.desiredSpec(v, n3), s1);
  assert.equal(state.specName(v, n2), 'pv2');
  // A later pod of node-2's entry, whatever its spec, leaves the entry's spec.
  state.addDesiredPod(v, n2, 'pod-b2', s1);
  assert.deepEqual(state.desiredSpec(v, n2), s2);
  // The entry's first pod leaves, the entry stays: still its spec.
  state.removeDesiredPod(v, n2, 'pod-b');
  assert.deepEqual(state.desiredSpec(v, n2), s2);
  // The entry goes: its map entry goes with it, and a new one takes its new first pod's spec.
  state.removeDesiredPod(v, n2, 'pod-b2');
  assert.equal(state.desiredSpec(v, n2), undefined);
  assert.equal(core.records.pairSpecs.size, 0);
  state.addDesiredPod(v, n2, 'pod-d', s1);
  assert.deepEqual(state.desiredSpec(v, n2), s1);
  assert.equal(core.records.pairSpecs.size, 0);
});

it('"another spec" is by value: an equal but distinct object is the volume\'s, a bare name is not', () => {
  const { state, core, nodes: [n1, n2, n3], v } = setup();
  const s1 = spec('pv1');
  state.addDesiredPod(v, n1, 'pod-a', s1);
  state.addDesiredPod(v, n2, 'pod-b', spec('pv1'));
  assert.deepEqual(state.desiredSpec(v, n2), s1);
  assert.equal(core.records.pairSpecs.size, 0);
  state.addDesiredPod(v, n3, 'pod-c', 'pv1');
  assert.equal(state.desiredSpec(v, n3), 'pv1');
  assert.equal(state.specName(v, n3), 'pv1');
  assert.equal(core.records.pairSpecs.size, 1);
});

it('the volume\'s entry spec outlives a change of the info\'s spec', () => {
  const { state, nodes: [n1, n2], v } = setup();
  const full = (name: string): VolumeSpec => ({ ...spec(name), accessModes: ['ReadWriteOnce'], readOnly: false, migrated: false } as VolumeSpec);
  const unique = 'kubernetes.io/csi/d^shared';
  state.setVolumeInfo(v, volumeInfoFor(unique, full('pv1'), 'kubernetes.io/csi'));
  state.addDesiredPod(v, n1, 'pod-a', full('pv1'));
  state.setVolumeInfo(v, volumeInfoFor(unique, full('pv2'), 'kubernetes.io/csi'));
  assert.deepEqual(state.desiredSpec(v, n1), full('pv1'), 'the entry keeps the spec it was created with');
  state.addDesiredPod(v, n2, 'pod-b', full('pv2'));
  assert.deepEqual(state.desiredSpec(v, n2), full('pv2'));
  assert.deepEqual(state.volumeInfo(v), volumeInfoFor(unique, full('pv2'), 'kubernetes.io/csi'));
});

it('an actual-only pair has no spec; a freed volume id starts without one', () => {
  const { state, core, nodes: [n1, n2], v } = setup();
  const s1 = spec('pv1');
  state.addDesiredPod(v, n1, 'pod-a', s1);
  state.markAttached(v, n1);
  state.removeDesiredPod(v, n1, 'pod-a');
  assert.equal(state.desiredSpec(v, n1), undefined, 'attached, not desired');
  state.markDetached(v, n1); // the last pair goes: the id is freed
  assert.equal(state.findVolume('kubernetes.io/csi/d^shared'), undefined);
  const again = state.internVolume('kubernetes.io/csi/d^shared');
  assert.equal(core.records.hasBaseSpec(again), false, 'no spec left from the freed id');
  const s2 = spec('pv2');
  state.addDesiredPod(again, n2, 'pod-b', s2);
  assert.deepEqual(state.desiredSpec(again, n2), s2);
  assert.equal(core.records.pairSpecs.size, 0, 'the new first spec is the volume\'s');
});
