/**
 * Periodic verification (M1, M2, L6): a VolumeAttachment deleted behind the controller's back
 * while still desired is noticed within the sync period, dropped from node status and
 * re-created; with the sync disabled nothing notices.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controllerNow } from '../../src/cache/controller-clock.js';
import {
  attachVa, attachVolume, histogramCount, neverDuringPasses, node, recordVolumeAttachments, startHarness, uniqueName, vaExists, volumesAttached, waitFor,
  type Harness,
} from './harness.js';

/** Removes the VA from the store as an admin would (finalizers cleared, then deleted). */
function deleteBehindTheControllersBack(h: Harness, va: string): void {
  h.sim.store.mutate('volumeattachments', undefined, va, (o) => {
    o.metadata.finalizers = [];
  });
  h.sim.store.delete('volumeattachments', undefined, va);
}

test('a desired VolumeAttachment deleted behind the controller is re-created by the periodic verification (M1, M2)', async () => {
  const h = await startHarness({ reconcileSyncPeriodMs: 1000 });
  try {
    h.sim.store.create('nodes', node('node-a'));
    const va = await attachVolume(h.sim, 's1', { mounted: true });
    const vas = recordVolumeAttachments(h.sim);
    deleteBehindTheControllersBack(h, va);
    assert.equal(vaExists(h.sim, va), false);
    await waitFor('VA re-created', () => vas.created('s1') === 1, 10_000);
    // M2: the entry left the actual state, so node status no longer lists it until re-attached.
    await waitFor('dropped from node status', () => !volumesAttached(h.sim, 'node-a').includes(uniqueName('s1')));
    attachVa(h.sim, va);
    await waitFor('reported again', () => volumesAttached(h.sim, 'node-a').includes(uniqueName('s1')));
    vas.stop();
    // What the periodic passes cost is exported per pass: the verification that noticed, and the
    // populator's C9 and C10 passes (1 s and 3 s in the harness).
    const PASS = 'fleet_attach_periodic_pass_busy_seconds';
    await waitFor('periodic passes observed', async () => (await histogramCount(h.ctl, PASS, { pass: 'pods-listed' })) >= 1, 10_000);
    assert.ok((await histogramCount(h.ctl, PASS, { pass: 'verify' })) >= 1);
    assert.ok((await histogramCount(h.ctl, PASS, { pass: 'pods-removed' })) >= 1);
    // J4: upstream's per-node series, one observation per node with an attached volume per walk.
    const perNode = { volume_plugin: '<n/a>', operation_name: 'verify_volumes_are_attached_per_node', status: 'success', migrated: 'false' };
    assert.ok((await histogramCount(h.ctl, 'storage_operation_duration_seconds', perNode)) >= 1);
  } finally {
    await h.stop();
  }
});

test('with the sync disabled, a deleted VolumeAttachment is not noticed (M1)', async () => {
  const h = await startHarness({ reconcileSyncPeriodMs: 1000, disableReconcileSync: true });
  try {
    h.sim.store.create('nodes', node('node-a'));
    const va = await attachVolume(h.sim, 's2', { mounted: true });
    deleteBehindTheControllersBack(h, va);
    // Two sync periods by the controller's clock (the one its verification is timed on), then more passes.
    const deletedAt = controllerNow();
    await neverDuringPasses(h.ctl, 'VA re-created without the sync', () => vaExists(h.sim, va), 10, { after: () => controllerNow() - deletedAt > 2 * 1000 });
    assert.equal(await histogramCount(h.ctl, 'fleet_attach_periodic_pass_busy_seconds', { pass: 'verify' }), 0, 'no verification ran');
    assert.deepEqual(volumesAttached(h.sim, 'node-a'), [uniqueName('s2')], 'stale, as upstream with the sync off');
  } finally {
    await h.stop();
  }
});
