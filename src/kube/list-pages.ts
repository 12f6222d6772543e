/**
 * Paged list (`limit` / `continue`): fetches every page of one consistent snapshot, hands each
 * item to `onItem` as it arrives (so a page's raw JSON can be dropped before the next is read),
 * and measures where the time goes.
 *
 * An expired continue token (410) or a malformed page rejects the whole list; the caller starts
 * over from the first page.
 */
import type { RawJsonResponse } from './raw-request.js';

export interface ListSummary {
  /** The snapshot's resourceVersion (the watch starts from it). */
  resourceVersion: string;
  pages: number;
  items: number;
  bytes: number;
  /** Request + body transfer, JSON.parse, and the onItem projections, summed over pages (ms). */
  fetchMs: number;
  parseMs: number;
  projectMs: number;
  totalMs: number;
}

export interface ListPagesOptions {
  fetchPage(continueToken: string | undefined): Promise<RawJsonResponse>;
  onItem(raw: unknown): void;
}

export async function listPages(opts: ListPagesOptions): Promise<ListSummary> {
  const t0 = performance.now();
  const s: ListSummary = { resourceVersion: '', pages: 0, items: 0, bytes: 0, fetchMs: 0, parseMs: 0, projectMs: 0, totalMs: 0 };
  let cont: string | undefined;
  do {
    const res = await opts.fetchPage(cont);
    s.pages++;
    s.bytes += res.bytes;
    s.fetchMs += res.fetchMs;
    s.parseMs += res.parseMs;
    const { items, resourceVersion, continueToken } = readListPage(res.body);
    const p0 = performance.now();
    for (const item of items) opts.onItem(item);
    s.projectMs += performance.now() - p0;
    s.items += items.length;
    if (resourceVersion) s.resourceVersion = resourceVersion;
    cont = continueToken;
  } while (cont);
  if (!s.resourceVersion) throw new Error('list response has no metadata.resourceVersion');
  s.totalMs = performance.now() - t0;
  return s;
}

function readListPage(body: unknown): { items: unknown[]; resourceVersion?: string; continueToken?: string } {
  if (typeof body !== 'object' || body === null) throw new Error('list response is not an object');
  const b = body as { items?: unknown; metadata?: { resourceVersion?: unknown; continue?: unknown } };
  if (b.items !== undefined && b.items !== null && !Array.isArray(b.items)) throw new Error('list response items is not an array');
  const rv = b.metadata?.resourceVersion;
  const cont = b.metadata?.continue;
  return {
    items: Array.isArray(b.items) ? b.items : [],
    ...(typeof rv === 'string' && rv !== '' ? { resourceVersion: rv } : {}),
    ...(typeof cont === 'string' && cont !== '' ? { continueToken: cont } : {}),
  };
}
