/**
 * get, list and watch. Lists page in key order with an opaque `continue` token holding the
 * list's resourceVersion and the last key returned, so that every object that exists for the
 * whole paginated list is returned exactly once, even under concurrent writes (an object
 * written between pages appears in its newer state; the watch from the list's
 * resourceVersion replays those writes). Watches replay from the event window or the current
 * state, then stream live events.
 */
import type { ServerResponse } from 'node:http';
import { resourceDetails, type CommittedEvent, type KubeObject, type ServableStore } from '../store/index.js';
import type { ResourceInfo } from '../store/resources.js';
import type { Client } from './client-faults.js';
import { writeList, writeListBytes } from './list-writer.js';
import { compileSelector, type Selector } from './selectors.js';
import { ApiError, badRequest, expired, notFound, sendJson, statusObject } from './status.js';
import { includeObjectOf, toTable, wantsTable } from './table.js';
import { bookmarkFrame, frameFor, typeFor, type WatchHub } from './watch-hub.js';

export interface ReadContext {
  store: ServableStore;
  hub: WatchHub;
  /** Who reads (watches are tagged with it for per-client faults). */
  client?: Client;
}

export interface ResourceTarget {
  info: ResourceInfo;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export function handleGet(ctx: ReadContext, t: ResourceTarget, q: URLSearchParams, accept: string | undefined, res: ServerResponse): void {
  if (t.subresource !== undefined && !(t.subresource === 'status' && t.info.status)) throw notFound();
  const notFoundHere = () => new ApiError(404, 'NotFound', `${qualifiedName(t.info)} "${t.name}" not found`, resourceDetails(t.info, t.name ?? ''));
  if (!wantsTable(accept)) {
    const bytes = ctx.store.getBytes(t.info.name, t.namespace, t.name as string);
    if (bytes === undefined) throw notFoundHere();
    return sendJson(res, 200, bytes);
  }
  const json = ctx.store.getJson(t.info.name, t.namespace, t.name as string);
  if (json === undefined) throw notFoundHere();
  const obj = JSON.parse(json) as KubeObject;
  sendJson(res, 200, toTable(t.info, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObjectOf(q)));
}

export function qualifiedName(info: ResourceInfo): string {
  return info.group === '' ? info.name : `${info.name}.${info.group}`;
}

function selectorOf(info: ResourceInfo, q: URLSearchParams): Selector | undefined {
  return compileSelector(info, q.get('labelSelector'), q.get('fieldSelector'));
}

function parseRv(raw: string): number {
  if (!/^\d+$/.test(raw)) throw badRequest(`invalid resource version: "${raw}"`);
  return Number(raw);
}

interface ContinueToken { rv: number; key: string }

function encodeContinue(tok: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: tok.rv, start: tok.key })).toString('base64url');
}

function decodeContinue(raw: string): ContinueToken {
  try {
    const o = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { rv?: unknown; start?: unknown };
    if (typeof o.rv === 'number' && typeof o.start === 'string') return { rv: o.rv, key: o.start };
  } catch {
    // fall through
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}

/** Items the selector keeps, using the store's indexes for name, namespace and node hints. */
function page(store: ServableStore, t: ResourceTarget, sel: Selector | undefined, after: string | undefined, limit: number) {
  const namespace = t.namespace ?? (t.info.namespaced ? sel?.namespace : undefined);
  if (sel?.name !== undefined && (namespace !== undefined || !t.info.namespaced)) {
    const json = store.getJson(t.info.name, namespace, sel.name);
    const key = t.info.namespaced ? `${namespace}/${sel.name}` : sel.name;
    const keep = json !== undefined && (after === undefined || key > after) && sel.matches(JSON.parse(json) as KubeObject);
    return { items: keep ? [json as string] : [], lastKey: keep ? key : undefined, more: false };
  }
  const filter = sel ? (json: string) => sel.matches(JSON.parse(json) as KubeObject) : undefined;
  return store.listPage(t.info.name, { namespace, after, limit, nodeName: sel?.nodeName, filter });
}

export async function handleList(ctx: ReadContext, t: ResourceTarget, q: URLSearchParams, accept: string | undefined, res: ServerResponse): Promise<void> {
  const sel = selectorOf(t.info, q);
  const limitRaw = q.get('limit');
  const limit = limitRaw ? Number(limitRaw) : 0;
  if (!Number.isInteger(limit) || limit < 0) throw badRequest(`invalid limit: "${limitRaw}"`);
  const cont = q.get('continue');
  const current = ctx.store.resourceVersion();
  let listRv = current;
  let after: string | undefined;
  if (cont) {
    const tok = decodeContinue(cont);
    listRv = tok.rv;
    after = tok.key;
  } else {
    const rvRaw = q.get('resourceVersion');
    if (rvRaw && rvRaw !== '0') {
      const rv = parseRv(rvRaw);
      if (rv > current) {
        throw new ApiError(504, 'Timeout', `Too large resource version: ${rv}, current: ${current}`, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 });
      }
      if (q.get('resourceVersionMatch') === 'Exact' && rv !== current) throw expired(`too old resource version: ${rv} (${current})`);
    }
  }
  if (!wantsTable(accept) && (sel === undefined || sel.name === undefined)) {
    // The stored bytes straight into the response: no string per item.
    const namespace = t.namespace ?? (t.info.namespaced ? sel?.namespace : undefined);
    const filter = sel ? (json: string) => sel.matches(JSON.parse(json) as KubeObject) : undefined;
    const bp = ctx.store.listPageBytes(t.info.name, { namespace, after, limit, nodeName: sel?.nodeName, filter });
    const next = bp.more && bp.lastKey !== undefined ? encodeContinue({ rv: listRv, key: bp.lastKey }) : undefined;
    return writeListBytes(res, t.info, { resourceVersion: listRv, continueToken: next }, bp);
  }
  const p = page(ctx.store, t, sel, after, limit);
  const next = p.more && p.lastKey !== undefined ? encodeContinue({ rv: listRv, key: p.lastKey }) : undefined;
  if (wantsTable(accept)) {
    const objects = p.items.map((j) => JSON.parse(j) as KubeObject);
    return sendJson(res, 200, toTable(t.info, objects, { resourceVersion: String(listRv), ...(next ? { continue: next } : {}) }, includeObjectOf(q)));
  }
  await writeList(res, t.info, { resourceVersion: listRv, continueToken: next }, p.items);
}

export function isWatch(q: URLSearchParams): boolean {
  const w = q.get('watch');
  return w === '1' || w === 'true';
}

/** Default watch timeout: a random 30–60 minutes, as kube-apiserver's --min-request-timeout. */
function watchTimeoutMs(q: URLSearchParams): number {
  const raw = q.get('timeoutSeconds');
  if (raw) {
    const s = Number(raw);
    if (!Number.isFinite(s) || s < 0) throw badRequest(`invalid timeoutSeconds: "${raw}"`);
    if (s > 0) return s * 1000;
  }
  return (1800 + Math.random() * 1800) * 1000;
}

export function handleWatch(ctx: ReadContext, t: ResourceTarget, q: URLSearchParams, accept: string | undefined, res: ServerResponse): void {
  if (t.name !== undefined) throw badRequest('watch of a single object: use fieldSelector=metadata.name=<name> on the collection');
  const sel = selectorOf(t.info, q);
  const bookmarks = q.get('allowWatchBookmarks') === 'true' || q.get('allowWatchBookmarks') === '1';
  const timeoutMs = watchTimeoutMs(q);
  const rvRaw = q.get('resourceVersion') ?? '';
  const sendInitial = q.get('sendInitialEvents');
  const namespace = t.namespace;
  const format = wantsTable(accept) ? tableFormat(t.info, includeObjectOf(q)) : undefined;
  const open = (replay: Iterable<Buffer | string>) => ctx.hub.open({ res, info: t.info, namespace, selector: sel, bookmarks, timeoutMs, replay, format, client: ctx.client });

  if (rvRaw === '' || rvRaw === '0' || sendInitial === 'true') {
    if (sendInitial === 'false') return void open([]);
    // Synthetic ADDED events for the current state, then live events.
    const items = page(ctx.store, t, sel, undefined, 0).items;
    const rv = ctx.store.resourceVersion();
    const endMark = sendInitial === 'true' && bookmarks ? bookmarkFrame(t.info, rv, true) : undefined;
    return void open(initialFrames(items, endMark, format));
  }
  const rv = parseRv(rvRaw);
  const events = ctx.store.eventsAfter(t.info.name, rv);
  if (events === undefined) {
    const status = statusObject(410, 'Expired', `too old resource version: ${rv} (${ctx.store.oldestResumableRv(t.info.name)})`);
    return void open([`{"type":"ERROR","object":${JSON.stringify(status)}}\n`]).end();
  }
  open(windowFrames(events, namespace, sel, format));
}

/**
 * The frames of a resumed watch, built as the stream takes them: the events are the window's
 * at the request (immutable), and a resume after a long gap may replay ~100,000 of them, which
 * built at once held the loop for a second and some 70 MB of buffers before the first byte.
 */
function* windowFrames(events: readonly CommittedEvent[], namespace: string | undefined, sel: Selector | undefined, format: Format | undefined): Generator<Buffer> {
  for (const ev of events) {
    if (namespace !== undefined && ev.namespace !== namespace) continue; // the window is this resource's own
    if (format) {
      const type = typeFor(ev, sel);
      if (type) yield Buffer.from(format(type, ev.json));
      continue;
    }
    const f = frameFor(ev, sel);
    if (f) yield f;
  }
}

type Format = (type: string, json: string) => string;

function* initialFrames(items: string[], endMark: string | undefined, format: Format | undefined): Generator<string> {
  for (const json of items) yield format ? format('ADDED', json) : `{"type":"ADDED","object":${json}}\n`;
  if (endMark) yield endMark;
}

/** Watch frames whose objects are one-row Tables; column definitions only in the first, as kube-apiserver sends them. */
function tableFormat(info: ResourceInfo, include: ReturnType<typeof includeObjectOf>): Format {
  let first = true;
  return (type, json) => {
    const obj = JSON.parse(json) as KubeObject;
    const table = toTable(info, [obj], { resourceVersion: obj.metadata.resourceVersion }, include, first);
    first = false;
    return `{"type":"${type}","object":${table}}\n`;
  };
}
