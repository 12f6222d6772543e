/**
 * The one typed client of the dashboard: every HTTP path the browser calls and every JSON shape
 * it reads are here (docs/dashboard.md is the contract), so a change of the server's answers is
 * a change of this file only. Views never call fetch themselves.
 *
 * Every request is same-origin and sends the session cookie; a 401 anywhere raises the login
 * page (onUnauthorized) and rejects with {@link ApiError}. Fields the contract marks optional
 * are optional here too, and the adapters below fill in what a server without a dashboard path
 * (404) still lets the page show from the older inspection paths.
 */

import { observeServerNow } from './clock.js';

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
  class?: string; reason?: string; etaMs?: number; etaWhy?: string; holderPods?: Pod[];
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
const isNotFound = (e: unknown) => e instanceof ApiError && e.status === 404;

export const api = {
  session: () => get<SessionState>('/api/v1/session'),
  login: (token: string) => request<SessionState>('/api/v1/session', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }),
  }),
  logout: () => request<SessionState>('/api/v1/session', { method: 'DELETE' }),

  reasons: () => get<{ items: Reason[] }>('/api/v1/reasons').then((r) => r.items, () => [] as Reason[]),

  async dashboard(): Promise<Dashboard> {
    try {
      return normaliseDashboard(await get<Partial<Dashboard>>('/api/v1/dashboard'));
    } catch (e) {
      if (!isNotFound(e)) throw e;
      return dashboardFromSummary(await get<LegacySummary>('/api/v1/summary'));
    }
  },

  async history(range: HistoryRange, points: number): Promise<History> {
    const h = await get<Partial<History>>(`/api/v1/history${qs({ range, points })}`).catch((e) => {
      if (isNotFound(e)) return {} as Partial<History>;
      throw e;
    });
    return { samples: h.samples ?? [], annotations: h.annotations ?? [] };
  },

  notConverged: (q: NotConvergedQuery, offset: number, limit = WINDOW) =>
    get<Partial<Window<NotConvergedItem>>>(`/api/v1/not-converged${qs({ ...q, groupBy: undefined, offset, limit })}`)
      .then((w) => ({ total: w.total ?? 0, offset: w.offset ?? offset, items: w.items ?? [] })),

  notConvergedGroups: (q: NotConvergedQuery) =>
    get<{ total?: number; groups?: NotConvergedGroup[] }>(`/api/v1/not-converged${qs({ ...q, limit: WINDOW })}`)
      .then((g) => ({ total: g.total ?? 0, groups: g.groups ?? [] })),

  /** A window of the node list: `prefix` filters by name, `state` as /api/v1/nodes's filter. */
  async nodes(offset: number, limit: number, prefix: string, state: NodeState | undefined, knownTotal: number): Promise<Window<NodeRow>> {
    const w = await get<{ items: NodeRow[]; total?: number; continue?: string }>(`/api/v1/nodes${qs({ offset, limit, prefix, state })}`);
    if (w.total !== undefined) return { total: w.total, offset, items: w.items };
    return nodesByContinue(offset, limit, prefix, state, knownTotal, w);
  },

  node: (name: string) => get<NodeDetail>(`/api/v1/nodes/${enc(name)}`),
  volume: (uniqueName: string) => get<VolumeDetail>(`/api/v1/volumes/${enc(uniqueName)}`),
  timeline: (uniqueName: string) =>
    get<{ items: TimelineEntry[] }>(`/api/v1/volumes/${enc(uniqueName)}/timeline`).then((t) => t.items, (e) => {
      if (isNotFound(e)) return [] as TimelineEntry[];
      throw e;
    }),
  conflicts: () => get<{ total: number; items: Conflict[] }>(`/api/v1/conflicts${qs({ limit: WINDOW })}`),

  async operations(): Promise<Operations> {
    const o = await get<Partial<Operations> & { total: Operations['total']; items: Operation[] }>(`/api/v1/operations${qs({ limit: WINDOW })}`);
    return { total: o.total, items: o.items, topErrors: o.topErrors ?? topErrorsOf(o.items) };
  },

  search: (q: string) => get<{ items: SearchHit[] }>(`/api/v1/search${qs({ q })}`).then((r) => r.items, (e) => {
    if (isNotFound(e)) return [] as SearchHit[];
    throw e;
  }),

  /** The stream's URL for `topics` (EventSource sends the cookie; the token never goes in a URL). */
  streamUrl: (topics: string[]) => `/api/v1/stream?topics=${topics.map(enc).join(',')}`,
};

/** Stream payloads, parsed from each event's data. */
export const streamEvents = {
  summary: (data: string) => normaliseDashboard(JSON.parse(data) as Partial<Dashboard>),
  history: (data: string) => JSON.parse(data) as HistorySample,
  invalidate: (data: string) => JSON.parse(data) as { topic: string; version: number },
};

const EMPTY_TILES: Tiles = {
  nodes: 0, nodesNotReady: 0, desired: 0, attached: 0, notConverged: 0, conflicts: 0, opsRunning: 0, opsBackoff: 0, forcedDetaches1h: 0,
};

function normaliseDashboard(d: Partial<Dashboard>): Dashboard {
  return { now: d.now, tiles: { ...EMPTY_TILES, ...d.tiles }, byReason: d.byReason ?? [], waitAge: d.waitAge ?? [], health: d.health ?? {} };
}

interface LegacySummary {
  ready: boolean; role: string;
  nodes: { total: number; managed: number; healthy: number };
  pairs: { desired: number; desiredAttached: number; attached: number };
  operations: { pending: number; backoff: number };
  conflicts: number;
  loop: { pass: { p99Ms: number }; plan: { p99Ms: number } };
  apiClient: { inFlight: number; waiting: number };
  watches: { synced: boolean; lastEventAgeMs?: number }[];
}

function dashboardFromSummary(s: LegacySummary): Dashboard {
  return {
    tiles: {
      nodes: s.nodes.total, nodesNotReady: s.nodes.managed - s.nodes.healthy, desired: s.pairs.desired,
      attached: s.pairs.attached, notConverged: s.pairs.desired - s.pairs.desiredAttached, conflicts: s.conflicts,
      opsRunning: s.operations.pending, opsBackoff: s.operations.backoff, forcedDetaches1h: 0,
    },
    byReason: [],
    waitAge: [],
    health: {
      role: s.role, ready: s.ready, loopP99Ms: s.loop.pass.p99Ms, planP99Ms: s.loop.plan.p99Ms,
      apiInFlight: s.apiClient.inFlight, apiWaiting: s.apiClient.waiting,
      watchesSynced: s.watches.filter((w) => w.synced).length, watches: s.watches.length,
    },
  };
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

/**
 * Offset windows over a node list that pages only by continue token (a filtered page may be
 * short): tokens are remembered per offset, so scrolling on costs about one request per window
 * and a jump walks the pages between.
 */
const tokens = new Map<string, Map<number, string>>();
async function nodesByContinue(offset: number, limit: number, prefix: string, state: NodeState | undefined, knownTotal: number,
  first: { items: NodeRow[]; continue?: string }): Promise<Window<NodeRow>> {
  const listing = `${state ?? ''}|${prefix}`;
  const byOffset = tokens.get(listing) ?? new Map<number, string>();
  tokens.set(listing, byOffset);
  const match = (n: NodeRow) => n.name.startsWith(prefix);
  let at = 0;
  let token: string | undefined;
  for (const [o, t] of byOffset) if (o <= offset && o > at) { at = o; token = t; }
  let page = token === undefined ? first : await get<typeof first>(`/api/v1/nodes${qs({ limit, state, continue: token })}`);
  // rows holds the listing's rows from offset `at` on; rows before `offset` are dropped as we go.
  const rows = page.items.filter(match);
  for (;;) {
    const skip = Math.min(rows.length, offset - at);
    if (skip > 0) { rows.splice(0, skip); at += skip; }
    if (at + rows.length >= offset + limit || page.continue === undefined) break;
    byOffset.set(at + rows.length, page.continue);
    page = await get<typeof first>(`/api/v1/nodes${qs({ limit, state, continue: page.continue })}`);
    rows.push(...page.items.filter(match));
  }
  const items = rows.slice(offset - at, offset - at + limit);
  const known = prefix === '' && state === undefined ? knownTotal : 0;
  const total = page.continue === undefined ? at + rows.length : Math.max(known, at + rows.length + 1);
  return { total, offset, items };
}
