/**
 * The one typed client of the dashboard: every HTTP path the browser calls and every JSON shape
 * it reads are here (docs/dashboard.md is the contract), so a change of the server's answers is
 * a change of this file only. Views never call fetch themselves.
 *
 * Every request is same-origin and sends the session cookie; a 401 anywhere raises the login
 * page (onUnauthorized) and rejects with {@link ApiError}. The adapters below turn the server's
 * answers (src/http/schemas/dashboard.ts) into the shapes the views render.
 */

import { observeServerNow, wallTime } from './clock.js';

export type Side = 'attach' | 'detach';

export interface Reason { code: string; side: Side; title: string; rule: string }

export interface Tiles {
  nodes: number; nodesNotReady: number; desired: number; attached: number; notConverged: number;
  conflicts: number; opsRunning: number; opsBackoff: number; forcedDetaches1h: number;
}
export type TileKey = keyof Tiles;

export interface ReasonCount { reason: string; side: Side; count: number; oldestSince?: number }
export interface AgeBucket { label: string; count: number }
export interface Health {
  role?: string; ready?: boolean; loopP99Ms?: number; planP99Ms?: number;
  apiInFlight?: number; apiWaiting?: number; watchesSynced?: number; watches?: number; maxWatchLagMs?: number;
}
export interface Dashboard {
  /** Controller clock (epoch ms) when the answer was made; any answer's `now` sets the page's clock offset. */
  now?: number;
  tiles: Tiles;
  byReason: ReasonCount[];
  waitAge: AgeBucket[];
  health: Health;
}

export interface HistorySample { t: number; desired: number; attached: number; notConverged: number }
export interface Annotation { t: number; kind: string; text: string }
export interface History { samples: HistorySample[]; annotations: Annotation[] }
export type HistoryRange = '15m' | '1h' | '6h';

export interface NotConvergedItem {
  volume: string; node: string; side: Side; reason: string; waitingFor: string; since: number;
  etaMs?: number; etaWhy?: string; rule?: string; driver?: string; namespaces?: string[]; lastError?: string;
  /** Settled since the sweep that listed it (shown until the list refreshes). */
  settled?: boolean;
}
export interface NotConvergedGroup { key: string; count: number; oldestSince?: number; sample?: NotConvergedItem }
export interface NotConvergedQuery {
  reason?: string; side?: string; q?: string; sort?: string; groupBy?: string;
  driver?: string; namespace?: string; node?: string;
}
export interface Window<T> { total: number; offset: number; items: T[] }

export interface Pod { uid: string; namespace?: string; name?: string }
export interface Pair {
  volume: string; node: string; desired: boolean; pods: Pod[]; podCount: number;
  attachState: string; state: string; mounted: boolean; reportedAsAttached: boolean;
  detachRequestedAgeMs?: number; multiAttachErrorReported: boolean;
  operation?: { op: string; node: string; volumeWide: boolean; ageMs: number };
  backoff?: { op: string; retryInMs: number; durationMs: number }[];
  attachmentName?: string; waitingFor?: string;
  reason?: string; side?: Side; etaMs?: number; etaWhy?: string;
}
export interface NodeRow {
  name: string; managed: boolean; healthy: boolean; outOfService: boolean; statusUpdateNeeded: boolean;
  desired: number; attached: number; uncertain: number; notConverged?: number;
}
export const NODE_STATES = ['healthy', 'unhealthy', 'out-of-service', 'status-pending', 'unmanaged'] as const;
export type NodeState = (typeof NODE_STATES)[number];
export interface NodeDetail extends NodeRow { volumesInUse?: string[]; volumes: Pair[] }
export interface VolumeDetail {
  name: string; specName?: string; pvName?: string; plugin?: string; driver?: string; accessModes: string[];
  multiAttach: 'allowed' | 'forbidden'; attachedTo: string[]; nodeCount: number; nodes: Pair[];
  lastError?: { op: string; node: string; message: string; ageMs: number }; waitingFor?: string;
}
export interface TimelineEntry { t: number; kind: string; node?: string; text: string }
export interface Conflict {
  volume: string; node: string; specName?: string; attachedTo: string[]; pods: Pod[]; podCount: number;
  multiAttachErrorReported: boolean; waitingFor?: string;
  class?: string; reason?: string; etaMs?: number; etaWhy?: string;
  holder?: {
    node: string; healthy: boolean; outOfService: boolean; mounted: boolean; desired: boolean; podCount: number;
    detachTimerAgeMs?: number; detachInMs?: number; detachWhyNot?: string; reason?: string;
  };
}
export interface Operation {
  state: 'pending' | 'backoff'; op: 'attach' | 'detach'; volume: string; node: string; volumeWide: boolean;
  ageMs: number; retryInMs?: number; durationMs?: number; attempt?: number; lastError?: string;
}
export interface TopError { message: string; count: number; nodes?: number }
export interface Operations { total: { pending: number; backoff: number }; items: Operation[]; topErrors: TopError[] }
export interface SearchHit { kind: 'node' | 'volume' | 'claim' | 'pod'; name: string; node?: string; volume?: string }
export interface SessionState { tokenRequired: boolean; authenticated: boolean }

/** Rows per window request: the contract allows 500; smaller windows keep each answer small. */
export const WINDOW = 200;

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) { super(message); }
}

let unauthorized: () => void = () => {};
/** Called on every 401 answer (the app shows the login page). */
export function onUnauthorized(fn: () => void): void { unauthorized = fn; }

async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const res = await fetch(path, { credentials: 'same-origin', ...init, headers: { accept: 'application/json', ...init.headers } });
  const body = res.status === 204 ? undefined : await res.json().catch(() => undefined);
  if (!res.ok) {
    if (res.status === 401) unauthorized();
    const b = (body ?? {}) as { code?: string; message?: string };
    throw new ApiError(res.status, b.code ?? `HTTP_${res.status}`, b.message ?? res.statusText);
  }
  // Any answer stamped with the controller's clock keeps the page's ages on that clock.
  const now = (body as { now?: unknown } | undefined)?.now;
  if (typeof now === 'number') observeServerNow(now);
  return body as T;
}
const get = <T>(path: string) => request<T>(path);

function qs(params: Record<string, string | number | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s === '' ? '' : `?${s}`;
}
const enc = encodeURIComponent;

export const api = {
  session: () => get<SessionState>('/api/v1/session'),
  login: (token: string) => request<SessionState>('/api/v1/session', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }),
  }),
  logout: () => request<SessionState>('/api/v1/session', { method: 'DELETE' }),

  reasons: () => get<{ items: Array<Omit<Reason, 'rule'> & { rule: string[] }> }>('/api/v1/reasons').then((r) => r.items.map((x) => ({ ...x, rule: x.rule.join(', ') }))),

  dashboard: () => get<ServerDashboard>('/api/v1/dashboard').then(normaliseDashboard),

  history: (range: HistoryRange, points: number) =>
    get<ServerHistory>(`/api/v1/history${qs({ range, points })}`).then((h): History => ({
      samples: h.t.map((t, i) => ({ t: wallTime(t), desired: h.series.desired[i] ?? 0, attached: h.series.attached[i] ?? 0, notConverged: h.series.notConverged[i] ?? 0 })),
      annotations: h.annotations.map((a) => ({ ...a, t: wallTime(a.t) })),
    })),

  notConverged: (q: NotConvergedQuery, offset: number, limit = WINDOW) =>
    get<{ total: number; offset: number; items?: ServerNotConverged[] }>(`/api/v1/not-converged${qs({ ...q, groupBy: undefined, offset, limit })}`)
      .then((w): Window<NotConvergedItem> => ({ total: w.total, offset: w.offset, items: (w.items ?? []).map(notConvergedItem) })),

  notConvergedGroups: (q: NotConvergedQuery) =>
    get<{ total: number; groups?: Array<{ key: string; count: number; oldestSince?: number; sample?: ServerNotConverged }> }>(`/api/v1/not-converged${qs({ ...q, limit: WINDOW })}`)
      .then((g) => ({
        total: g.total,
        groups: (g.groups ?? []).map((x): NotConvergedGroup => ({ key: x.key, count: x.count, oldestSince: x.oldestSince, sample: x.sample && notConvergedItem(x.sample) })),
      })),

  /** A window of the node list: `prefix` filters by name, `state` as /api/v1/nodes's filter. */
  nodes: (offset: number, limit: number, prefix: string, state: NodeState | undefined) =>
    get<Window<NodeRow>>(`/api/v1/dashboard/nodes${qs({ offset, limit, prefix, state })}`),

  node: (name: string) => get<NodeDetail>(`/api/v1/nodes/${enc(name)}`).then((n) => ({ ...n, volumes: n.volumes.map(withSide) })),
  volume: (uniqueName: string) => get<VolumeDetail>(`/api/v1/volumes/${enc(uniqueName)}`).then((v) => ({ ...v, nodes: v.nodes.map(withSide) })),
  timeline: (uniqueName: string) =>
    get<{ items: ServerTimelineEntry[] }>(`/api/v1/volumes/${enc(uniqueName)}/timeline`).then((t) => t.items.map(timelineEntry)),

  conflicts: () => get<{ total: number; items: Conflict[] }>(`/api/v1/conflicts${qs({ limit: WINDOW })}`),

  async operations(): Promise<Operations> {
    const o = await get<{ total: Operations['total']; items: Operation[] }>(`/api/v1/operations${qs({ limit: WINDOW })}`);
    return { total: o.total, items: o.items, topErrors: topErrorsOf(o.items) };
  },

  search: (q: string) =>
    get<{ nodes: Array<{ name: string }>; volumes: Array<{ name: string }> }>(`/api/v1/search${qs({ q })}`).then((r): SearchHit[] => [
      ...r.nodes.map((n) => ({ kind: 'node' as const, name: n.name })),
      ...r.volumes.map((v) => ({ kind: 'volume' as const, name: v.name })),
    ]),

  /** The stream's URL for `topics` (EventSource sends the cookie; the token never goes in a URL). */
  streamUrl: (topics: string[]) => `/api/v1/stream?topics=${topics.map(enc).join(',')}`,
};

/** Stream payloads, parsed from each event's data. */
export const streamEvents = {
  summary: (data: string) => {
    const d = JSON.parse(data) as ServerDashboard;
    observeServerNow(d.now);
    return normaliseDashboard(d);
  },
  history: (data: string) => {
    const s = JSON.parse(data) as HistorySample;
    return { ...s, t: wallTime(s.t) };
  },
  invalidate: (data: string) => JSON.parse(data) as { topic: string; version: number },
};

/** A waiting pair is on the attach side while desired on its node, else on the detach side. */
function withSide(p: Pair): Pair {
  return p.reason === undefined ? p : { ...p, side: p.desired ? 'attach' : 'detach' };
}

/** GET /api/v1/dashboard and the stream's `summary` (src/http/schemas/dashboard.ts). */
interface ServerDashboard {
  now: number;
  tiles: {
    nodes: { total: number; ready: number; notReady: number; outOfService: number };
    desiredPairs: number; attached: number; notConverged: { total: number; attach: number; detach: number };
    conflicts: number; operations: { running: number; backoff: number };
    forcedDetachesLastHour: { timeout: number; outOfService: number }; oldestWaitSince?: number;
  };
  byReason: Array<{ code: string; side: Side; count: number; oldestSince?: number }>;
  ageHistogram: { lt10s: number; lt1m: number; lt6m: number; ge6m: number };
  health: {
    ready: boolean; role: string;
    loop: { pass: { p99Ms: number }; plan: { p99Ms: number } };
    apiClient: { inFlight: number; waiting: number };
    watches: Array<{ synced: boolean; lastEventAgeMs?: number }>;
  };
}

function normaliseDashboard(d: ServerDashboard): Dashboard {
  const t = d.tiles;
  const ages = d.health.watches.map((w) => w.lastEventAgeMs ?? 0);
  return {
    now: d.now,
    tiles: {
      nodes: t.nodes.total, nodesNotReady: t.nodes.notReady, desired: t.desiredPairs, attached: t.attached,
      notConverged: t.notConverged.total, conflicts: t.conflicts, opsRunning: t.operations.running,
      opsBackoff: t.operations.backoff, forcedDetaches1h: t.forcedDetachesLastHour.timeout + t.forcedDetachesLastHour.outOfService,
    },
    byReason: d.byReason.map((r) => ({ reason: r.code, side: r.side, count: r.count, oldestSince: r.oldestSince })),
    waitAge: [
      { label: '< 10 s', count: d.ageHistogram.lt10s }, { label: '10 s – 1 min', count: d.ageHistogram.lt1m },
      { label: '1 – 6 min', count: d.ageHistogram.lt6m }, { label: '≥ 6 min', count: d.ageHistogram.ge6m },
    ],
    health: {
      role: d.health.role, ready: d.health.ready, loopP99Ms: d.health.loop.pass.p99Ms, planP99Ms: d.health.loop.plan.p99Ms,
      apiInFlight: d.health.apiClient.inFlight, apiWaiting: d.health.apiClient.waiting,
      watchesSynced: d.health.watches.filter((w) => w.synced).length, watches: d.health.watches.length,
      maxWatchLagMs: ages.length === 0 ? undefined : Math.max(...ages),
    },
  };
}

interface ServerHistory {
  t: number[];
  series: { desired: number[]; attached: number[]; notConverged: number[] };
  annotations: Annotation[];
}

interface ServerNotConverged {
  volume: string; node: string; side: Side; reason: string; waitingFor?: string; since: number;
  etaMs?: number; etaWhy?: string; rule: string[]; driver?: string; namespace?: string;
  lastError?: { op: string; message: string }; settled?: true;
}

function notConvergedItem(i: ServerNotConverged): NotConvergedItem {
  return {
    volume: i.volume, node: i.node, side: i.side, reason: i.reason, waitingFor: i.waitingFor ?? '', since: i.since,
    etaMs: i.etaMs, etaWhy: i.etaWhy, rule: i.rule.join(', '), driver: i.driver,
    namespaces: i.namespace === undefined ? undefined : [i.namespace],
    lastError: i.lastError === undefined ? undefined : `${i.lastError.op}: ${i.lastError.message}`,
    settled: i.settled,
  };
}

interface ServerTimelineEntry {
  at: number; kind: string; node: string; pod?: string; forced?: string; error?: string; retryAt?: number; holders?: string[];
}

/** One line of a volume's timeline, in words. */
function timelineEntry(e: ServerTimelineEntry): TimelineEntry {
  const parts: string[] = [];
  if (e.pod !== undefined) parts.push(`pod ${e.pod}`);
  if (e.forced !== undefined) parts.push(`forced (${e.forced})`);
  if (e.holders !== undefined && e.holders.length > 0) parts.push(`attached to ${e.holders.join(', ')}`);
  if (e.error !== undefined) parts.push(e.error);
  if (e.retryAt !== undefined) parts.push(`retry at ${new Date(wallTime(e.retryAt)).toLocaleTimeString()}`);
  return { t: wallTime(e.at), kind: e.kind, node: e.node, text: parts.join('; ') };
}

/** Normalised messages (numbers and quoted names masked) counted over the window's operations. */
function topErrorsOf(items: Operation[]): TopError[] {
  const counts = new Map<string, { count: number; nodes: Set<string> }>();
  for (const o of items) {
    if (o.lastError === undefined) continue;
    const key = o.lastError.replace(/"[^"]*"|'[^']*'/g, '…').replace(/\d+/g, 'N');
    const c = counts.get(key) ?? { count: 0, nodes: new Set<string>() };
    c.count++;
    c.nodes.add(o.node);
    counts.set(key, c);
  }
  return [...counts].sort((a, b) => b[1].count - a[1].count).slice(0, 10)
    .map(([message, c]) => ({ message, count: c.count, nodes: c.nodes.size }));
}
