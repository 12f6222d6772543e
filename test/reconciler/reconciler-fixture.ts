// What the reconciler tests share: the dependencies none of them watches, and an executor that
// refuses every operation quietly (as if in backoff) unless a test overrides the calls it watches.
import { createFakeEventRecorder } from '../../src/events/fake-event-recorder.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import type { OperationExecutor } from '../../src/operations/operation-executor.js';
import type { VolumePluginManager } from '../../src/plugins/index.js';
import { createFakeNodeStatusUpdater } from '../../src/statusupdater/fake-node-status-updater.js';

/** Fakes for status writes and events, metrics without process metrics, upstream's timers, no verification. */
export function quietReconcilerDeps() {
  return {
    statusUpdater: createFakeNodeStatusUpdater(),
    events: createFakeEventRecorder(),
    metrics: createControllerMetrics({ processMetrics: false }),
    podName: () => undefined,
    verify: { plugins: {} as VolumePluginManager },
    maxWaitForUnmountMs: 360_000,
    disableForceDetachOnTimeout: false,
    syncPeriodMs: 60_000,
    disableSync: true,
  };
}

export function refusingExecutor(calls: Partial<Pick<OperationExecutor, 'startAttach' | 'startDetach' | 'checkDetachable'>> = {}): OperationExecutor {
  return { startAttach: () => 'backoff', startDetach: () => 'backoff', checkDetachable: () => true, mayStartOn: () => true, inFlight: () => 0, idle: async () => {}, close() {}, ...calls };
}
