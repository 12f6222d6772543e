/**
 * One page of a list, read into store entries: the page's own metadata and, per item, its key,
 * resourceVersion and projection (or why it could not be read). Reading a page is a pure
 * function of its bytes ({@link readPageBytes}, through the JSON sieve when one is given), so it
 * runs on the main thread or in a worker (the controller's default, sieving there); a page read
 * in a worker crosses back as compact JSON text ({@link encodePage}), which the main thread
 * decodes ({@link decodePage}).
 * `npm run bench:list-read` measures the readers side by side.
 */
import { packRv } from './packed-rv.js';
import { keyOf, readMeta, type ResourceKind } from './projections/read.js';
import type { JsonSieve } from './sieve/json-sieve.js';
import { listKeepSpec } from './sieve/keep-spec.js';

/** One listed item: a projection, or the reason it has none (`key` absent: not even its identity was readable). */
export interface PageItem<T> {
  key?: string;
  rv?: string;
  value?: T;
  reason?: string;
}

export interface ListPage<T> {
  items: Array<PageItem<T>>;
  resourceVersion?: string;
  continueToken?: string;
  /** Time spent on JSON.parse of the page and on the projections, ms (where they ran). */
  parseMs: number;
  projectMs: number;
  /** Read in a worker: the main thread's time decoding what the worker sent, ms. */
  decodeMs?: number;
}

/** Reads one raw object (as listed or watched). Never throws. */
export function readItem<T>(kind: ResourceKind<T>, raw: unknown): PageItem<T> {
  let key: string;
  let rv: string;
  try {
    const m = readMeta(raw, kind.namespaced);
    key = keyOf(m.namespace, m.name);
    rv = m.resourceVersion ?? '';
    // A kind read in part (nodes) projects anyway: its projection reads uid leniently and names it.
    if (m.bad !== undefined && !kind.unreadableOf) return { key, rv, reason: m.bad };
  } catch (err) {
    return { reason: err instanceof Error ? err.message : String(err) };
  }
  const p = kind.project(raw);
  return p.ok ? { key, rv, value: p.value } : { key, rv, reason: p.reason };
}

/** The list envelope: items and metadata. Throws on a body that is not a list. */
export function readListBody(body: unknown): { items: unknown[]; resourceVersion?: string; continueToken?: string } {
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

/** Parses and projects a page's text. Throws (like JSON.parse) only when the page itself is unreadable. */
export function projectPage<T>(kind: ResourceKind<T>, text: string): ListPage<T> {
  const t0 = performance.now();
  const body = readListBody(JSON.parse(text));
  const t1 = performance.now();
  const items = new Array<PageItem<T>>(body.items.length);
  for (let i = 0; i < items.length; i++) items[i] = readItem(kind, body.items[i]);
  const page: ListPage<T> = { items, parseMs: t1 - t0, projectMs: performance.now() - t1 };
  if (body.resourceVersion !== undefined) page.resourceVersion = body.resourceVersion;
  if (body.continueToken !== undefined) page.continueToken = body.continueToken;
  return page;
}

/**
 * Reads a page's bytes on this thread: through the sieve (kube/sieve) when the kind names what it
 * reads (`kind.keep`), so JSON.parse builds only those members; whole otherwise, and whenever the
 * sieve declines the page (invalid JSON then throws from JSON.parse as before; valid JSON the
 * sieve leaves alone, such as an escaped key, reads whole). The sieve's time counts as parse time.
 */
export function readPageBytes<T>(kind: ResourceKind<T>, body: Buffer, sieve?: JsonSieve): ListPage<T> {
  if (sieve === undefined || kind.keep === undefined) return projectPage(kind, body.toString('utf8'));
  const t0 = performance.now();
  const slim = sieve.sieve(listKeepSpec(kind.keep), body);
  const sieveMs = performance.now() - t0;
  const page = projectPage(kind, slim.ok ? slim.text : body.toString('utf8'));
  page.parseMs += sieveMs;
  return page;
}

/**
 * A read page as JSON text: items as `[key, rv, value]` or `[key|null, rv|null, null, reason]`
 * arrays, so the text carries the projections and little else. A canonical rv goes as a JSON
 * number (packed-rv.ts): as a string of ten characters or fewer, the decoding JSON.parse would
 * internalise it, one old-generation string per listed object for a full collection to clear.
 */
export function encodePage<T>(page: ListPage<T>): string {
  const items = page.items.map((it) => (it.reason === undefined ? [it.key, packRv(it.rv ?? ''), it.value] : [it.key ?? null, it.rv ?? null, null, it.reason]));
  return JSON.stringify({ rv: page.resourceVersion ?? null, cont: page.continueToken ?? null, parseMs: page.parseMs, projectMs: page.projectMs, items });
}

type EncodedItem = [string | null, string | number | null, unknown, string?];

/**
 * The page {@link encodePage} wrote, with each projection's repeated strings pooled again
 * (`kind.reshare`): the text's parse made a fresh copy of each. `parseMs`/`projectMs` are
 * those of the thread that read the page, `decodeMs` this one's.
 */
export function decodePage<T>(kind: ResourceKind<T>, text: string): ListPage<T> {
  const t0 = performance.now();
  const e = JSON.parse(text) as { rv: string | null; cont: string | null; parseMs: number; projectMs: number; items: EncodedItem[] };
  const items = new Array<PageItem<T>>(e.items.length);
  for (let i = 0; i < items.length; i++) {
    const [key, rv, value, reason] = e.items[i]!;
    if (reason !== undefined) {
      items[i] = key === null ? { reason } : { key, rv: rv === null ? '' : String(rv), reason };
    } else {
      items[i] = { key: key as string, rv: String(rv), value: kind.reshare ? kind.reshare(value as T) : (value as T) };
    }
  }
  const page: ListPage<T> = { items, parseMs: e.parseMs, projectMs: e.projectMs, decodeMs: performance.now() - t0 };
  if (e.rv !== null) page.resourceVersion = e.rv;
  if (e.cont !== null) page.continueToken = e.cont;
  return page;
}

/** Reads a page's bytes somewhere else (a worker): resolves to the page as {@link projectPage} would return it. */
export type PageReader = <T>(kind: ResourceKind<T>, body: Buffer) => Promise<ListPage<T>>;
