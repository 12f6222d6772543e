/**
 * Fans committed store events out to watch streams. Events reach every stream in commit order
 * (the store delivers synchronously); each event is serialised once and its bytes shared by
 * all unfiltered watchers. A filtered watcher sees a MODIFIED that makes an object match as
 * ADDED and one that makes it stop matching as DELETED, as kube-apiserver's watch cache does.
 */
import type { ServerResponse } from 'node:http';
import type { CommittedEvent, KubeObject, ResourceName, ServableStore, StoreEventType } from '../store/index.js';
import type { ResourceInfo } from '../store/resources.js';
import type { Client } from './client-faults.js';
import type { Selector } from './selectors.js';
import { WatchStream } from './watch-stream.js';

export interface WatchHubOptions {
  store: ServableStore;
  /** Period of BOOKMARK events for watches that asked for them. */
  bookmarkIntervalMs: number;
  /** Unsent bytes after which a slow watcher is cut off. */
  maxBacklogBytes: number;
  /** Lag of a client's watch frames at the start of its watch (a client fault; 0 for none). */
  lagFor?: (client: Client) => number;
}

export interface WatchRequest {
  res: ServerResponse;
  info: ResourceInfo;
  namespace: string | undefined;
  selector: Selector | undefined;
  bookmarks: boolean;
  timeoutMs: number;
  /** Frames sent before live events. */
  replay: Iterable<Buffer | string>;
  /** Renders an event for this watcher instead of the shared JSON frame (Table output). */
  format?: (type: StoreEventType, json: string) => string;
  /** Who watches (for per-client faults). */
  client?: Client;
}

export interface WatchHub {
  /** Starts a stream; live events committed after this call follow the replay. */
  open(req: WatchRequest): WatchStream;
  /** Open streams. */
  count(): number;
  /** Streams cut off for a slow consumer since start. */
  cutOffCount(): number;
  /**
   * Ends every open stream of `resource` after the frames it already has, as its own timeout
   * would (clients watch again from the last resourceVersion they saw). Returns how many ended.
   */
  endAll(resource: ResourceName): number;
  /** Every open stream. */
  streams(): WatchStream[];
  /** Ends every stream and stops the bookmark timer. */
  close(): void;
}

export function bookmarkFrame(info: ResourceInfo, rv: number, initialEventsEnd = false): string {
  const ann = initialEventsEnd ? ',"annotations":{"k8s.io/initial-events-end":"true"}' : '';
  return `{"type":"BOOKMARK","object":{"kind":"${info.kind}","apiVersion":"${info.apiVersion}","metadata":{"resourceVersion":"${rv}"${ann}}}}\n`;
}

export function createWatchHub(opts: WatchHubOptions): WatchHub {
  const byResource = new Map<ResourceName, Set<WatchStream>>();
  const formats = new WeakMap<WatchStream, (type: StoreEventType, json: string) => string>();
  let cutOffs = 0;
  const unsubscribe = opts.store.subscribe((ev) => dispatch(ev));
  const bookmarkTimer = setInterval(sendBookmarks, opts.bookmarkIntervalMs);
  bookmarkTimer.unref();

  function dispatch(ev: CommittedEvent): void {
    const streams = byResource.get(ev.resource);
    if (!streams || streams.size === 0) return;
    const memo: ParseMemo = {}; // one parse per event, shared by this dispatch only
    for (const s of streams) {
      if (s.namespace !== undefined && ev.namespace !== s.namespace) continue;
      const type = typeFor(ev, s.selector, memo);
      if (type === undefined) continue;
      const format = formats.get(s);
      s.send(format ? format(type, ev.json) : ev.frameAs(type));
    }
  }

  function sendBookmarks(): void {
    const rv = opts.store.resourceVersion();
    for (const streams of byResource.values()) {
      for (const s of streams) if (s.bookmarks) s.send(bookmarkFrame(s.info, rv));
    }
  }

  function remove(s: WatchStream): void {
    if (s.cutOff) cutOffs++;
    byResource.get(s.info.name)?.delete(s);
  }

  return {
    open(req) {
      const s = new WatchStream({ res: req.res, info: req.info, namespace: req.namespace, selector: req.selector, bookmarks: req.bookmarks, maxBacklogBytes: opts.maxBacklogBytes, onClose: remove, client: req.client, lagMs: req.client && opts.lagFor ? opts.lagFor(req.client) : 0 });
      let set = byResource.get(req.info.name);
      if (!set) byResource.set(req.info.name, (set = new Set()));
      set.add(s);
      if (req.format) formats.set(s, req.format);
      s.begin(req.replay, req.timeoutMs);
      return s;
    },
    count: () => [...byResource.values()].reduce((n, s) => n + s.size, 0),
    cutOffCount: () => cutOffs,
    endAll(resource) {
      const set = byResource.get(resource);
      if (!set) return 0;
      const streams = [...set];
      for (const s of streams) s.end();
      return streams.length;
    },
    streams: () => [...byResource.values()].flatMap((set) => [...set]),
    close() {
      clearInterval(bookmarkTimer);
      unsubscribe();
      for (const set of byResource.values()) for (const s of [...set]) s.destroy();
      byResource.clear();
    },
  };
}

/** Objects of one event, shared by the watchers it is dispatched to (read only). */
export interface ParseMemo {
  obj?: KubeObject;
  prev?: KubeObject | null;
}

/** The event type a watcher with `selector` sees for `ev`, or undefined if the event is not its business. */
export function typeFor(ev: CommittedEvent, selector: Selector | undefined, memo: ParseMemo = {}): StoreEventType | undefined {
  if (!selector) return ev.type;
  const now = selector.matches((memo.obj ??= ev.view()));
  if (ev.type !== 'MODIFIED') return now ? ev.type : undefined;
  if (memo.prev === undefined) memo.prev = ev.previous() ?? null;
  const prev = memo.prev;
  const was = prev ? selector.matches(prev) : now;
  if (now) return was ? 'MODIFIED' : 'ADDED';
  return was ? 'DELETED' : undefined;
}

/** The shared frame a watcher with `selector` gets for `ev`, or undefined. */
export function frameFor(ev: CommittedEvent, selector: Selector | undefined): Buffer | undefined {
  const type = typeFor(ev, selector);
  return type === undefined ? undefined : ev.frameAs(type);
}
