/**
 * Windows over the not-converged snapshot: filters, sort, offset/limit, or groups. The index
 * gives the pairs, reasons and `since`; each served row is diagnosed again at request time, so
 * its sentence, reason and ETA are those of the state now (the index is up to one sweep old). A
 * pair that settled since the sweep keeps its place, with the sweep's reason and `settled: true`
 * (the next sweep drops it), so a window always holds its `limit` rows of the snapshot's `total`.
 *
 * Cost: O(snapshot) to filter, O(m log k) to find the first k = offset + limit of m matches
 * (O(m log m) past 5,000), plus a diagnosis per served row.
 */
import { explainPair, nodeFacts, pairFacts, setDiagnosis, volumeFacts, type ReadContext } from '../http/pair-view.js';
import type { NotConvergedSnapshot, IndexedPair } from './not-converged-index.js';
import { reasonOf, type ReasonCode, type ReasonSide } from './reason-codes.js';

export interface NotConvergedQuery {
  readonly reason?: ReasonCode;
  readonly side?: ReasonSide;
  readonly driver?: string;
  readonly namespace?: string;
  readonly node?: string;
  /** Prefix of the volume's or the node's name. */
  readonly q?: string;
  readonly sort?: 'age' | 'node' | 'volume';
  readonly offset?: number;
  readonly limit?: number;
  readonly groupBy?: 'reason' | 'driver' | 'node' | 'namespace' | 'error';
}

export interface NotConvergedItem {
  volume: string;
  node: string;
  side: ReasonSide;
  reason: string;
  waitingFor?: string;
  since: number;
  ageMs: number;
  etaMs?: number;
  etaWhy?: string;
  rule: string[];
  driver?: string;
  namespace?: string;
  lastError?: { op: string; message: string; ageMs: number };
  /** The pair settled (or went) after the sweep that listed it. */
  settled?: true;
}

export interface NotConvergedGroup {
  key: string;
  count: number;
  oldestSince: number;
  sample?: NotConvergedItem;
}

export interface NotConvergedWindow {
  version: number;
  sweptAt: number;
  total: number;
  offset: number;
  items?: NotConvergedItem[];
  groups?: NotConvergedGroup[];
}

export const MAX_WINDOW = 500;

export function queryNotConverged(ctx: ReadContext, snap: NotConvergedSnapshot, q: NotConvergedQuery): NotConvergedWindow {
  const matches = snap.items.filter((it) => matchesQuery(it, q));
  const offset = q.offset ?? 0;
  const limit = Math.min(q.limit ?? 100, MAX_WINDOW);
  const head = { version: snap.version, sweptAt: snap.sweptAt, total: matches.length, offset };
  if (q.groupBy) return { ...head, groups: groups(ctx, matches, q.groupBy, offset, limit) };
  const sorted = firstSorted(matches, offset + limit, comparator(q.sort ?? 'age'));
  const items: NotConvergedItem[] = [];
  for (const it of sorted.slice(offset, offset + limit)) {
    items.push(rowOf(ctx, it) ?? settledRow(ctx, it));
  }
  return { ...head, items };
}

function matchesQuery(it: IndexedPair, q: NotConvergedQuery): boolean {
  if (q.reason !== undefined && it.reason !== q.reason) return false;
  if (q.side !== undefined && it.side !== q.side) return false;
  if (q.driver !== undefined && it.driver !== q.driver) return false;
  if (q.namespace !== undefined && it.namespace !== q.namespace) return false;
  if (q.node !== undefined && it.node !== q.node) return false;
  if (q.q !== undefined && !it.volume.startsWith(q.q) && !it.node.startsWith(q.q)) return false;
  return true;
}

type Cmp = (a: IndexedPair, b: IndexedPair) => number;

function comparator(by: 'age' | 'node' | 'volume'): Cmp {
  if (by === 'age') return (a, b) => a.since - b.since || compare(a.volume, b.volume) || compare(a.node, b.node);
  if (by === 'node') return (a, b) => compare(a.node, b.node) || compare(a.volume, b.volume);
  return (a, b) => compare(a.volume, b.volume) || compare(a.node, b.node);
}

/** Pages deeper than this sort every match; shallower ones keep the first `k` in a heap. */
const HEAP_MAX = 5000;

/**
 * The first `k` items in `cmp` order, sorted: O(n log k) with a bounded max-heap (the window's
 * worst item on top), so a page of a million matches does not sort the million.
 */
export function firstSorted(items: IndexedPair[], k: number, cmp: Cmp): IndexedPair[] {
  if (k > HEAP_MAX || items.length <= k) return items.sort(cmp).slice(0, k);
  const heap: IndexedPair[] = [];
  const worse = (i: number, j: number) => cmp(heap[i], heap[j]) > 0;
  const swap = (i: number, j: number) => {
    const t = heap[i];
    heap[i] = heap[j];
    heap[j] = t;
  };
  for (const it of items) {
    if (heap.length < k) {
      heap.push(it);
      for (let i = heap.length - 1; i > 0;) {
        const parent = (i - 1) >> 1;
        if (!worse(i, parent)) break;
        swap(i, parent);
        i = parent;
      }
    } else if (cmp(it, heap[0]) < 0) {
      heap[0] = it;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let top = i;
        if (l < k && worse(l, top)) top = l;
        if (r < k && worse(r, top)) top = r;
        if (top === i) break;
        swap(i, top);
        i = top;
      }
    }
  }
  return heap.sort(cmp);
}

/** An indexed pair that has settled (or gone) since the sweep: the sweep's facts, marked settled. */
function settledRow(ctx: ReadContext, it: IndexedPair): NotConvergedItem {
  const row: NotConvergedItem = {
    volume: it.volume, node: it.node, side: it.side, reason: it.reason, since: it.since, ageMs: ctx.now - it.since,
    rule: [...reasonOf(it.reason).rule], settled: true, waitingFor: 'settled since the last sweep',
  };
  if (it.driver !== undefined) row.driver = it.driver;
  if (it.namespace !== undefined) row.namespace = it.namespace;
  return row;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The served row of an indexed pair, diagnosed now; undefined once the pair is gone or settled. */
export function rowOf(ctx: ReadContext, it: IndexedPair): NotConvergedItem | undefined {
  const { state } = ctx;
  const vid = state.findVolume(it.volume);
  const nid = state.findNode(it.node);
  if (vid === undefined || nid === undefined) return undefined;
  const pair = state.pair(vid, nid);
  const nf = nodeFacts(state, nid);
  if (!pair || !nf) return undefined;
  const vf = volumeFacts(state, vid);
  const d = explainPair(ctx, pairFacts(ctx, pair, nf, vf), vf);
  if (d === undefined) return undefined;
  const reason = reasonOf(d.reason);
  const row: NotConvergedItem = {
    volume: it.volume, node: it.node, side: reason.side, reason: d.reason, since: it.since, ageMs: ctx.now - it.since, rule: [...reason.rule],
  };
  setDiagnosis(row, d);
  if (it.driver !== undefined) row.driver = it.driver;
  if (it.namespace !== undefined) row.namespace = it.namespace;
  const err = vf.info?.lastError;
  if (err && err.node === it.node) row.lastError = { op: err.op, message: err.message, ageMs: ctx.now - err.at };
  return row;
}

function groupKey(ctx: ReadContext, it: IndexedPair, by: NonNullable<NotConvergedQuery['groupBy']>): string {
  switch (by) {
    case 'reason': return it.reason;
    case 'driver': return it.driver ?? '(none)';
    case 'node': return it.node;
    case 'namespace': return it.namespace ?? '(none)';
    case 'error': return lastErrorOf(ctx, it) ?? '(none)';
  }
}

/** The volume's last error when it was on this pair's node (J2/J3). */
function lastErrorOf(ctx: ReadContext, it: IndexedPair): string | undefined {
  const vid = ctx.state.findVolume(it.volume);
  const err = vid === undefined ? undefined : volumeFacts(ctx.state, vid).info?.lastError;
  return err && err.node === it.node ? err.message : undefined;
}

/** Groups by count (largest first), each with its oldest `since` and one sample row (the oldest pair); a window of them. */
function groups(ctx: ReadContext, items: readonly IndexedPair[], by: NonNullable<NotConvergedQuery['groupBy']>, offset: number, limit: number): NotConvergedGroup[] {
  const map = new Map<string, { count: number; oldest: IndexedPair }>();
  for (const it of items) {
    const key = groupKey(ctx, it, by);
    const g = map.get(key);
    if (!g) map.set(key, { count: 1, oldest: it });
    else {
      g.count++;
      if (it.since < g.oldest.since) g.oldest = it;
    }
  }
  const sorted = [...map].sort(([ka, a], [kb, b]) => b.count - a.count || a.oldest.since - b.oldest.since || compare(ka, kb));
  return sorted.slice(offset, offset + limit).map(([key, g]) => {
    return { key, count: g.count, oldestSince: g.oldest.since, sample: rowOf(ctx, g.oldest) ?? settledRow(ctx, g.oldest) };
  });
}
