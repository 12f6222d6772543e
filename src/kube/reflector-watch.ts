/**
 * The watch half of a reflector: one watch from the current resourceVersion (watch-once.ts)
 * with bookmarks, its events applied to the store, the resourceVersion advanced on every event
 * and bookmark. Resolves with how the watch ended; the reflector decides what comes next.
 */
import { readObject, type ReflectorCore } from './reflector-core.js';
import { report } from './request-hook.js';
import { watchOnce, type WatchEnd } from './watch-once.js';
import { controllerNow } from '../cache/controller-clock.js';

export interface WatchRun {
  ended: Promise<WatchEnd>;
  end(why: WatchEnd): void;
}

/** Starts one watch from `core.rv`; `onHealthy` is called on each event (the loop decides about its backoff). */
export function watchIntoStore<T>(core: ReflectorCore<T>, watchdogMs: number, onHealthy: () => void): WatchRun {
  const { opts } = core;
  const [lo, hi] = opts.watchTimeoutSeconds ?? [300, 600];
  return watchOnce({
    kc: opts.kc,
    path: opts.kind.path,
    query: {
      resourceVersion: core.rv,
      allowWatchBookmarks: true,
      timeoutSeconds: Math.floor(lo + Math.random() * Math.max(0, hi - lo)),
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
    },
    watchdogMs,
    onEvent: (type, obj) => {
      onHealthy();
      apply(core, type, obj);
    },
    onStarted: (code, durationMs) => report(opts.onRequest, { verb: 'watch', resource: core.resource, code, durationMs }),
    onFailure: (code, detail) => core.log.debug({ code, detail }, 'watch ended with an error'),
    onWatchdog: () => core.log.warn({ watchdogMs, rv: core.rv }, 'no watch event within the watchdog period; restarting watch'),
  });
}

function apply<T>(core: ReflectorCore<T>, type: string, raw: unknown): void {
  core.counters.lastEventAt = controllerNow();
  if (type === 'BOOKMARK') {
    core.counters.bookmarks++;
    const rv = bookmarkRv(raw);
    if (rv) core.rv = rv;
    return;
  }
  if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') {
    core.log.warn({ type }, 'unknown watch event type');
    return;
  }
  core.counters.events++;
  const r = readObject(core, raw);
  if (!r) return;
  if (r.rv) core.rv = r.rv;
  if (type === 'DELETED') core.store.remove(r.key, r.entry?.value);
  else if (r.entry) core.store.upsert(r.key, r.entry.value, r.entry.rv);
}

function bookmarkRv(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const m = (raw as { metadata?: { resourceVersion?: unknown } }).metadata;
  return typeof m?.resourceVersion === 'string' && m.resourceVersion !== '' ? m.resourceVersion : undefined;
}
