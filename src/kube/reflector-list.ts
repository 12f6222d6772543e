/**
 * The list half of a reflector: one full paged list (list-pages.ts) replacing the store's
 * contents, with deletes for what vanished and updates only where the resourceVersion changed.
 * Throws when the list fails; the reflector's loop backs off and lists again.
 *
 * Into an empty store (the first list) each page's objects are added as the page arrives: there
 * is nothing to delete, so holding them back to the end would only make the end one long block
 * (~0.7–0.9 s per resource at 50k nodes, every handler's add in a row) during which the other
 * lists' pages wait. The reflector is not synced before the list ends, whichever way it fills;
 * a first list that fails leaves what it added for the next list to replace.
 * A relist, or a first list restarted after objects went in, collects the whole list and then
 * replaces the store's contents in chunks (applyInChunks): a list that fails changes nothing, and
 * a long relist does not hold the thread.
 */
import { setImmediate } from 'node:timers/promises';
import { statusCodeOf } from './kube-errors.js';
import { readPageBytes, type ListPage } from './list-page.js';
import { listPages, type ListSummary } from './list-pages.js';
import type { ReplaceCounts, StoreEntry } from './projection-store.js';
import { getBody } from './raw-request.js';
import { fromItem, type ReflectorCore } from './reflector-core.js';
import { report } from './request-hook.js';

export async function listIntoStore<T>(core: ReflectorCore<T>): Promise<ListSummary> {
  const { opts, resource } = core;
  let listed = new Map<string, StoreEntry<T>>();
  /** Listed but unprojectable: kept as last seen instead of deleted. */
  let unprojectable = new Set<string>();
  /**
   * Objects go straight into the store (see above) on the reflector's first list only: a relist
   * into a store that happens to be empty (no VolumeAttachments yet) runs after the sync, and a
   * failed list must change nothing there.
   */
  const first = core.counters.relists === 0;
  let direct = first && core.store.size === 0;
  /** Added directly, over every attempt of this list. */
  let added = 0;
  const summary = await listPages({
    signal: core.signal,
    retry: opts.listRetry,
    prefetch: opts.prefetch ?? true,
    fetchPage: async ({ continueToken, signal, onHead }) => {
      const t0 = performance.now();
      let res;
      try {
        res = await getBody(
          opts.kc,
          opts.kind.path,
          { limit: opts.pageSize ?? 500, continue: continueToken, labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector },
          { signal, timeoutMs: opts.requestTimeoutMs ?? 60_000, onHead },
        );
        report(opts.onRequest, { verb: 'list', resource, code: res.status, durationMs: performance.now() - t0 });
      } catch (err) {
        if (!signal.aborted) report(opts.onRequest, { verb: 'list', resource, code: statusCodeOf(err), durationMs: performance.now() - t0 });
        throw err;
      }
      const bytes = res.body.length; // read before a worker takes the body
      if (opts.readPage) {
        const page = await opts.readPage(opts.kind, res.body);
        return { ...pageParts(page), bytes, parseMs: page.decodeMs ?? 0, projectMs: 0, offThreadMs: page.parseMs + page.projectMs };
      }
      const page = readPageBytes(opts.kind, res.body, opts.sieve);
      return { ...pageParts(page), bytes, parseMs: page.parseMs, projectMs: page.projectMs };
    },
    onItem: (item) => {
      const r = fromItem(core, item);
      if (!r) return;
      if (direct) {
        // An unprojectable object has no last-seen version to keep in an empty store.
        if (r.entry) {
          core.store.upsert(r.key, r.entry.value, r.entry.rv);
          added++;
        }
      } else if (r.entry) listed.set(r.key, r.entry);
      else unprojectable.add(r.key);
    },
    onRetry: ({ code, attempt, delayMs, continueToken }) => {
      core.counters.listRetries++;
      core.log.info({ code, attempt, delayMs: Math.round(delayMs), page: continueToken ? 'continue' : 'first' }, 'list page failed; retrying');
    },
    onRestart: (err) => {
      core.counters.listRestarts++;
      core.log.info({ code: statusCodeOf(err) }, 'list continue token expired; listing again from the first page');
      listed = new Map();
      unprojectable = new Set();
      direct = first && core.store.size === 0; // what the failed attempt added may have vanished since
    },
  });
  const changes = direct ? { added, updated: 0, deleted: 0 } : await applyInChunks(core, listed, unprojectable);
  if (!direct) changes.added += added;
  core.rv = summary.resourceVersion;
  core.log.info({ ...summary, ...changes }, 'listed');
  return summary;
}

/**
 * The store's replace in chunks of {@link APPLY_CHUNK} objects with a turn of the event loop
 * between them, listed objects first and deletions last (ProjectionStore.replaceInChunks says
 * why). A relist of a million pods applied in one block held the thread ~1.6 s,
 * long enough for seven relists at once (an API server that lost its watch history) to stall
 * passes, probes and the lease renewal. Stops, as the list would, if the reflector stops.
 */
async function applyInChunks<T>(core: ReflectorCore<T>, listed: Map<string, StoreEntry<T>>, present: ReadonlySet<string>): Promise<ReplaceCounts> {
  const steps = core.store.replaceInChunks(listed, present, APPLY_CHUNK);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await setImmediate();
    if (core.signal.aborted) throw new Error(`${core.resource}: stopped while applying a relist`);
  }
}

/** Objects a relist applies per turn of the event loop (a few ms with the handlers). */
export const APPLY_CHUNK = 4096;

function pageParts<T>(page: ListPage<T>) {
  return {
    items: page.items,
    ...(page.resourceVersion !== undefined ? { resourceVersion: page.resourceVersion } : {}),
    ...(page.continueToken !== undefined ? { continueToken: page.continueToken } : {}),
  };
}
