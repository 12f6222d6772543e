// The start-up fill (A4 beside the loop): while the desired state is being filled, a pass starts
// attaches but no detach, starts no detach timer, and reports no Multi-Attach conflict; once the
// fill has ended the next pass does all three.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { createFakeEventRecorder } from '../../src/events/fake-event-recorder.js';
import { createPlanner } from '../../src/kernel/planner.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import type { OperationExecutor } from '../../src/operations/operation-executor.js';
import type { VolumePluginManager } from '../../src/plugins/index.js';
import { createReconciler } from '../../src/reconciler/reconciler.js';
import { createFakeNodeStatusUpdater } from '../../src/statusupdater/fake-node-status-updater.js';

test('while filling, a pass attaches only; after the fill it detaches and reports conflicts', async () => {
  const state = createWorldState();
  const node = (name: string) => {
    const n = state.internNode(name);
    state.setNodeManaged(n);
    state.setNodeHealthy(n, true);
    state.setVolumesInUse(n, []); // nothing mounted: a detach would go ahead at once
    return n;
  };
  const a = node('node-a');
  const b = node('node-b');
  // Attached to a, its pod not added yet: a detach candidate only if the pod were gone.
  const unknown = state.internVolume('csi/vol-unknown');
  state.markAttached(unknown, a);
  // Wanted on a, not attached: an attach.
  const wanted = state.internVolume('csi/vol-wanted');
  state.addDesiredPod(wanted, a, 'uid-wanted');
  // ReadWriteOnce, attached to a, wanted on b: a Multi-Attach conflict.
  const rwo = state.internVolume('csi/vol-rwo');
  state.setMultiAttachForbidden(rwo, true);
  state.markAttached(rwo, a);
  state.addDesiredPod(rwo, a, 'uid-rwo-a');
  state.addDesiredPod(rwo, b, 'uid-rwo-b');

  const attaches: string[] = [];
  const detaches: string[] = [];
  const executor: OperationExecutor = {
    startAttach(volume, n) {
      attaches.push(`${state.volumeName(volume)}@${state.nodeName(n)}`);
      return state.tryStartOperation(volume, n, 'attach', 0);
    },
    startDetach(volume, n) {
      detaches.push(`${state.volumeName(volume)}@${state.nodeName(n)}`);
      return state.tryStartOperation(volume, n, 'detach', 0);
    },
    inFlight: () => 0, idle: async () => {}, close() {},
  };
  const events = createFakeEventRecorder();
  let filling = true;
  const planner = createPlanner({ state, workers: 0 });
  const reconciler = createReconciler({
    state, planner, executor, events,
    statusUpdater: createFakeNodeStatusUpdater(),
    metrics: createControllerMetrics({ processMetrics: false }),
    podName: (uid) => ({ namespace: 'fleet', name: uid }),
    verify: { plugins: {} as VolumePluginManager },
    filling: () => filling,
    loopPeriodMs: 100, maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false, syncPeriodMs: 60_000, disableSync: true,
  });
  try {
    await reconciler.runOnce();
    assert.deepEqual(attaches, ['csi/vol-wanted@node-a']);
    assert.deepEqual(detaches, [], 'a detach while the desired state was partial');
    assert.equal(state.detachRequestedAt(unknown, a), null, 'a detach timer started while the desired state was partial');
    assert.equal(events.events.length, 0, 'a Multi-Attach report while the pods holding the volume may not be known');
    assert.equal(state.pair(rwo, b)?.multiAttachErrorReported, false);

    filling = false; // the fill ended without adding a pod for vol-unknown: it is not wanted
    await reconciler.runOnce();
    assert.deepEqual(detaches, ['csi/vol-unknown@node-a']);
    assert.equal(events.events.length, 1);
    assert.equal(events.events[0]!.pod.name, 'uid-rwo-b');
    assert.match(events.events[0]!.message, /uid-rwo-a/);
  } finally {
    await planner.close();
  }
});
