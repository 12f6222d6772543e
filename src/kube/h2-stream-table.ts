/**
 * A stand-in for the Map in which a Node 20 HTTP/2 session keeps its open streams by id, so
 * that a finished stream dies in the young generation instead of being promoted. Used on the
 * controller's client sessions (h2-session.ts) and the simulator's server sessions.
 *
 * Why: V8 rebuilds a Map's table when it grows, shrinks or fills with deleted entries, and the
 * old table keeps its entries for live iterators. Once a session's table has been promoted, each
 * rebuild leaves an old-space table pointing at every stream open at that moment; the scavenger
 * takes old-to-young pointers as roots whether or not their holder is alive, so those streams
 * (with whatever their listeners, requests and buffers hold) survive and are promoted, and only
 * a full collection frees them. With tens of streams in flight the count swings all the time,
 * and so the table is rebuilt all the time. This is why a finished stream stayed reachable until
 * the next full collection. Measured (`--trace-gc-nvp`): on a loopback server, 40k POSTs 64 at a
 * time, an 8 KB marker hung on each closed stream raised the bytes promoted per request from 3.6
 * to 8.3 KB (~60% of the streams promoted) and, with this table, from 2.8 to 3.2 KB; on the
 * controller's own client path (`npm run bench:api -- --h2-retention`) see the bench's two HTTP/2 variants.
 *
 * How: a delete overwrites the stream with `undefined` instead of removing the key, so the table
 * is never rebuilt to shrink, and a rebuild that growth forces finds no finished stream in it.
 * The tombstones are dropped by copying the live entries into a fresh Map once there are
 * {@link COMPACT_AFTER} of them. The session uses get, set, delete, size and forEach; the rest of
 * a Map's reading surface (has, keys, values, entries, iteration, clear) is there too, skipping
 * the tombstones, so that a Node which reads its table some other way still gets live streams.
 */
import type { Http2Session } from 'node:http2';
import { types } from 'node:util';
import { logger } from '../log/logger.js';

/** Tombstones kept before the table is copied without them. */
export const COMPACT_AFTER = 1024;

export class StreamTable<V> {
  private map = new Map<number, V | undefined>();
  private live = 0;
  private dead = 0;

  get size(): number {
    return this.live;
  }

  get(id: number): V | undefined {
    return this.map.get(id);
  }

  has(id: number): boolean {
    return this.map.get(id) !== undefined;
  }

  set(id: number, value: V): this {
    if (this.map.get(id) === undefined) {
      if (this.map.has(id)) this.dead--;
      this.live++;
    }
    this.map.set(id, value);
    return this;
  }

  delete(id: number): boolean {
    if (this.map.get(id) === undefined) return false;
    this.map.set(id, undefined);
    this.live--;
    if (++this.dead >= COMPACT_AFTER) this.compact();
    return true;
  }

  /** Over a snapshot: the session destroys streams from inside it, which deletes them. */
  forEach(fn: (value: V, id: number, table: this) => void): void {
    const entries: Array<[number, V]> = [];
    for (const [id, v] of this.map) if (v !== undefined) entries.push([id, v]);
    for (const [id, v] of entries) fn(v, id, this);
  }

  clear(): void {
    this.map = new Map();
    this.live = 0;
    this.dead = 0;
  }

  *entries(): IterableIterator<[number, V]> {
    for (const [id, v] of this.map) if (v !== undefined) yield [id, v];
  }

  [Symbol.iterator](): IterableIterator<[number, V]> {
    return this.entries();
  }

  *keys(): IterableIterator<number> {
    for (const [id] of this.entries()) yield id;
  }

  *values(): IterableIterator<V> {
    for (const [, v] of this.entries()) yield v;
  }

  private compact(): void {
    const next = new Map<number, V | undefined>();
    for (const [id, v] of this.map) if (v !== undefined) next.set(id, v);
    this.map = next;
    this.dead = 0;
  }
}

/**
 * The Set a Node 20 client session keeps its streams in until they have an id (from the
 * stream's creation to its first frame; on a connected session, within `request()`): an array,
 * as a Set's table is rebuilt each time it empties (a sampling heap profile of the controller
 * under churn found those tables promoted at ~0.5 MB/s, each kept young-alive by the stale one
 * before it). The session uses add, delete, size and forEach; has, values, iteration and clear
 * are there for a Node that reads it some other way.
 */
export class PendingStreams<V> {
  private readonly items: V[] = [];

  get size(): number {
    return this.items.length;
  }

  add(value: V): this {
    if (!this.items.includes(value)) this.items.push(value);
    return this;
  }

  /** Swaps the last item into the hole: order does not matter to the session. */
  delete(value: V): boolean {
    const i = this.items.indexOf(value);
    if (i < 0) return false;
    const last = this.items.pop() as V;
    if (i < this.items.length) this.items[i] = last;
    return true;
  }

  /** Over a snapshot: the session destroys streams from inside it, which deletes them. */
  forEach(fn: (value: V, again: V, set: this) => void): void {
    for (const v of [...this.items]) fn(v, v, this);
  }

  has(value: V): boolean {
    return this.items.includes(value);
  }

  clear(): void {
    this.items.length = 0;
  }

  /** Over a snapshot, as forEach. */
  values(): IterableIterator<V> {
    return [...this.items][Symbol.iterator]();
  }

  [Symbol.iterator](): IterableIterator<V> {
    return this.values();
  }
}

/** Where a session keeps its streams, as {@link probeStreamState} found it. */
export interface SessionStreamState {
  streams: unknown;
  pendingStreams: unknown;
}

/** The probe's answer: the state to take over, the tables already in place, or why not. */
export type StreamStateProbe =
  | { kind: 'found'; state: SessionStreamState }
  | { kind: 'installed' }
  | { kind: 'unknown'; reason: string };

/**
 * Where `session` keeps its streams, if it keeps them as Node 20 does: an own property under the
 * one symbol described `state`, an object whose `streams` is an empty Map and whose
 * `pendingStreams` is an empty Set. Pure: it only reads `session`.
 */
export function probeStreamState(session: object): StreamStateProbe {
  const keys = Object.getOwnPropertySymbols(session).filter((s) => s.description === 'state');
  if (keys.length !== 1) return { kind: 'unknown', reason: `${keys.length} own symbol properties described "state", not 1` };
  const state = (session as Record<symbol, unknown>)[keys[0]];
  if (typeof state !== 'object' || state === null) return { kind: 'unknown', reason: 'the session state is not an object' };
  const { streams, pendingStreams } = state as Partial<SessionStreamState>;
  if (streams instanceof StreamTable && pendingStreams instanceof PendingStreams) return { kind: 'installed' };
  // Node keeps primordials' SafeMap and SafeSet, which are no `instanceof Map` or `Set`.
  if (!types.isMap(streams)) return { kind: 'unknown', reason: 'state.streams is not a Map' };
  if (!types.isSet(pendingStreams)) return { kind: 'unknown', reason: 'state.pendingStreams is not a Set' };
  if (streams.size !== 0 || pendingStreams.size !== 0) return { kind: 'unknown', reason: 'the session already has streams' };
  return { kind: 'found', state: state as SessionStreamState };
}

/** Receives the one reason a {@link streamTableInstaller} logs for leaving sessions alone. */
export type StreamTableFallbackLog = (reason: string) => void;

const logFallback: StreamTableFallbackLog = (reason) => {
  logger('node-internals').info({ internal: 'Http2Session stream map', reason }, 'HTTP/2 sessions keep their own stream Map: finished streams may outlive scavenges until a full collection');
};

/**
 * An `installStreamTables` that probes each session with `probe` ({@link probeStreamState}, or
 * a stand-in in tests) and tells `log` the first time it leaves one alone.
 */
export function streamTableInstaller(probe: (session: object) => StreamStateProbe = probeStreamState, log: StreamTableFallbackLog = logFallback): (session: Http2Session) => boolean {
  let logged = false;
  return (session) => {
    const found = probe(session);
    if (found.kind === 'unknown' && !logged) {
      logged = true;
      log(found.reason);
    }
    if (found.kind !== 'found') return false;
    found.state.streams = new StreamTable();
    found.state.pendingStreams = new PendingStreams();
    return true;
  };
}

/**
 * Puts a {@link StreamTable} and {@link PendingStreams} in place of `session`'s stream Map and
 * pending-stream Set, and returns true. Node's internals are not an API: it changes nothing and
 * returns false unless {@link probeStreamState} finds both, empty, where Node 20 keeps them; the
 * session then keeps Node's own Map (correct, at the garbage cost the file comment describes),
 * and the first such reason is logged. Call it on a session before any request.
 */
export const installStreamTables = streamTableInstaller();
