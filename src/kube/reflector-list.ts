/**
 * The list half of a reflector: one full paged list (list-pages.ts) replacing the store's
 * contents, with deletes for what vanished and updates only where the resourceVersion changed.
 * Throws when the list fails; the reflector's loop backs off and lists again.
 */
import { statusCodeOf } from './kube-errors.js';
import { readPageBytes, type ListPage } from './list-page.js';
import { listPages, type ListSummary } from './list-pages.js';
import type { StoreEntry } from './projection-store.js';
import { getBody } from './raw-request.js';
import { fromItem, type ReflectorCore } from './reflector-core.js';
import { report } from './request-hook.js';

export async function listIntoStore<T>(core: ReflectorCore<T>): Promise<ListSummary> {
  const { opts, resource } = core;
  let listed = new Map<string, StoreEntry<T>>();
  /** Listed but unprojectable: kept as last seen instead of deleted. */
  let unprojectable = new Set<string>();
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
      if (r.entry) listed.set(r.key, r.entry);
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
    },
  });
  const changes = core.store.replace(listed, unprojectable);
  core.rv = summary.resourceVersion;
  core.log.info({ ...summary, ...changes }, 'listed');
  return summary;
}

function pageParts<T>(page: ListPage<T>) {
  return {
    items: page.items,
    ...(page.resourceVersion !== undefined ? { resourceVersion: page.resourceVersion } : {}),
    ...(page.continueToken !== undefined ? { continueToken: page.continueToken } : {}),
  };
}
