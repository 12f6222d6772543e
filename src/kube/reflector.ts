/**
 * Reflector: our own list+watch for one resource, mirrored into a projection cache: a packed
 * store for the kinds with a codec, a {@link ProjectionStore} for the others. What `get`,
 * `values` and handlers receive may be a transient copy (ProjectionCache): use it, don't keep it.
 *
 * Why not client-node's informer (1.4): it lists without pagination, never asks for bookmarks,
 * stops on any non-410 error, and has no timeout on a silently dead watch. This one:
 * - lists in pages (`limit`/`continue`) through raw GETs, projecting each item on arrival, the
 *   next page requested while the current one is processed, a failed page retried (429 after
 *   Retry-After, 5xx and connection failures with backoff), an expired continue token
 *   restarting the list (reflector-list.ts, list-pages.ts);
 * - watches (client-node `Watch`) from the list's resourceVersion with `allowWatchBookmarks`,
 *   advancing the resourceVersion on every event including bookmarks (reflector-watch.ts);
 * - relists on 410 Gone (HTTP status or an ERROR event), emitting deletes for vanished objects
 *   and updates only where the resourceVersion changed;
 * - relists after backoff when the server refuses a watch or ends it with an ERROR event, as
 *   client-go does; restarts the watch on a network error or close, with jittered exponential
 *   backoff that a watch which delivered events resets (not one the server then refused);
 * - aborts and restarts a watch on which nothing, not even a bookmark, arrived for `watchdogMs`.
 * Malformed objects are skipped, logged and counted; nothing is thrown out of the loop.
 */
import { logger } from '../log/logger.js';
import { createBackoff, type Backoff } from './backoff.js';
import { statusCodeOf } from './kube-errors.js';
import type { ListSummary } from './list-pages.js';
import { PackedStore } from './packed-store.js';
import { ProjectionStore, type ProjectionCache, type ProjectionHandler } from './projection-store.js';
import { newCounters, type ReflectorCore, type ReflectorCounters, type ReflectorOptions } from './reflector-core.js';
import { listIntoStore } from './reflector-list.js';
import { watchIntoStore } from './reflector-watch.js';
import type { WatchEnd } from './watch-once.js';

export type { ReflectorOptions } from './reflector-core.js';

export interface ReflectorStats extends ReflectorCounters {
  resource: string;
  synced: boolean;
  objects: number;
  resourceVersion: string;
  lastList?: ListSummary;
}

export interface Reflector<T> {
  readonly resource: string;
  /** Runs until `signal` aborts or {@link stop}; the promise resolves then and never rejects. */
  start(signal?: AbortSignal): Promise<void>;
  /** Stops list, watch and timers; resolves when the loop has exited. Idempotent. */
  stop(): Promise<void>;
  /** True once the first list has been applied; stays true across relists. */
  synced(): boolean;
  /** Calls `cb` once when synced (at once if already); returns an unsubscribe. */
  onSynced(cb: () => void): () => void;
  addHandler(h: ProjectionHandler<T>): () => void;
  get(key: string): T | undefined;
  /** The resourceVersion the cached object was read at, or undefined when it is not cached. */
  resourceVersionOf(key: string): string | undefined;
  values(): IterableIterator<T>;
  keys(): IterableIterator<string>;
  size(): number;
  stats(): ReflectorStats;
}

/** A packed store for a kind with a codec (the kinds whose count grows with the fleet), else a Map of the objects. */
function storeFor<T>(opts: ReflectorOptions<T>, log: ReturnType<typeof logger>): ProjectionCache<T> {
  const { codec, keepFrom } = opts.kind;
  return codec ? new PackedStore<T>(log, codec) : new ProjectionStore<T>(log, keepFrom);
}

/** A watch that lasted this long resets the backoff however it ended. */
const HEALTHY_WATCH_MS = 120_000;

export function createReflector<T>(opts: ReflectorOptions<T>): Reflector<T> {
  return new ListWatchReflector(opts);
}

class ListWatchReflector<T> implements Reflector<T> {
  readonly resource: string;
  private readonly core: ReflectorCore<T>;
  private readonly backoff: Backoff;
  private readonly watchdogMs: number;
  private readonly abort = new AbortController();
  private readonly syncWaiters = new Set<() => void>();
  private running: Promise<void> | undefined;
  private endWatch: ((e: WatchEnd) => void) | undefined;
  private isSynced = false;
  private lastList: ListSummary | undefined;

  constructor(opts: ReflectorOptions<T>) {
    this.resource = opts.kind.resource;
    const log = logger('reflector').child({ resource: this.resource });
    this.core = { opts, resource: this.resource, log, store: storeFor(opts, log), signal: this.abort.signal, counters: newCounters(), rv: '' };
    this.backoff = createBackoff(opts.backoff ?? { initialMs: 200, maxMs: 30_000 });
    this.watchdogMs = opts.watchdogMs ?? 3 * (opts.bookmarkIntervalMs ?? 60_000);
  }

  start(signal?: AbortSignal): Promise<void> {
    if (signal) {
      if (signal.aborted) void this.stop();
      else signal.addEventListener('abort', () => void this.stop(), { once: true });
    }
    this.running ??= this.run();
    return this.running;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.endWatch?.('stopped');
    await this.running;
  }

  synced(): boolean {
    return this.isSynced;
  }

  onSynced(cb: () => void): () => void {
    if (this.isSynced) {
      cb();
      return () => {};
    }
    this.syncWaiters.add(cb);
    return () => this.syncWaiters.delete(cb);
  }

  addHandler(h: ProjectionHandler<T>): () => void {
    return this.core.store.addHandler(h);
  }
  get(key: string): T | undefined {
    return this.core.store.get(key);
  }

  resourceVersionOf(key: string): string | undefined {
    return this.core.store.resourceVersionOf(key);
  }
  values(): IterableIterator<T> {
    return this.core.store.values();
  }
  keys(): IterableIterator<string> {
    return this.core.store.keys();
  }
  size(): number {
    return this.core.store.size;
  }

  stats(): ReflectorStats {
    return {
      resource: this.resource,
      synced: this.isSynced,
      objects: this.core.store.size,
      resourceVersion: this.core.rv,
      ...this.core.counters,
      ...(this.lastList ? { lastList: this.lastList } : {}),
    };
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private async run(): Promise<void> {
    const { log, counters } = this.core;
    let needList = true;
    let lists = 0;
    while (!this.stopped) {
      if (needList) {
        try {
          if (lists++ > 0) counters.relists++;
          this.lastList = await listIntoStore(this.core);
          needList = false;
          this.markSynced();
        } catch (err) {
          if (this.stopped) break;
          log.warn({ err, code: statusCodeOf(err) }, 'list failed; retrying');
          await this.sleep(this.backoff.next());
          continue;
        }
      }
      const end = await this.watch();
      if (end === 'stopped' || this.stopped) break;
      if (end === 'gone') {
        log.info({ rv: this.core.rv }, 'resourceVersion expired; relisting');
        needList = true;
        continue;
      }
      if (end === 'failed') {
        // As client-go's ListAndWatch returns: a watch the server refuses (RBAC, a proxy, an
        // ERROR event) must not leave the store at its last list for good.
        const delay = this.backoff.next();
        log.warn({ rv: this.core.rv, delayMs: Math.round(delay) }, 'watch failed; relisting');
        needList = true;
        await this.sleep(delay);
        continue;
      }
      counters.restarts++;
      if (end === 'watchdog') counters.watchdogFires++;
      const delay = this.backoff.next();
      log.debug({ end, delayMs: Math.round(delay) }, 'watch ended; restarting');
      await this.sleep(delay);
    }
  }

  private markSynced(): void {
    if (this.isSynced) return;
    this.isSynced = true;
    for (const cb of [...this.syncWaiters]) cb();
    this.syncWaiters.clear();
  }

  /**
   * One watch from the current resourceVersion; resolves with how it ended. The backoff starts
   * over after a watch that delivered events, unless the server then refused it (`failed`, a
   * relist): a watch that gets one event and then an ERROR would otherwise relist the whole
   * collection every few hundred ms. A watch that ran {@link HEALTHY_WATCH_MS} resets it anyway,
   * as client-go's backoff resets after two minutes without a failure.
   */
  private async watch(): Promise<WatchEnd> {
    if (this.stopped) return 'stopped';
    let delivered = false;
    const t0 = performance.now();
    const w = watchIntoStore(this.core, this.watchdogMs, () => (delivered = true));
    this.endWatch = w.end;
    const end = await w.ended;
    this.endWatch = undefined;
    if ((delivered && end !== 'failed') || performance.now() - t0 >= HEALTHY_WATCH_MS) this.backoff.reset();
    return end;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopped) return resolve();
      const signal = this.abort.signal;
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
