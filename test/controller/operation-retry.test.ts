/**
 * Failing operations. Attach (I3, J1, J2, L3, R1): each failed attempt is reported to the pod,
 * retried on the same VolumeAttachment after a backoff that grows, never reported in node
 * status; once the attacher succeeds, the volume is reported and the pod told so. Detach (J3,
 * L4): a detachError fails the detach, which is retried until the VolumeAttachment is gone;
 * the volume stays out of node status and no event is emitted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  attachVa, attachVolume, createVolumeAndPod, failVa, histogramCount, node, podEvents, recordVolumeAttachments, startHarness,
  uniqueName, vaExists, vaName, volumesAttached, waitFor,
} from './harness.js';
import { controllerNow } from '../../src/cache/controller-clock.js';
import type { BackoffEntry } from '../../src/cache/world-state.js';

test('attach failures are retried with a growing backoff on the same VolumeAttachment, each one reported to the pod (I3, J2, L3)', async () => {
  const h = await startHarness();
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    const vas = recordVolumeAttachments(h.sim);
    // Every write of the pod's FailedAttachVolume event (created, then its count patched), with
    // the backoff the controller had then set on the attach, on its own clock.
    const backoff = () => {
      const v = h.ctl.state.findVolume(uniqueName('e1'));
      const n = h.ctl.state.findNode('node-a');
      return v === undefined || n === undefined ? undefined : h.ctl.state.backoffFor(v, n, controllerNow()).find((b) => b.op === 'attach');
    };
    const failures: Array<{ count: number; message: string; backoff: BackoffEntry | undefined }> = [];
    const unsub = store.subscribe((ev) => {
      if (ev.resource !== 'events' || ev.type === 'DELETED') return;
      const e = ev.object() as unknown as { reason: string; message: string; count?: number; involvedObject: { name: string } };
      if (e.reason === 'FailedAttachVolume' && e.involvedObject.name === 'pod-e1') failures.push({ count: e.count ?? 1, message: e.message, backoff: backoff() });
    });
    createVolumeAndPod(store, 'default', 'e1');
    const va = vaName('e1', 'node-a');
    await waitFor('VA created', () => vaExists(h.sim, va));
    failVa(h.sim, va, 'injected attach failure');
    // 500 ms, 1 s, 2 s: four failures within ~4 s.
    await waitFor('four failed attempts', () => failures.length >= 4, 20_000);
    unsub();
    assert.deepEqual(failures.map((f) => f.count), [1, 2, 3, 4], 'one event write per failed attempt');
    for (const f of failures) assert.equal(f.message, 'AttachVolume.Attach failed for volume "pv-e1" : injected attach failure');
    // The backoff doubles from 500 ms, and each retry came once the one before had passed, by
    // the controller's clock.
    const windows = failures.map((f) => f.backoff);
    assert.ok(windows.every((b) => b !== undefined), 'a backoff after each failure');
    assert.deepEqual(windows.map((b) => b!.durationMs), [500, 1000, 2000, 4000], 'backoff grows');
    for (let i = 1; i < windows.length; i++) {
      assert.ok(windows[i]!.lastErrorAt >= windows[i - 1]!.retryAt, `attempt ${i + 1} failed at ${windows[i]!.lastErrorAt}, before its retry was allowed (${windows[i - 1]!.retryAt})`);
    }
    assert.deepEqual(volumesAttached(h.sim, 'node-a'), [], 'a failed attach is never reported (J2)');
    // The attacher recovers: the next retry succeeds on the same object.
    attachVa(h.sim, va);
    await waitFor('volume reported', () => volumesAttached(h.sim, 'node-a').includes(uniqueName('e1')), 20_000);
    await waitFor('SuccessfulAttachVolume event', () =>
      podEvents(h.sim, 'SuccessfulAttachVolume').find((e) => e.pod === 'pod-e1' && e.type === 'Normal' && e.message === 'AttachVolume.Attach succeeded for volume "pv-e1" '),
    );
    vas.stop();
    assert.equal(vas.created('e1'), 1, 'retries reuse the VolumeAttachment (R1)');
  } finally {
    await h.stop();
  }
});

test('a detach failing with detachError is retried until the VolumeAttachment is gone; the volume stays out of node status, no event (J3, L4)', async () => {
  const h = await startHarness();
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    const va = await attachVolume(h.sim, 'd1');
    store.mutate('volumeattachments', undefined, va, (o) => {
      o.metadata.finalizers = ['external-attacher/test-csi-fleet-attach-io'];
    });
    // Play the attacher: once deletion is requested, report a detach error and keep the finalizer.
    const unsub = store.subscribe((ev) => {
      if (ev.resource !== 'volumeattachments' || ev.name !== va || ev.type !== 'MODIFIED') return;
      const o = ev.object();
      if (o.metadata.deletionTimestamp && !(o.status as { detachError?: unknown } | undefined)?.detachError) {
        queueMicrotask(() => store.mutate('volumeattachments', undefined, va, (x) => {
          x.status = { attached: true, detachError: { message: 'injected detach failure' } };
        }));
      }
    });
    const failedDetaches = () => histogramCount(h.ctl, 'storage_operation_duration_seconds', { operation_name: 'volume_detach', status: 'fail-unknown' });
    store.delete('pods', 'default', 'pod-d1', { gracePeriodSeconds: 0 });
    await waitFor('three failed detach attempts', async () => (await failedDetaches()) >= 3, 15_000);
    unsub();
    assert.ok(vaExists(h.sim, va), 'VA still there (finalizer)');
    assert.deepEqual(volumesAttached(h.sim, 'node-a'), [], 'an Uncertain volume is never reported (J3, Q2)');
    // The attacher finishes: the next retry sees the VA gone.
    store.mutate('volumeattachments', undefined, va, (o) => {
      o.metadata.finalizers = [];
    });
    await waitFor('VA gone', () => !vaExists(h.sim, va));
    await waitFor('a successful detach', async () =>
      (await histogramCount(h.ctl, 'storage_operation_duration_seconds', { operation_name: 'volume_detach', status: 'success' })) === 1, 15_000);
    await waitFor('actual state empty', () => h.ctl.state.counts().attached + h.ctl.state.counts().uncertain === 0);
    assert.deepEqual(podEvents(h.sim).filter((e) => e.reason !== 'SuccessfulAttachVolume'), [], 'no events for detach');
  } finally {
    await h.stop();
  }
});
