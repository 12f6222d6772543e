/** /api/v1/summary: O(1) counts plus loop timings and watch health. */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { DurationWindow } from '../../metrics/duration-window.js';
import { summarySchema, type Summary } from '../schemas/summary.js';
import type { RouteDeps } from './route-deps.js';

function timing(w: DurationWindow): Summary['loop']['pass'] {
  return { lastMs: w.last(), p50Ms: w.percentile(0.5), p99Ms: w.percentile(0.99), samples: w.size() };
}

export function summary(deps: RouteDeps): Summary {
  const { state, view } = deps;
  const c = state.counts();
  const r = view.readiness();
  const nc = view.nodeConditionCounts();
  return {
    ready: r.ready,
    role: r.role,
    nodes: { total: c.nodes, managed: c.managedNodes, healthy: nc.healthy, outOfService: nc.outOfService, statusUpdatesPending: c.statusUpdatesNeeded },
    volumes: c.volumes,
    pairs: { total: c.pairs, desired: c.desiredPairs, desiredAttached: c.desiredAttached, attached: c.attached, uncertain: c.uncertain, reportedAsAttached: c.reportedAttached },
    operations: { pending: c.pendingOperations, backoff: c.backoffOperations },
    conflicts: c.conflicts,
    loop: { pass: timing(view.loop.pass), plan: timing(view.loop.plan) },
    apiClient: view.apiClient(),
    watches: [...view.watches()],
  };
}

export const summaryRoutes: FastifyPluginCallbackTypebox<RouteDeps> = (app, deps, done) => {
  app.get('/api/v1/summary', { schema: summarySchema }, () => summary(deps));
  done();
};
