/**
 * What the list and the watch halves of a reflector share: options, the projection store, the
 * resourceVersion to watch from, the counters, and the reading of one raw object into its key,
 * resourceVersion and projection (malformed objects are counted and logged, never thrown).
 */
import type { Logger } from '../log/logger.js';
import type { ListRetryPolicy } from './list-retry.js';
import type { JsonSieve } from './sieve/json-sieve.js';
import type { ProjectionCache, StoreEntry } from './projection-store.js';
import { readItem, type PageItem, type PageReader } from './list-page.js';
import type { ResourceKind } from './projections/read.js';
import type { FleetKubeConfig } from './kube-config.js';
import type { RequestHook } from './request-hook.js';

export interface ReflectorOptions<T> {
  kc: FleetKubeConfig;
  kind: ResourceKind<T>;
  /** Items per list page (default 500). */
  pageSize?: number;
  /** Expected bookmark period of the server (default 60 s, the apiserver's). */
  bookmarkIntervalMs?: number;
  /** No-event limit before a watch is abandoned (default 3 × bookmarkIntervalMs). */
  watchdogMs?: number;
  /** Reconnect backoff (default 200 ms doubling to 30 s). */
  backoff?: { initialMs: number; maxMs: number };
  /** Timeout of one list page request (default 60 s). */
  requestTimeoutMs?: number;
  /** Request the next list page while the current one is processed (default true). */
  prefetch?: boolean;
  /** Retries of one list page on 429 and transient failures (list-retry.ts defaults). */
  listRetry?: ListRetryPolicy;
  /** Server-side watch timeout range in seconds, picked at random per watch (default [300, 600)). */
  watchTimeoutSeconds?: [number, number];
  labelSelector?: string;
  fieldSelector?: string;
  onRequest?: RequestHook;
  /** Parses and projects list pages off the main thread (a worker); absent: on it. */
  readPage?: PageReader;
  /** Cuts list pages read on this thread down to what the kind reads before they are parsed (list-page.ts). */
  sieve?: JsonSieve;
}

export interface ReflectorCounters {
  /** Watch events applied (ADDED/MODIFIED/DELETED), and bookmarks. */
  events: number;
  bookmarks: number;
  /** Lists after the first (410 or failure recovery). */
  relists: number;
  /** List page requests asked again (429, 5xx, connection failures), and lists restarted after a 410. */
  listRetries: number;
  listRestarts: number;
  /** Watch restarts (error, close or watchdog). */
  restarts: number;
  watchdogFires: number;
  /** Objects skipped because they could not be read or projected. */
  malformed: number;
  /** When the last watch event or bookmark arrived (`controllerNow`, ms); absent before the first. */
  lastEventAt?: number;
}

export interface ReflectorCore<T> {
  readonly opts: ReflectorOptions<T>;
  readonly resource: string;
  readonly log: Logger;
  readonly store: ProjectionCache<T>;
  /** Aborted by stop(). */
  readonly signal: AbortSignal;
  readonly counters: ReflectorCounters;
  /** Where the next watch starts: the last list's, then the last event's or bookmark's. */
  rv: string;
}

export function newCounters(): ReflectorCounters {
  return { events: 0, bookmarks: 0, relists: 0, listRetries: 0, listRestarts: 0, restarts: 0, watchdogFires: 0, malformed: 0 };
}

/** One raw object: its key and resourceVersion when readable, its projection when valid. */
export interface ReadObject<T> {
  key: string;
  rv: string;
  entry?: StoreEntry<T>;
}

/** Reads one raw object; undefined when even its identity is unreadable. Never throws. */
export function readObject<T>(core: ReflectorCore<T>, raw: unknown): ReadObject<T> | undefined {
  return fromItem(core, readItem(core.opts.kind, raw));
}

/** A read item as the store takes it; a malformed one is counted and logged. */
export function fromItem<T>(core: ReflectorCore<T>, item: PageItem<T>): ReadObject<T> | undefined {
  if (item.key === undefined) {
    malformed(core, undefined, item.reason ?? 'unreadable');
    return undefined;
  }
  const rv = item.rv ?? '';
  if (item.reason !== undefined) {
    malformed(core, item.key, item.reason);
    return { key: item.key, rv };
  }
  const value = item.value as T;
  const unreadable = core.opts.kind.unreadableOf?.(value);
  if (unreadable !== undefined) malformed(core, item.key, unreadable.join('; '), 'object read in part: unreadable fields take their safe values');
  return { key: item.key, rv, entry: { value, rv } };
}

function malformed<T>(core: ReflectorCore<T>, key: string | undefined, reason: string, msg = 'skipping malformed object'): void {
  core.counters.malformed++;
  core.log.warn({ key, reason }, msg);
}
