/**
 * The controller's InspectionView (src/http/inspection-view.ts): what the inspection API reads
 * beyond the world state. Every method is a read over indexes the controller keeps anyway.
 */
import type { InspectionView, WatchHealth } from '../http/inspection-view.js';
import type { Controller } from './controller.js';
import type { ControllerOptions } from './controller-options.js';
import { controllerNow } from '../cache/controller-clock.js';

/** Passes failing in a row (about a second at the default period) before readiness fails. */
export const FAILING_PASSES_NOT_READY = 10;

export function createInspectionView(ctl: Controller, o: Pick<ControllerOptions, 'maxWaitForUnmountMs' | 'disableForceDetachOnTimeout' | 'kubeApiMaxInFlight' | 'maxApiBacklog'>): InspectionView {
  const { state } = ctl;
  return {
    readiness() {
      const r = ctl.ready();
      const role = ctl.role();
      // A loop whose every pass fails (a broken plan kernel or its workers) acts on nothing;
      // the controller's own reason (syncing, filling, must restart) comes first.
      const failing = ctl.reconciler.failingPasses();
      if (r.ready && failing.count >= FAILING_PASSES_NOT_READY) {
        return { ready: false, reason: `the last ${failing.count} reconcile passes failed: ${failing.lastError ?? 'unknown error'}`, role };
      }
      return r.reason ? { ready: r.ready, reason: r.reason, role } : { ready: r.ready, role };
    },
    loop: { pass: ctl.reconciler.passTime, plan: ctl.reconciler.planTime },
    watches(): WatchHealth[] {
      const now = controllerNow();
      return ctl.reflectors.map((r) => {
        const s = r.stats();
        const at = s.lastEventAt;
        return { resource: s.resource, synced: s.synced, events: s.events, relists: s.relists, restarts: s.restarts, ...(at !== undefined ? { lastEventAgeMs: Math.max(0, now - at) } : {}) };
      });
    },
    volumesForPv: (pv) => ctl.populator.volumesForPv(pv),
    podName: (uid) => ctl.populator.podName(uid),
    pendingOperation: (volume, node) => state.pendingOperationFor(volume, node),
    backoff(volume, node, now) {
      if (state.isSafeToRetry(volume, node, 'attach', now) && state.isSafeToRetry(volume, node, 'detach', now)) return [];
      return state.backoffFor(volume, node, now);
    },
    nodeConditionCounts: () => ctl.conditions.counts(),
    apiClient() {
      const b = ctl.api.backlog();
      return { inFlight: b.inFlight, waiting: b.waiting, maxInFlight: o.kubeApiMaxInFlight, admissionBound: o.maxApiBacklog };
    },
    now: controllerNow,
    options: { maxWaitForUnmountMs: o.maxWaitForUnmountMs, disableForceDetachOnTimeout: o.disableForceDetachOnTimeout },
  };
}
