/**
 * The dashboard's JSON API (docs/dashboard.md): the reason vocabulary, the summary tiles, windows
 * of the not-converged pairs, history, a volume's timeline and name search. Reads only: the
 * index, history and timeline are the dashboard model's; pair rows are diagnosed at request time.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { dashboardSummary } from '../../dashboard/dashboard-summary.js';
import type { DashboardModel } from '../../dashboard/dashboard-model.js';
import { queryNotConverged } from '../../dashboard/not-converged-query.js';
import { REASONS } from '../../dashboard/reason-codes.js';
import { fleetError } from '../../errors/index.js';
import { nodeWindow } from '../node-view.js';
import { readContext } from '../pair-view.js';
import { DEFAULT_LIMIT } from '../schemas/common.js';
import { nodeWindowSchema } from '../schemas/nodes.js';
import { dashboardSchema, historySchema, notConvergedSchema, reasonsSchema, searchSchema, timelineResponse } from '../schemas/dashboard.js';
import { UniqueName } from '../schemas/volumes.js';
import type { RouteDeps } from './route-deps.js';

/** Names read at most per search (nodes, then volumes); past it the answer says `truncated`. */
export const SEARCH_SCAN_BUDGET = 200_000;

export const dashboardRoutes: FastifyPluginCallbackTypebox<RouteDeps> = (app, deps, done) => {
  const { state, view, dashboard } = deps;
  // Reading any of these keeps the not-converged index sweeping (its idleAfterMs).
  app.addHook('onRequest', (_request, _reply, done) => {
    dashboard.index.touch();
    done();
  });

  app.get('/api/v1/reasons', { schema: reasonsSchema }, () => ({ items: REASONS.map((r) => ({ ...r, rule: [...r.rule] })) }));

  app.get('/api/v1/dashboard', { schema: dashboardSchema }, () => dashboardSummary(state, view, dashboard));

  app.get('/api/v1/not-converged', { schema: notConvergedSchema }, (request) => {
    return queryNotConverged(readContext(state, view), dashboard.index.snapshot(), request.query);
  });

  app.get('/api/v1/history', { schema: historySchema }, (request) => {
    const { range = '15m', points = 600 } = request.query;
    const now = dashboard.now();
    return { now, ...dashboard.history.window(range, points, now) };
  });

  app.get('/api/v1/volumes/:uniqueName/timeline', {
    schema: { summary: 'What the controller did to one volume and why, oldest first (at most 50 entries)', params: Type.Object({ uniqueName: UniqueName }), response: timelineResponse },
  }, (request) => timelineOf(dashboard, state, request.params.uniqueName));

  app.get('/api/v1/dashboard/nodes', { schema: nodeWindowSchema }, (request) => {
    const { offset = 0, limit = DEFAULT_LIMIT, prefix = '', state: filter } = request.query;
    return nodeWindow(readContext(state, view), offset, limit, prefix, filter);
  });

  app.get('/api/v1/search', { schema: searchSchema }, (request) => {
    const { q, limit = 10 } = request.query;
    const nodes: Array<{ name: string; path: string }> = [];
    const volumes: Array<{ name: string; path: string }> = [];
    let budget = SEARCH_SCAN_BUDGET;
    for (let ids = state.nodeIds(-1, 1024); ids.length > 0 && budget > 0 && nodes.length < limit; ids = state.nodeIds(ids[ids.length - 1], 1024)) {
      budget -= ids.length;
      for (const id of ids) {
        const name = state.node(id)?.name;
        if (name !== undefined && name.startsWith(q) && nodes.length < limit) nodes.push({ name, path: `/api/v1/nodes/${encodeURIComponent(name)}` });
      }
    }
    // A PV name resolves to its volumes first (exact match), then unique names by prefix.
    for (const name of view.volumesForPv(q)) if (volumes.length < limit) volumes.push({ name, path: `/api/v1/volumes/${encodeURIComponent(name)}` });
    for (let ids = state.volumeIds(-1, 1024); ids.length > 0 && budget > 0 && volumes.length < limit; ids = state.volumeIds(ids[ids.length - 1], 1024)) {
      budget -= ids.length;
      for (const id of ids) {
        const name = state.volumeName(id);
        if (name.startsWith(q) && volumes.length < limit && !volumes.some((v) => v.name === name)) volumes.push({ name, path: `/api/v1/volumes/${encodeURIComponent(name)}` });
      }
    }
    return { nodes, volumes, truncated: budget <= 0 };
  });
  done();
};

/** A volume's timeline answer; 404 when the volume is unknown and has no entries left. Also serves routes/volumes.ts's raw form. */
export function timelineOf(dashboard: DashboardModel, state: RouteDeps['state'], volume: string) {
  const items = dashboard.timeline.entries(volume);
  if (items.length === 0 && state.findVolume(volume) === undefined) throw fleetError('FA_ERR_HTTP_VOLUME_NOT_FOUND', `volume ${volume} not found`);
  return { volume, now: dashboard.now(), items: [...items] };
}
