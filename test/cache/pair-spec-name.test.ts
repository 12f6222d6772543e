// Each desired (volume, node) entry keeps the spec name of the pod that created it, as upstream's
// DSW keeps the spec per entry (§C): later pods of the entry do not change it, an entry created
// again takes its new first pod's name, and entries of one volume may differ (two PVs with one
// CSI handle). Names equal to the volume's first cost no per-pair entry.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';

function setup() {
  const state = createWorldState({ capacity: { nodes: 16, volumes: 16, pairs: 64 } });
  const nodes = ['node-1', 'node-2', 'node-3'].map((name) => {
    const n = state.internNode(name);
    state.setNodeManaged(n);
    return n;
  });
  return { state, nodes, v: state.internVolume('kubernetes.io/csi/d^shared') };
}

it('an entry keeps the spec name its first pod gave it; entries of one volume may differ', () => {
  const { state, nodes: [n1, n2, n3], v } = setup();
  assert.equal(state.addDesiredPod(v, n1, 'pod-a', 'pv1'), 'added');
  assert.equal(state.addDesiredPod(v, n2, 'pod-b', 'pv2'), 'added');
  assert.equal(state.addDesiredPod(v, n3, 'pod-c', 'pv1'), 'added');
  assert.equal(state.specName(v, n1), 'pv1');
  assert.equal(state.specName(v, n2), 'pv2');
  assert.equal(state.specName(v, n3), 'pv1');
  // A later pod of the entry, whatever PV it came through, leaves the entry's name.
  assert.equal(state.addDesiredPod(v, n2, 'pod-b2', 'pv1'), 'added');
  assert.equal(state.specName(v, n2), 'pv2');
  // The first pod leaves, the entry stays: still its name.
  assert.ok(state.removeDesiredPod(v, n2, 'pod-b'));
  assert.equal(state.specName(v, n2), 'pv2');
  // The entry goes and comes back through another pod: that pod's name.
  assert.ok(state.removeDesiredPod(v, n2, 'pod-b2'));
  assert.equal(state.specName(v, n2), undefined, 'no entry, no name');
  assert.equal(state.addDesiredPod(v, n2, 'pod-d', 'pv3'), 'added');
  assert.equal(state.specName(v, n2), 'pv3');
  // The first entry's going changes no other entry's name.
  assert.ok(state.removeDesiredPod(v, n1, 'pod-a'));
  assert.equal(state.specName(v, n3), 'pv1');
  assert.equal(state.specName(v, n2), 'pv3');
});

it('an actual-only pair has no name; a freed volume id starts without one', () => {
  const { state, nodes: [n1, n2], v } = setup();
  state.markAttached(v, n1);
  assert.equal(state.specName(v, n1), undefined);
  state.addDesiredPod(v, n1, 'pod-a', 'pv1');
  state.removeDesiredPod(v, n1, 'pod-a');
  assert.equal(state.specName(v, n1), undefined, 'attached, not desired');
  state.markDetached(v, n1); // the last pair goes: the id is freed
  assert.equal(state.findVolume('kubernetes.io/csi/d^shared'), undefined);
  const again = state.internVolume('kubernetes.io/csi/d^shared');
  state.addDesiredPod(again, n2, 'pod-b', 'pv2');
  assert.equal(state.specName(again, n2), 'pv2');
  state.addDesiredPod(again, n1, 'pod-c', 'pv2');
  assert.equal(state.specName(again, n1), 'pv2');
});

it('an entry created without a name reads its volume\'s first name', () => {
  const { state, nodes: [n1, n2], v } = setup();
  state.addDesiredPod(v, n1, 'pod-a');
  assert.equal(state.specName(v, n1), undefined);
  state.addDesiredPod(v, n2, 'pod-b', 'pv2');
  assert.equal(state.specName(v, n2), 'pv2');
  assert.equal(state.specName(v, n1), 'pv2');
});
