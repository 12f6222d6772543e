/**
 * Invariant (a) against the two sequences the soak found, reduced to one volume each: a
 * ReadWriteOnce volume whose first attachment is Uncertain, after a restart with the first
 * node object gone (A3 loads VolumeAttachments as Uncertain) and after a failed detach (J3).
 * Upstream attaches elsewhere at once there (D7: only confirmed attachments block; waiting was
 * proposed in kubernetes/kubernetes#124334, closed unmerged); this controller waits for the
 * uncertain attachment to go, so no second VolumeAttachment may appear.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createInvariantChecker, type InvariantChecker } from '../../src/invariants/index.js';
import type { Controller } from '../../src/manager/controller.js';
import {
  attachVolume, neverDuringPasses, node, pod, setVolumesInUse, startHarness, startControllerOn, uniqueName, vaExists, vaName, waitFor, type Harness,
} from '../controller/harness.js';

/** Waits until the controller wants the volume on the node: the hold below is then the controller's choice, not a pod it has not seen. */
async function desiredOn(ctl: Controller, handle: string, nodeName: string): Promise<void> {
  await waitFor(`${handle} desired on ${nodeName}`, () => {
    const v = ctl.state.findVolume(uniqueName(handle));
    const n = ctl.state.findNode(nodeName);
    return v !== undefined && n !== undefined && (ctl.state.pair(v, n)?.desiredPods ?? 0) > 0;
  });
}

const MAX_WAIT = 60_000;

describe('multi-attach of a ReadWriteOnce volume whose first attachment is uncertain', () => {
  let h: Harness;
  let checker: InvariantChecker;
  let second: Controller | undefined;

  before(async () => {
    h = await startHarness({ maxWaitForUnmountMs: MAX_WAIT });
    for (const n of ['node-a', 'node-b']) h.sim.store.create('nodes', node(n));
    checker = createInvariantChecker({ store: h.sim.store, maxWaitForUnmountMs: MAX_WAIT });
  });
  after(async () => {
    checker.stop();
    await second?.stop();
    await h.stop();
  });

  it('after a restart, when the first node object is gone', async () => {
    const first = await attachVolume(h.sim, 'restart', { nodeName: 'node-a', mounted: true });
    await h.ctl.stop();
    // While no controller runs: node-a disappears, its pod is recreated on node-b.
    h.sim.store.delete('nodes', undefined, 'node-a');
    h.sim.store.delete('pods', 'default', 'pod-restart', { gracePeriodSeconds: 0 });
    h.sim.store.create('pods', pod('default', 'pod-restart', 'node-b', ['pvc-restart']));
    second = await startControllerOn(h.sim, { maxWaitForUnmountMs: MAX_WAIT });
    await second.acting();
    await desiredOn(second, 'restart', 'node-b');
    await neverDuringPasses(second, 'a VolumeAttachment on node-b while the one on node-a exists', () => vaExists(h.sim, vaName('restart', 'node-b')) && vaExists(h.sim, first), 20);
    assert.deepEqual(checker.violations().map((v) => v.kind), []);
  });

  it('after a detach that failed with status.detachError', async () => {
    const ctl = second ?? h.ctl;
    const vaA = await attachVolume(h.sim, 'detach', { nodeName: 'node-b', mounted: true });
    // The attacher's finalizer keeps the VA while the detach fails.
    h.sim.store.mutate('volumeattachments', undefined, vaA, (va) => { va.metadata.finalizers = ['external-attacher/test']; });
    h.sim.store.create('nodes', node('node-c'));
    h.sim.store.delete('pods', 'default', 'pod-detach', { gracePeriodSeconds: 0 });
    setVolumesInUse(h.sim, 'node-b', []);
    await waitFor('detach requested', () => h.sim.store.get('volumeattachments', undefined, vaA)?.metadata.deletionTimestamp);
    h.sim.store.mutate('volumeattachments', undefined, vaA, (va) => { va.status = { ...(va.status as object), detachError: { message: 'injected', time: new Date().toISOString() } }; });
    h.sim.store.create('pods', pod('default', 'pod-detach-2', 'node-c', ['pvc-detach']));
    await desiredOn(ctl, 'detach', 'node-c');
    await neverDuringPasses(ctl, 'a VolumeAttachment on node-c while the one on node-b is being deleted', () => vaExists(h.sim, vaName('detach', 'node-c')) && vaExists(h.sim, vaA), 20);
    assert.deepEqual(checker.violations().filter((v) => v.volume.endsWith('^detach')).map((v) => v.kind), []);
  });
});
