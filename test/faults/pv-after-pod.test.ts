/**
 * Liveness finding of the soak: a pod whose PV reaches the controller after the pod and its
 * claim (separate watches, reordered by drops and latency) was not attached until the periodic
 * full pod pass, since only PVC events re-processed pods (upstream C8: PV events trigger
 * nothing; upstream's pass runs every 3 minutes). The populator now also re-processes the pods
 * of the claims bound to a PV when the PV arrives; here the full pass is 10 minutes away.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { node, reflectorOf, startHarness, vaExists, vaName, volumeObjects, waitFor } from '../controller/harness.js';

test('a PV that arrives after its claim and pod gets its volume attached without waiting for the full pod pass', { timeout: 30_000 }, async () => {
  const h = await startHarness({ dswListPodsPeriodMs: 600_000, dswPopulatorPeriodMs: 600_000 });
  try {
    h.sim.store.create('nodes', node('node-a'));
    await h.ctl.acting();
    const v = volumeObjects('default', 'late', { nodeName: 'node-a' });
    const pvc = h.sim.store.create('persistentvolumeclaims', v.pvc);
    ((v.pv.spec as { claimRef: { uid?: string } }).claimRef).uid = pvc.metadata.uid;
    h.sim.store.create('pods', v.pod);
    // Both the claim and the pod reached the controller (and the start-up fill, A4, is done)
    // before the PV exists.
    await waitFor('claim and pod seen', () => reflectorOf(h.ctl, 'persistentvolumeclaims').get('default/pvc-late') && reflectorOf(h.ctl, 'pods').get('default/pod-late'));
    assert.equal(vaExists(h.sim, vaName('late', 'node-a')), false);
    h.sim.store.create('persistentvolumes', v.pv);
    await waitFor('a VolumeAttachment for the pod', () => vaExists(h.sim, vaName('late', 'node-a')), 5000);
    assert.ok(vaExists(h.sim, vaName('late', 'node-a')));
  } finally {
    await h.stop();
  }
});
