/**
 * A controller restart (A1–A6, Q5): the new controller rebuilds the actual state from node
 * status (Attached) and VolumeAttachments (Uncertain), creates no second VolumeAttachment,
 * detaches nothing still desired, and detaches what stopped being desired while it was down.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  attachVa, attachVolume, createVolumeAndPod, neverDuringPasses, node, recordVolumeAttachments, startControllerOn, startHarness, uniqueName,
  vaExists, vaLive, vaName, volumesAttached, waitFor,
} from './harness.js';
import type { Controller } from '../../src/manager/controller.js';

test('a restarted controller creates no duplicate VolumeAttachment, keeps what is desired and detaches what is not (A2, A3, A5, Q5)', async () => {
  const h = await startHarness();
  let ctl2: Controller | undefined;
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    const vaKept = await attachVolume(h.sim, 'k1', { mounted: true }); // attached, listed, mounted
    const vaGone = await attachVolume(h.sim, 'k3'); // attached, listed, unmounted
    createVolumeAndPod(store, 'default', 'k2'); // VA created, attacher not done yet
    const vaPending = vaName('k2', 'node-a');
    await waitFor('VA of k2', () => vaExists(h.sim, vaPending));
    await h.ctl.stop();

    // While no controller runs: k3's pod, claim and PV go (so only node status knows it, A5);
    // the attacher finishes nothing.
    store.delete('pods', 'default', 'pod-k3', { gracePeriodSeconds: 0 });
    store.delete('persistentvolumeclaims', 'default', 'pvc-k3');
    store.delete('persistentvolumes', undefined, 'pv-k3');
    const vas = recordVolumeAttachments(h.sim);
    let k1Unlisted = false;
    const unsub = store.subscribe((ev) => {
      if (ev.resource === 'nodes' && !volumesAttached(h.sim, 'node-a').includes(uniqueName('k1'))) k1Unlisted = true;
    });
    ctl2 = await startControllerOn(h.sim);
    await ctl2.acting();
    // A2 + A5: k3 is known from node status only (no pod, no PV) and detached by its unique name.
    await waitFor('VA of the undesired volume deleted', () => !vaExists(h.sim, vaGone));
    assert.deepEqual(volumesAttached(h.sim, 'node-a'), [uniqueName('k1')]);
    await neverDuringPasses(ctl2, 'a desired volume detached or a VA re-created', () => !vaLive(h.sim, vaKept) || !vaLive(h.sim, vaPending) || vas.created() > 0, 10);
    // A3: k2 was Uncertain; its attach resumes on the existing VA.
    attachVa(h.sim, vaPending);
    await waitFor('k2 reported once attached', () => volumesAttached(h.sim, 'node-a').includes(uniqueName('k2')));
    unsub();
    vas.stop();
    assert.equal(vas.created(), 0, 'no VolumeAttachment created after the restart');
    assert.deepEqual(vas.log.map((e) => `${e.type}:${e.handle}`), ['removed:k3']);
    assert.equal(k1Unlisted, false, 'k1 stayed in node status throughout');
  } finally {
    await ctl2?.stop();
    await h.stop();
  }
});
