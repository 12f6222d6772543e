/**
 * /api/v1/conflicts and /api/v1/operations. These walk the maintained conflict set and the
 * operation tables (O(conflicts) / O(operations), not O(pairs)) and serve at most `limit` items.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { conflicts } from '../conflict-view.js';
import { readContext, volumeFacts, type ReadContext } from '../pair-view.js';
import { INITIAL_BACKOFF_MS } from '../../cache/backoff-heap.js';
import { DEFAULT_LIMIT } from '../schemas/common.js';
import { conflictsSchema, operationsSchema, type OperationList } from '../schemas/operations.js';
import type { RouteDeps } from './route-deps.js';

type OperationItem = OperationList['items'][number];

/** Failures in a row behind a backoff window: it starts at INITIAL_BACKOFF_MS and doubles up to its cap. */
function attemptOf(durationMs: number): number {
  return Math.max(1, Math.round(Math.log2(durationMs / INITIAL_BACKOFF_MS)) + 1);
}

function lastErrorOf(ctx: ReadContext, volume: number, op: string, node: string): { lastError?: string } {
  const e = volumeFacts(ctx.state, volume).info?.lastError;
  return e && e.op === op && e.node === node ? { lastError: e.message } : {};
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
        attempt: attemptOf(b.durationMs), ...lastErrorOf(ctx, b.volume, b.op, name(b.node)),
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
