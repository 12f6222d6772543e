/**
 * /api/v1/conflicts and /api/v1/operations. These walk the maintained conflict set and the
 * operation tables (O(conflicts) / O(operations), not O(pairs)) and serve at most `limit` items.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { Static } from 'typebox';
import { explain, nodeFacts, pairFacts, pairPods, readContext, volumeFacts, confirmedNodes, type ReadContext } from '../pair-view.js';
import { DEFAULT_LIMIT } from '../schemas/common.js';
import { Conflict, conflictsSchema, operationsSchema, type ConflictList, type OperationList } from '../schemas/operations.js';
import type { RouteDeps } from './route-deps.js';

type ConflictItem = Static<typeof Conflict>;
type OperationItem = OperationList['items'][number];

export function conflicts(ctx: ReadContext, limit: number): ConflictList {
  const all = ctx.state.conflicts();
  const items: ConflictItem[] = [];
  for (const { volume, node } of all) {
    if (items.length >= limit) break;
    const pair = ctx.state.pair(volume, node);
    const nf = nodeFacts(ctx.state, node);
    if (!pair || !nf) continue;
    const vf = volumeFacts(ctx.state, volume);
    const attachedTo = confirmedNodes(ctx.state, volume, node);
    const item: ConflictItem = {
      volume: vf.name,
      node: nf.name,
      attachedTo,
      pods: pairPods(ctx, volume, node, pair.desiredPods),
      podCount: pair.desiredPods,
      multiAttachErrorReported: pair.multiAttachErrorReported,
    };
    if (vf.info) item.specName = vf.info.specName;
    const why = explain(ctx, pairFacts(ctx, pair, nf, vf, attachedTo), vf);
    if (why !== undefined) item.waitingFor = why;
    items.push(item);
  }
  return { total: all.length, items };
}

export function operations(ctx: ReadContext, which: 'pending' | 'backoff' | undefined, limit: number): OperationList {
  const { state, now } = ctx;
  const pending = which === 'backoff' ? [] : state.pendingOperations();
  const backoff = which === 'pending' ? [] : state.backoffOperations(now);
  const name = (id: number) => state.node(id)?.name ?? `#${id}`;
  const rows: Array<{ at: number; make: () => OperationItem }> = [];
  for (const p of pending) {
    rows.push({ at: p.startedAt, make: () => ({ state: 'pending', op: p.op, volume: state.volumeName(p.volume), node: name(p.node), volumeWide: p.volumeWide, ageMs: now - p.startedAt }) });
  }
  for (const b of backoff) {
    rows.push({
      at: b.lastErrorAt,
      make: () => ({
        state: 'backoff', op: b.op, volume: state.volumeName(b.volume), node: name(b.node), volumeWide: b.volumeWide,
        ageMs: now - b.lastErrorAt, retryInMs: Math.max(0, b.retryAt - now), durationMs: b.durationMs,
      }),
    });
  }
  rows.sort((a, b) => a.at - b.at);
  // Totals of the kind not listed come from the O(1) counters.
  const counts = state.counts();
  return {
    total: {
      pending: which === 'backoff' ? counts.pendingOperations : pending.length,
      backoff: which === 'pending' ? counts.backoffOperations : backoff.length,
    },
    items: rows.slice(0, limit).map((r) => r.make()),
  };
}

export const operationRoutes: FastifyPluginCallbackTypebox<RouteDeps> = (app, deps, done) => {
  app.get('/api/v1/conflicts', { schema: conflictsSchema }, (request) => {
    return conflicts(readContext(deps.state, deps.view), request.query.limit ?? DEFAULT_LIMIT);
  });
  app.get('/api/v1/operations', { schema: operationsSchema }, (request) => {
    return operations(readContext(deps.state, deps.view), request.query.state, request.query.limit ?? DEFAULT_LIMIT);
  });
  done();
};
