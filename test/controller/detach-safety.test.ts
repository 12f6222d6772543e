/**
 * The detach decision for volumes still mounted (F4–F11, P2): never on a healthy node, forced
 * after the max-wait timer on an unhealthy one (unless disabled), at once with the
 * out-of-service taint; the forced-detach counter by reason; a volume wanted again before its
 * detach is kept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FORCED_DETACHES, OUT_OF_SERVICE, addTaint, attachVolume, metricValue, neverDuringPasses, node, pod, recordVolumeAttachments, setNodeReady,
  setVolumesInUse, startHarness, uniqueName, vaExists, vaLive, volumesAttached, waitFor, type Harness,
} from './harness.js';
import { controllerNow } from '../../src/cache/controller-clock.js';

/**
 * Deletes the pod and waits until the controller's detach timer for the pair runs (D5); returns
 * when it started, by the controller's clock (the one its timer expires on).
 */
async function deletePodAndWaitForTimer(h: Harness, handle: string): Promise<number> {
  h.sim.store.delete('pods', 'default', `pod-${handle}`, { gracePeriodSeconds: 0 });
  return waitFor('detach timer started', () => detachRequestedAt(h, handle) ?? false);
}

/** When the controller's clock read at the first deletion request of VolumeAttachment `va` (undefined before it). */
function deletionRequestedAt(h: Harness, va: string): () => number | undefined {
  let at: number | undefined;
  h.sim.store.subscribe((ev) => {
    if (at === undefined && ev.resource === 'volumeattachments' && ev.name === va && (ev.type === 'DELETED' || ev.object().metadata.deletionTimestamp)) at = controllerNow();
  });
  return () => at;
}

function detachRequestedAt(h: Harness, handle: string, nodeName = 'node-a'): number | null {
  const v = h.ctl.state.findVolume(uniqueName(handle));
  const n = h.ctl.state.findNode(nodeName);
  return v === undefined || n === undefined ? null : h.ctl.state.detachRequestedAt(v, n);
}

/** Records, in commit order, the node-status write dropping the volume and the VA deletion. */
function recordStatusThenDelete(h: Harness, handle: string, va: string): string[] {
  const order: string[] = [];
  h.sim.store.subscribe((ev) => {
    if (ev.resource === 'nodes' && !order.includes('status') && !volumesAttached(h.sim, 'node-a').includes(uniqueName(handle))) order.push('status');
    if (ev.resource === 'volumeattachments' && ev.type === 'DELETED' && ev.name === va) order.push('va-deleted');
  });
  return order;
}

test('a mounted volume on a healthy node is never detached, even after the max-wait timer; unmounted, it is detached without the live check (F6, F9, F11)', async () => {
  const maxWait = 1000;
  const h = await startHarness({ maxWaitForUnmountMs: maxWait });
  try {
    h.sim.store.create('nodes', node('node-a'));
    const va = await attachVolume(h.sim, 'm1', { mounted: true });
    const started = await deletePodAndWaitForTimer(h, 'm1');
    // Passes after the timer expired by the controller's clock: the skip is F6, not a timer still running.
    await neverDuringPasses(h.ctl, 'detach of a mounted volume on a healthy node', () => !vaLive(h.sim, va), 10, {
      after: () => controllerNow() - started > maxWait,
    });
    assert.equal(detachRequestedAt(h, 'm1'), started, 'the same timer, expired');
    assert.deepEqual(volumesAttached(h.sim, 'node-a'), [uniqueName('m1')], 'still reported attached');
    assert.equal(await metricValue(h.ctl, FORCED_DETACHES, { reason: 'timeout' }), 0);
    // Unmounted after the timer: detached at once, and upstream counts it as forced (timeout).
    setVolumesInUse(h.sim, 'node-a', []);
    await waitFor('VA deleted once unmounted', () => !vaExists(h.sim, va));
    assert.equal(await metricValue(h.ctl, FORCED_DETACHES, { reason: 'timeout' }), 1);
    assert.equal(await metricValue(h.ctl, FORCED_DETACHES, { reason: 'out-of-service' }), 0);
  } finally {
    await h.stop();
  }
});

test('a mounted volume on a NotReady node is force-detached once the max-wait timer expires; status first; forced_detaches{reason="timeout"} (F5, F8, F11)', async () => {
  const maxWait = 1500;
  const h = await startHarness({ maxWaitForUnmountMs: maxWait });
  try {
    h.sim.store.create('nodes', node('node-a'));
    const va = await attachVolume(h.sim, 'f1', { mounted: true });
    setNodeReady(h.sim, 'node-a', false);
    await waitFor('controller sees the node NotReady', () => h.ctl.state.node(h.ctl.state.findNode('node-a')!)?.healthy === false);
    const order = recordStatusThenDelete(h, 'f1', va);
    const deleting = deletionRequestedAt(h, va);
    const started = await deletePodAndWaitForTimer(h, 'f1');
    await waitFor('VA deleted after the timer', () => !vaExists(h.sim, va), maxWait + 10_000);
    // By the controller's own clock, the detach came only once its timer had expired.
    const at = deleting();
    assert.ok(at !== undefined && at - started > maxWait, `detach requested ${at === undefined ? '?' : at - started} ms after the timer started`);
    assert.deepEqual(order, ['status', 'va-deleted']);
    assert.equal(await metricValue(h.ctl, FORCED_DETACHES, { reason: 'timeout' }), 1);
    assert.equal(await metricValue(h.ctl, FORCED_DETACHES, { reason: 'out-of-service' }), 0);
  } finally {
    await h.stop();
  }
});

test('the out-of-service taint detaches a mounted volume at once; forced_detaches{reason="out-of-service"} (F5, F6, F11)', async () => {
  const h = await startHarness(); // max wait stays 6 min: only the taint can explain a detach
  try {
    h.sim.store.create('nodes', node('node-a'));
    const va = await attachVolume(h.sim, 'o1', { mounted: true });
    setNodeReady(h.sim, 'node-a', false);
    await deletePodAndWaitForTimer(h, 'o1');
    await neverDuringPasses(h.ctl, 'detach before the taint', () => !vaLive(h.sim, va), 10);
    const order = recordStatusThenDelete(h, 'o1', va);
    addTaint(h.sim, 'node-a', OUT_OF_SERVICE);
    await waitFor('VA deleted after the taint', () => !vaExists(h.sim, va), 5000);
    assert.deepEqual(order, ['status', 'va-deleted']);
    assert.equal(await metricValue(h.ctl, FORCED_DETACHES, { reason: 'out-of-service' }), 1);
    assert.equal(await metricValue(h.ctl, FORCED_DETACHES, { reason: 'timeout' }), 0);
  } finally {
    await h.stop();
  }
});

test('disableForceDetachOnTimeout: a mounted volume on a NotReady node waits past the timer until the out-of-service taint (P2)', async () => {
  const maxWait = 1000;
  const h = await startHarness({ maxWaitForUnmountMs: maxWait, disableForceDetachOnTimeout: true });
  try {
    h.sim.store.create('nodes', node('node-a', { ready: false }));
    const va = await attachVolume(h.sim, 'p1', { mounted: true });
    const started = await deletePodAndWaitForTimer(h, 'p1');
    // Passes after the timer expired by the controller's clock.
    await neverDuringPasses(h.ctl, 'forced detach on timeout while disabled', () => !vaLive(h.sim, va), 10, {
      after: () => controllerNow() - started > maxWait,
    });
    assert.equal(detachRequestedAt(h, 'p1'), started, 'the same timer, expired');
    assert.equal(await metricValue(h.ctl, FORCED_DETACHES, { reason: 'timeout' }), 0);
    addTaint(h.sim, 'node-a', OUT_OF_SERVICE);
    await waitFor('VA deleted after the taint', () => !vaExists(h.sim, va), 5000);
    assert.equal(await metricValue(h.ctl, FORCED_DETACHES, { reason: 'out-of-service' }), 1);
    assert.equal(await metricValue(h.ctl, FORCED_DETACHES, { reason: 'timeout' }), 0);
  } finally {
    await h.stop();
  }
});

test('a volume wanted again on the same node before its detach is kept: timer reset, no detach, no new VolumeAttachment (D5, G2, Q4)', async () => {
  const maxWait = 1000;
  const h = await startHarness({ maxWaitForUnmountMs: maxWait });
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a', { ready: false })); // unhealthy: the timer alone would detach
    const va = await attachVolume(h.sim, 'q1', { mounted: true });
    const vas = recordVolumeAttachments(h.sim);
    const first = await deletePodAndWaitForTimer(h, 'q1');
    store.create('pods', pod('default', 'pod-q1b', 'node-a', ['pvc-q1']));
    await waitFor('timer reset by the new pod', () => detachRequestedAt(h, 'q1') === null);
    // Passes after the first timer would have expired by the controller's clock.
    await neverDuringPasses(h.ctl, 'detach of a volume wanted again', () => !vaLive(h.sim, va), 10, {
      after: () => controllerNow() - first > maxWait,
    });
    assert.equal(vas.created(), 0);
    assert.deepEqual(volumesAttached(h.sim, 'node-a'), [uniqueName('q1')]);
    // The new pod goes too: a fresh timer, so the forced detach comes a full max-wait after it.
    const deleting = deletionRequestedAt(h, va);
    store.delete('pods', 'default', 'pod-q1b', { gracePeriodSeconds: 0 });
    const fresh = await waitFor('a fresh detach timer', () => detachRequestedAt(h, 'q1') ?? false);
    assert.ok(fresh > first, 'a fresh timer');
    await waitFor('VA deleted after a fresh timer', () => !vaExists(h.sim, va), maxWait + 10_000);
    const at = deleting();
    assert.ok(at !== undefined && at - fresh > maxWait, `detach requested ${at === undefined ? '?' : at - fresh} ms after the fresh timer started`);
    vas.stop();
  } finally {
    await h.stop();
  }
});
