/**
 * The `/api/v1/dashboard` answer (and the stream's `summary` event): tiles, counts by reason,
 * the wait-age histogram and controller health. O(1) over the state's counters plus
 * O(reasons + watches); the not-converged numbers are those of the index's last sweep.
 */
import type { WorldState } from '../cache/world-state.js';
import type { InspectionView } from '../http/inspection-view.js';
import type { DashboardSummary } from '../http/schemas/dashboard.js';
import type { DashboardModel } from './dashboard-model.js';
import { REASONS } from './reason-codes.js';

export function dashboardSummary(state: WorldState, view: InspectionView, model: DashboardModel): DashboardSummary {
  const c = state.counts();
  const nc = view.nodeConditionCounts();
  const snap = model.index.snapshot();
  const r = view.readiness();
  const forced = model.forcedDetachesLastHour();
  const byReason: DashboardSummary['byReason'] = [];
  for (const reason of REASONS) {
    const b = snap.byReason[reason.code];
    if (b.count === 0) continue;
    byReason.push(b.oldestSince === undefined ? { code: reason.code, side: reason.side, count: b.count } : { code: reason.code, side: reason.side, count: b.count, oldestSince: b.oldestSince });
  }
  byReason.sort((a, b) => b.count - a.count);
  const tiles: DashboardSummary['tiles'] = {
    nodes: { total: c.managedNodes, ready: nc.healthy, notReady: Math.max(0, c.managedNodes - nc.healthy), outOfService: nc.outOfService },
    desiredPairs: c.desiredPairs,
    attached: c.attached,
    notConverged: { total: snap.items.length, attach: snap.attach, detach: snap.detach },
    conflicts: c.conflicts,
    operations: { running: c.pendingOperations, backoff: c.backoffOperations },
    forcedDetachesLastHour: { timeout: forced.timeout, outOfService: forced['out-of-service'] },
  };
  if (snap.oldestSince !== undefined) tiles.oldestWaitSince = snap.oldestSince;
  const timing = (w: InspectionView['loop']['pass']) => ({ p50Ms: w.percentile(0.5), p99Ms: w.percentile(0.99) });
  return {
    now: model.now(),
    version: snap.version,
    tiles,
    byReason,
    ageHistogram: { ...snap.histogram },
    health: {
      ready: r.ready,
      role: r.role,
      loop: { pass: timing(view.loop.pass), plan: timing(view.loop.plan) },
      apiClient: view.apiClient(),
      watches: view.watches().map((w) => (w.lastEventAgeMs === undefined
        ? { resource: w.resource, synced: w.synced, relists: w.relists }
        : { resource: w.resource, synced: w.synced, relists: w.relists, lastEventAgeMs: w.lastEventAgeMs })),
      sweep: { sweptAt: snap.sweptAt, sweepMs: round1(snap.sweepMs), maxSliceMs: round1(snap.maxSliceMs), pairsSeen: snap.pairsSeen },
    },
  };
}

function round1(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/**
 * The summary's change key for the stream: everything but `now`, the sweep's timing and the
 * watches' event ages, which move every second whatever the fleet does.
 */
export function summaryChangeKey(s: DashboardSummary): string {
  const { now: _now, health, ...rest } = s;
  const { sweep: _sweep, watches, ...h } = health;
  return JSON.stringify({ ...rest, health: { ...h, watches: watches.map(({ lastEventAgeMs: _age, ...w }) => w) } });
}
