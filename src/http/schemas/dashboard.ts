/** Schemas of the dashboard's JSON API (docs/dashboard.md). */
import { Type, type Static } from 'typebox';
import { ErrorBody, MAX_LIMIT, protectedErrors, StringEnum } from './common.js';
import { REASON_CODES } from '../../dashboard/reason-codes.js';
import { SERIES } from '../../dashboard/history.js';

const Side = StringEnum(['attach', 'detach']);
const ReasonCode = StringEnum([...REASON_CODES], { description: 'Reason code (GET /api/v1/reasons)' });

export const reasonsSchema = {
  summary: 'The reason vocabulary: why a (volume, node) pair is not converged',
  response: {
    200: Type.Object({
      items: Type.Array(Type.Object({ code: ReasonCode, side: Side, title: Type.String(), rule: Type.Array(Type.String(), { description: 'docs/upstream-rules.md codes' }) })),
    }),
    401: protectedErrors[401],
  },
};

const Timing = Type.Object({ p50Ms: Type.Number(), p99Ms: Type.Number() });

export const DashboardSummary = Type.Object({
  now: Type.Number({ description: 'Controller-clock ms; every `since` is on this clock' }),
  version: Type.Integer({ description: 'Version of the not-converged set' }),
  tiles: Type.Object({
    nodes: Type.Object({ total: Type.Integer(), ready: Type.Integer(), notReady: Type.Integer(), outOfService: Type.Integer() }),
    desiredPairs: Type.Integer(),
    attached: Type.Integer(),
    notConverged: Type.Object({ total: Type.Integer(), attach: Type.Integer(), detach: Type.Integer() }),
    conflicts: Type.Integer(),
    operations: Type.Object({ running: Type.Integer(), backoff: Type.Integer() }),
    forcedDetachesLastHour: Type.Object({ timeout: Type.Integer(), outOfService: Type.Integer() }),
    oldestWaitSince: Type.Optional(Type.Number({ description: 'since of the oldest not-converged pair' })),
  }),
  byReason: Type.Array(Type.Object({ code: ReasonCode, side: Side, count: Type.Integer(), oldestSince: Type.Optional(Type.Number()) }), { description: 'Reasons with at least one pair, largest first' }),
  ageHistogram: Type.Object({ lt10s: Type.Integer(), lt1m: Type.Integer(), lt6m: Type.Integer(), ge6m: Type.Integer() }),
  health: Type.Object({
    ready: Type.Boolean(),
    role: StringEnum(['leader', 'standby', 'single', 'shard']),
    loop: Type.Object({ pass: Timing, plan: Timing }),
    apiClient: Type.Object({ inFlight: Type.Integer(), waiting: Type.Integer(), maxInFlight: Type.Integer(), admissionBound: Type.Integer() }),
    watches: Type.Array(Type.Object({ resource: Type.String(), synced: Type.Boolean(), relists: Type.Integer(), lastEventAgeMs: Type.Optional(Type.Number()) })),
    sweep: Type.Object({ sweptAt: Type.Number({ description: '-1 before the first sweep' }), sweepMs: Type.Number(), maxSliceMs: Type.Number({ description: 'Longest slice: the most the sweep held the event loop' }), pairsSeen: Type.Integer() }),
  }),
});
export type DashboardSummary = Static<typeof DashboardSummary>;

export const dashboardSchema = {
  summary: 'Dashboard tiles, not-converged counts by reason, wait-age histogram, controller health',
  response: { 200: DashboardSummary, 401: protectedErrors[401] },
};

const LastError = Type.Object({ op: Type.String(), message: Type.String(), ageMs: Type.Number() });

export const NotConvergedItem = Type.Object({
  volume: Type.String(),
  node: Type.String(),
  side: Side,
  reason: Type.String(),
  waitingFor: Type.Optional(Type.String()),
  since: Type.Number({ description: 'Controller-clock ms: first sweep that saw the pair not converged' }),
  ageMs: Type.Number(),
  etaMs: Type.Optional(Type.Number()),
  etaWhy: Type.Optional(Type.String()),
  rule: Type.Array(Type.String()),
  driver: Type.Optional(Type.String()),
  namespace: Type.Optional(Type.String()),
  lastError: Type.Optional(LastError),
  settled: Type.Optional(Type.Literal(true, { description: 'Settled (or gone) since the sweep that listed it; the next sweep drops it' })),
});

export const NotConvergedWindow = Type.Object({
  version: Type.Integer(),
  sweptAt: Type.Number(),
  total: Type.Integer({ description: 'Matches in the snapshot (items, or groups with groupBy)' }),
  offset: Type.Integer(),
  items: Type.Optional(Type.Array(NotConvergedItem)),
  groups: Type.Optional(Type.Array(Type.Object({ key: Type.String(), count: Type.Integer(), oldestSince: Type.Number(), sample: Type.Optional(NotConvergedItem) }))),
});

export const notConvergedSchema = {
  summary: 'A window of the not-converged pairs (filtered, sorted) or their groups',
  querystring: Type.Object({
    reason: Type.Optional(ReasonCode),
    side: Type.Optional(Side),
    driver: Type.Optional(Type.String({ maxLength: 253 })),
    namespace: Type.Optional(Type.String({ maxLength: 253 })),
    node: Type.Optional(Type.String({ maxLength: 253 })),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'Prefix of the volume or node name' })),
    sort: Type.Optional(StringEnum(['age', 'node', 'volume'], { description: 'age: oldest first (default)' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: 100 })),
    groupBy: Type.Optional(StringEnum(['reason', 'driver', 'node', 'namespace', 'error'])),
  }),
  response: { 200: NotConvergedWindow, ...protectedErrors },
};

const Annotation = Type.Object({
  t: Type.Number(),
  kind: StringEnum(['forced-detach', 'out-of-service-added', 'out-of-service-removed', 'controller-start', 'leader-change']),
  text: Type.String(),
});

export const HistoryWindow = Type.Object({
  now: Type.Number({ description: 'Controller-clock ms of the answer' }),
  range: StringEnum(['15m', '1h', '6h']),
  stepMs: Type.Number({ description: 'Bucket width: each value is the maximum of its bucket' }),
  t: Type.Array(Type.Number(), { description: 'Time of the newest sample of each bucket' }),
  series: Type.Object(Object.fromEntries(SERIES.map((s) => [s, Type.Array(Type.Number())])) as Record<(typeof SERIES)[number], ReturnType<typeof Type.Array<ReturnType<typeof Type.Number>>>>),
  annotations: Type.Array(Annotation),
});

export const historySchema = {
  summary: 'Convergence history, downsampled to `points`, with annotations',
  querystring: Type.Object({
    range: Type.Optional(StringEnum(['15m', '1h', '6h'], { description: 'default 15m' })),
    points: Type.Optional(Type.Integer({ minimum: 1, maximum: 4000, default: 600 })),
  }),
  response: { 200: HistoryWindow, ...protectedErrors },
};

const TimelineEntry = Type.Object({
  at: Type.Number(),
  kind: StringEnum(['desired-added', 'desired-removed', 'attach-started', 'attach-succeeded', 'attach-failed', 'detach-started', 'detach-succeeded', 'detach-failed', 'multi-attach-blocked']),
  node: Type.String(),
  pod: Type.Optional(Type.String()),
  forced: Type.Optional(StringEnum(['timeout', 'out-of-service'])),
  error: Type.Optional(Type.String()),
  retryAt: Type.Optional(Type.Number()),
  holders: Type.Optional(Type.Array(Type.String())),
});

export const TimelineAnswer = Type.Object({ volume: Type.String(), now: Type.Number(), items: Type.Array(TimelineEntry) });

export const timelineResponse = { 200: TimelineAnswer, ...protectedErrors, 404: ErrorBody };

export const searchSchema = {
  summary: 'Nodes and volumes whose name starts with q',
  querystring: Type.Object({
    q: Type.String({ minLength: 1, maxLength: 1024 }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
  }),
  response: {
    200: Type.Object({
      nodes: Type.Array(Type.Object({ name: Type.String(), path: Type.String() })),
      volumes: Type.Array(Type.Object({ name: Type.String(), path: Type.String() })),
      truncated: Type.Boolean({ description: 'The scan budget ran out before every name was read' }),
    }),
    ...protectedErrors,
  },
};
