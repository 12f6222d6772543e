/**
 * Paged list (`limit` / `continue`): fetches every page of one consistent snapshot, hands each
 * item to `onItem` as it arrives (so a page's raw JSON can be dropped before the next is read),
 * and measures where the time goes.
 *
 * - Pipelined: the next page is requested as soon as the current page's continue token shows in
 *   the start of its body (list-head.ts), so the server produces page n+1 while page n is still
 *   being received, parsed and projected. At most one page is requested ahead (two or more
 *   measured no faster: `npm run bench:e2e -- --nodes 10000`, two runs each).
 * - Each page request is retried on 429 and transient failures (list-retry.ts).
 * - An expired continue token (410) restarts the list from the first page, as client-go's pager
 *   does, after `onRestart` (the caller forgets what it collected); after `maxRestarts` the list
 *   fails. So does a malformed page, or any other failure; the caller then starts over later.
 */
import { statusCodeOf } from './kube-errors.js';
import { continueInHead } from './list-head.js';
import { withListRetries, type ListRetryPolicy, type RetryNotice } from './list-retry.js';

export interface ListSummary {
  /** The snapshot's resourceVersion (the watch starts from it). */
  resourceVersion: string;
  pages: number;
  items: number;
  bytes: number;
  /**
   * Time the list waited for pages (server, transfer, retries, a worker: total less parse and
   * projection), and the main thread's parse and projection (with onItem), summed over pages (ms).
   */
  fetchMs: number;
  parseMs: number;
  projectMs: number;
  /** Parse and projection done in a worker meanwhile (ms; 0 when pages are read on the main thread). */
  offThreadMs: number;
  totalMs: number;
  /** Page requests asked again (429 or transient failure). */
  retries: number;
  /** Starts from the first page again after a 410. */
  restarts: number;
}

export interface PageRequest {
  continueToken: string | undefined;
  /** Aborts when the list no longer needs this page (stopped, failed, or a wrong prefetch). */
  signal: AbortSignal;
  /** Pass to getBody (raw-request.ts): it reads the continue token from the start of the body. */
  onHead(head: string): boolean;
}

/** One page as fetched and read: its items and list metadata, and what reading it cost. */
export interface PageResponse<I> {
  items: I[];
  resourceVersion?: string;
  continueToken?: string;
  bytes: number;
  /** Main-thread parse and projection of the page, ms. */
  parseMs: number;
  projectMs: number;
  /** The same done in a worker, ms. */
  offThreadMs?: number;
}

export interface ListPagesOptions<I> {
  /** One attempt at one page; it must hand `signal` and `onHead` to the request. */
  fetchPage(req: PageRequest): Promise<PageResponse<I>>;
  onItem(item: I): void;
  /** The list starts over from the first page: forget every item delivered so far. */
  onRestart?(err: unknown): void;
  onRetry?(n: RetryNotice & { continueToken: string | undefined }): void;
  retry?: ListRetryPolicy;
  /** Restarts after a 410 before the list fails (default 3). */
  maxRestarts?: number;
  /** Request the next page while the current one is processed (default true). */
  prefetch?: boolean;
  signal?: AbortSignal;
}

/** One page request (with its retries) under way. */
interface Pending<I> {
  continueToken: string | undefined;
  response: Promise<PageResponse<I>>;
  abort: AbortController;
  head: HeadState;
}

/** The next page's token once read from a page's head (undefined: last page, or unreadable). */
interface HeadState {
  seen: boolean;
  token: string | undefined;
  /** Told the token when it is read, if set by then. */
  onToken: ((token: string | undefined) => void) | undefined;
}

export async function listPages<I>(opts: ListPagesOptions<I>): Promise<ListSummary> {
  const t0 = performance.now();
  const s: ListSummary = { resourceVersion: '', pages: 0, items: 0, bytes: 0, fetchMs: 0, parseMs: 0, projectMs: 0, offThreadMs: 0, totalMs: 0, retries: 0, restarts: 0 };
  const maxRestarts = opts.maxRestarts ?? 3;
  const prefetch = opts.prefetch ?? true;
  const open = new Set<Pending<I>>();

  const request = (continueToken: string | undefined): Pending<I> => {
    const abort = new AbortController();
    const onOuterAbort = () => abort.abort();
    opts.signal?.addEventListener('abort', onOuterAbort, { once: true });
    if (opts.signal?.aborted) abort.abort();
    const head: HeadState = { seen: false, token: undefined, onToken: undefined };
    const onHead = (text: string): boolean => {
      if (head.seen) return true;
      const scan = continueInHead(text);
      if (!scan.done) return false;
      head.seen = true;
      head.token = scan.token;
      head.onToken?.(scan.token);
      return true;
    };
    const response = withListRetries(() => opts.fetchPage({ continueToken, signal: abort.signal, onHead }), {
      policy: opts.retry,
      signal: abort.signal,
      onRetry: (n) => {
        s.retries++;
        opts.onRetry?.({ ...n, continueToken });
      },
    }).finally(() => {
      opts.signal?.removeEventListener('abort', onOuterAbort);
      open.delete(p);
    });
    const p: Pending<I> = { continueToken, response, abort, head };
    p.response.catch(() => {}); // a prefetched page may be dropped unawaited
    open.add(p);
    return p;
  };

  try {
    let cur = request(undefined);
    for (;;) {
      let next: Pending<I> | undefined;
      const ahead = (token: string | undefined) => {
        if (prefetch && token !== undefined && next === undefined) next = request(token);
      };
      if (cur.head.seen) ahead(cur.head.token);
      else cur.head.onToken = ahead;
      let res: PageResponse<I>;
      try {
        res = await cur.response;
      } catch (err) {
        next?.abort.abort();
        if (statusCodeOf(err) !== 410 || opts.signal?.aborted || s.restarts >= maxRestarts) throw err;
        s.restarts++;
        s.items = 0;
        s.resourceVersion = '';
        opts.onRestart?.(err);
        cur = request(undefined);
        continue;
      }
      cur.head.onToken = undefined;
      s.pages++;
      s.bytes += res.bytes;
      s.parseMs += res.parseMs;
      s.projectMs += res.projectMs;
      s.offThreadMs += res.offThreadMs ?? 0;
      const { items, resourceVersion, continueToken } = res;
      if (next && next.continueToken !== continueToken) {
        next.abort.abort();
        next = undefined;
      }
      const p0 = performance.now();
      for (const item of items) opts.onItem(item);
      s.projectMs += performance.now() - p0;
      s.items += items.length;
      if (resourceVersion) s.resourceVersion = resourceVersion;
      if (continueToken === undefined) break;
      cur = next ?? request(continueToken);
    }
  } finally {
    for (const p of open) p.abort.abort();
  }
  if (!s.resourceVersion) throw new Error('list response has no metadata.resourceVersion');
  s.totalMs = performance.now() - t0;
  s.fetchMs = Math.max(0, s.totalMs - s.parseMs - s.projectMs);
  return s;
}
