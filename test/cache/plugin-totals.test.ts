// Per-plugin totals (O: attachdetach_controller_total_volumes), kept by WorldState as pairs change.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorldState, type WorldState } from '../../src/cache/world-state.js';

const EBS = 'kubernetes.io/csi:ebs.csi.aws.com';
const PD = 'kubernetes.io/csi:pd.csi.storage.gke.io';

function totals(state: WorldState): Record<string, { desired: number; actual: number }> {
  return Object.fromEntries(state.pluginTotals().map((r) => [r.plugin, { desired: r.desired, actual: r.actual }]));
}

/** A state with managed nodes of these names. */
function withNodes(...names: string[]): { state: WorldState; ids: number[] } {
  const state = createWorldState();
  const ids = names.map((n) => {
    const id = state.internNode(n);
    state.setNodeManaged(id);
    return id;
  });
  return { state, ids };
}

describe('WorldState per-plugin totals', () => {
  it('counts desired and actual (Attached or Uncertain) pairs under each volume plugin label', () => {
    const { state, ids: [a, b] } = withNodes('a', 'b');
    const v1 = state.internVolume('kubernetes.io/csi/ebs.csi.aws.com^vol-1');
    const v2 = state.internVolume('kubernetes.io/csi/pd.csi.storage.gke.io^disk-2');
    state.setVolumePlugin(v1, EBS);
    state.setVolumePlugin(v2, PD);
    state.addDesiredPod(v1, a, 'p1');
    state.addDesiredPod(v1, b, 'p2');
    state.addDesiredPod(v2, a, 'p3');
    state.markAttached(v1, a);
    state.markUncertain(v1, b);
    assert.deepEqual(totals(state), { [EBS]: { desired: 2, actual: 2 }, [PD]: { desired: 1, actual: 0 } });

    state.markAttached(v1, b); // Uncertain → Attached: still one actual pair
    state.removeDesiredPod(v1, b, 'p2');
    state.markDetached(v1, b);
    assert.deepEqual(totals(state), { [EBS]: { desired: 1, actual: 1 }, [PD]: { desired: 1, actual: 0 } });

    state.removeDesiredPod(v2, a, 'p3');
    assert.deepEqual(totals(state), { [EBS]: { desired: 1, actual: 1 } }, 'a label with no pairs has no row');
  });

  it('leaves a volume without a spec uncounted until it gets a label, then moves its pairs there', () => {
    const { state, ids: [a] } = withNodes('a');
    // Loaded from node status at start-up (A2): attached, no spec, no label.
    const v = state.internVolume('kubernetes.io/csi/ebs.csi.aws.com^vol-9');
    state.markAttached(v, a);
    assert.deepEqual(totals(state), {});
    // A pod resolves it (A4): the label takes the pair with it.
    state.addDesiredPod(v, a, 'p1');
    state.setVolumePlugin(v, EBS);
    assert.deepEqual(totals(state), { [EBS]: { desired: 1, actual: 1 } });
    // A changed spec (e.g. migration) moves the volume to its new label.
    state.setVolumePlugin(v, PD);
    assert.deepEqual(totals(state), { [PD]: { desired: 1, actual: 1 } });
  });

  it('drops the label with the volume id, so a recycled id starts uncounted', () => {
    const { state, ids: [a] } = withNodes('a');
    const v = state.internVolume('kubernetes.io/csi/ebs.csi.aws.com^vol-1');
    state.setVolumePlugin(v, EBS);
    state.addDesiredPod(v, a, 'p1');
    state.removeDesiredPod(v, a, 'p1'); // the last pair goes, and the id with it
    assert.equal(state.findVolume('kubernetes.io/csi/ebs.csi.aws.com^vol-1'), undefined);
    const w = state.internVolume('kubernetes.io/csi/ebs.csi.aws.com^vol-2');
    assert.equal(w, v, 'the id is recycled');
    state.markAttached(w, a);
    assert.deepEqual(totals(state), {});
  });
});
