/**
 * The test's own view of the cluster, from the API server's watch streams: one reflector per
 * resource the invariant checker follows (src/kube/reflector.ts, the controller's own list+watch:
 * paged lists, watches from the last resourceVersion with bookmarks, relists on 410 and after
 * errors), under the admin kubeconfig, so it reconnects by itself after a kube-apiserver
 * restart. The reconnect backoff is short (at most 1 s, not the controller's 30 s): every stream
 * is back within a second or so of the server, so that none stays far behind the others.
 *
 * The checker is fed through {@link OrderedFeed}: with one watch stream per resource, changes
 * of different resources can arrive out of their commit order (a PersistentVolume's watch
 * seconds behind the VolumeAttachments' while thousands of PVs are created; a node's
 * volumesInUse change after the detach it allowed), and the checker, written for the
 * simulator's single commit stream, would take that for a violation, or key a VolumeAttachment
 * by `pv:<name>` for good. The feed puts the changes back in etcd's order, which
 * resourceVersions give across resources.
 */
import { createInvariantChecker, type InvariantChecker } from '../../../src/invariants/index.js';
import { loadKubeConfig } from '../../../src/kube/kube-config.js';
import type { ResourceKind } from '../../../src/kube/projections/read.js';
import { createReflector, type Reflector } from '../../../src/kube/reflector.js';
import { collectionPath } from '../../../src/sim/remote/remote-paths.js';
import { RESOURCES } from '../../../src/sim/store/resources.js';
import type { KubeObject, ResourceName, SimStore, StoreEvent, StoreEventType } from '../../../src/sim/store/sim-store.js';

export const WATCHED: readonly ResourceName[] = ['csidrivers', 'persistentvolumes', 'persistentvolumeclaims', 'nodes', 'pods', 'volumeattachments'];

/** One object as a watch or list delivered it. */
interface Seen {
  json: string;
  namespace: string | undefined;
  name: string;
  rv: number;
}

/** Read access to what the watches delivered, at once (not through the feed's delay). */
export interface WatchedObjects {
  get(resource: ResourceName, namespace: string | undefined, name: string): KubeObject | undefined;
  list(resource: ResourceName, namespace?: string): KubeObject[];
}

export interface ApiWatcher extends WatchedObjects {
  feed: OrderedFeed;
  checker: InvariantChecker;
  /** Reflector counters per resource (relists, restarts…). */
  stats(): Record<string, { relists: number; restarts: number; events: number }>;
  stop(): Promise<void>;
}

const keyOf = (resource: ResourceName, namespace: string | undefined, name: string) => (RESOURCES[resource].namespaced ? `${namespace ?? ''}/${name}` : name);

function seenKind(resource: ResourceName): ResourceKind<Seen> {
  const info = RESOURCES[resource];
  return {
    resource,
    path: collectionPath(resource, undefined),
    namespaced: info.namespaced,
    project(raw) {
      const o = raw as KubeObject;
      if (!o || typeof o !== 'object' || !o.metadata || typeof o.metadata.name !== 'string') return { ok: false, reason: 'metadata.name missing' };
      const typed = o.apiVersion !== undefined && o.kind !== undefined ? o : { apiVersion: info.apiVersion, kind: info.kind, ...o };
      const rv = Number(o.metadata.resourceVersion);
      return { ok: true, value: { json: JSON.stringify(typed), namespace: info.namespaced ? o.metadata.namespace : undefined, name: o.metadata.name, rv: Number.isFinite(rv) ? rv : 0 } };
    },
  };
}

/**
 * Starts the checker (on an empty view: it must start before the cluster is populated, so that
 * every change reaches it as one), then the watches; resolves once every first list is in.
 */
export async function startApiWatcher(o: { kubeconfig: string; maxWaitForUnmountMs: number; convergenceBoundMs: number; reorderWindowMs?: number; syncTimeoutMs?: number }): Promise<ApiWatcher> {
  const kc = loadKubeConfig({ path: o.kubeconfig });
  const objects = new Map<ResourceName, Map<string, Seen>>(WATCHED.map((r) => [r, new Map()]));
  const view: WatchedObjects = {
    get(resource, namespace, name) {
      const s = objects.get(resource)?.get(keyOf(resource, namespace, name));
      return s ? (JSON.parse(s.json) as KubeObject) : undefined;
    },
    list(resource, namespace) {
      const out: KubeObject[] = [];
      for (const s of objects.get(resource)?.values() ?? []) if (namespace === undefined || s.namespace === namespace) out.push(JSON.parse(s.json) as KubeObject);
      return out;
    },
  };
  const feed = new OrderedFeed(view, o.reorderWindowMs ?? 3000);
  const checker = createInvariantChecker({
    store: feed,
    maxWaitForUnmountMs: o.maxWaitForUnmountMs,
    convergenceBoundMs: o.convergenceBoundMs,
    // Timers run on when each change reached the watcher, not when the feed let it through.
    now: () => feed.eventTime() ?? Date.now(),
    onViolation: (v) => console.log(`VIOLATION ${v.kind}: ${v.volume} on ${v.nodes.join(', ')} (${v.attachments.join(', ')}): ${v.detail}`),
  });
  const reflectors: Array<Reflector<Seen>> = [];
  for (const resource of WATCHED) {
    const table = objects.get(resource) as Map<string, Seen>;
    const r = createReflector<Seen>({ kc, kind: seenKind(resource), backoff: { initialMs: 100, maxMs: 1000 } });
    const put = (type: StoreEventType) => (s: Seen) => {
      const key = keyOf(resource, s.namespace, s.name);
      if (type === 'DELETED') table.delete(key);
      else table.set(key, s);
      feed.push(type, resource, s.namespace, s.name, s.json, s.rv);
    };
    r.addHandler({ add: put('ADDED'), update: put('MODIFIED'), delete: put('DELETED') });
    reflectors.push(r);
    void r.start();
  }
  const stop = async () => {
    checker.stop();
    feed.stop();
    await Promise.all(reflectors.map((r) => r.stop()));
    kc.close();
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.all(reflectors.map((r) => new Promise<void>((ok) => r.onSynced(ok)))),
      new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error(`watcher: first lists not done within ${o.syncTimeoutMs ?? 60_000} ms`)), o.syncTimeoutMs ?? 60_000))),
    ]);
  } catch (err) {
    await stop();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return {
    ...view,
    feed,
    checker,
    stats: () => Object.fromEntries(reflectors.map((r) => {
      const s = r.stats();
      return [r.resource, { relists: s.relists, restarts: s.restarts, events: s.events }];
    })),
    stop,
  };
}

interface Held {
  type: StoreEventType;
  resource: ResourceName;
  rv: number;
  namespace: string | undefined;
  name: string;
  json: string;
  pv: string | undefined;
  receivedAt: number;
  seq: number;
}

/** How long a VolumeAttachment's changes may wait for its PersistentVolume to go out first. */
const PV_WAIT_MS = 300_000;

/**
 * The watches' changes, held for `windowMs` and let through in resourceVersion order (etcd's
 * commit order across every resource): each tick, every held change whose resourceVersion is at
 * most the highest one received `windowMs` ago goes out, lowest first. A stream that lags the
 * others by less than the window is put back in order. On top of that, a VolumeAttachment's
 * changes wait for its PersistentVolume to have gone out (the checker resolves a
 * VolumeAttachment's volume once, when it first sees it), until the VolumeAttachment is deleted
 * or {@link PV_WAIT_MS}. Deletions a relist makes up (objects gone while a watch was down) carry
 * the last resourceVersion seen and go out at once.
 */
export class OrderedFeed implements Pick<SimStore, 'list' | 'subscribe' | 'resourceVersion'> {
  private held: Held[] = [];
  private readonly subscribers = new Set<(ev: StoreEvent) => void>();
  private readonly timer: NodeJS.Timeout;
  private readonly pvsOut = new Set<string>();
  /** VolumeAttachment name → its changes waiting for their PV. */
  private readonly waitingForPv = new Map<string, Held[]>();
  private rv = 0;
  private seq = 0;
  private delivering: number | undefined;
  private stopped = false;
  readonly counters = { delivered: 0, outOfOrder: 0, heldForPv: 0, pvWaitExpired: 0 };

  constructor(private readonly view: WatchedObjects, private readonly windowMs: number) {
    this.timer = setInterval(() => this.tick(), 200);
    this.timer.unref();
  }

  push(type: StoreEventType, resource: ResourceName, namespace: string | undefined, name: string, json: string, rv: number): void {
    if (this.stopped) return;
    let pv: string | undefined;
    if (resource === 'volumeattachments') pv = ((JSON.parse(json) as KubeObject).spec as { source?: { persistentVolumeName?: string } } | undefined)?.source?.persistentVolumeName;
    this.held.push({ type, resource, rv, namespace, name, json, pv, receivedAt: Date.now(), seq: this.seq++ });
  }

  list(resource: ResourceName, namespace?: string): KubeObject[] {
    return this.view.list(resource, namespace);
  }

  subscribe(fn: (ev: StoreEvent) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  resourceVersion(): number {
    return this.rv;
  }

  /** When the change being delivered reached the watcher (undefined outside a delivery). */
  eventTime(): number | undefined {
    return this.delivering;
  }

  /** Changes received and not delivered yet. */
  pending(): number {
    let n = this.held.length;
    for (const q of this.waitingForPv.values()) n += q.length;
    return n;
  }

  /** VolumeAttachments waiting for their PV: name → PV. */
  waiting(): Array<[string, string | undefined]> {
    return [...this.waitingForPv].map(([name, q]) => [name, q[0].pv]);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.subscribers.clear();
  }

  private tick(): void {
    const now = Date.now();
    const cutoff = now - this.windowMs;
    let mark = -1;
    for (const h of this.held) if (h.receivedAt <= cutoff && h.rv > mark) mark = h.rv;
    for (const [name, q] of this.waitingForPv) {
      if (q[0].receivedAt > now - PV_WAIT_MS) continue;
      this.waitingForPv.delete(name);
      this.counters.pvWaitExpired++;
      for (const h of q) this.deliver(h);
    }
    if (mark < 0) return;
    const out: Held[] = [];
    const keep: Held[] = [];
    for (const h of this.held) (h.rv <= mark ? out : keep).push(h);
    this.held = keep;
    out.sort((a, b) => a.rv - b.rv || a.seq - b.seq);
    for (let i = 1; i < out.length; i++) if (out[i].seq < out[i - 1].seq) this.counters.outOfOrder++;
    for (const h of out) this.route(h);
  }

  private route(h: Held): void {
    if (h.resource === 'volumeattachments') {
      const q = this.waitingForPv.get(h.name);
      if (q) {
        q.push(h);
        // Deleted before its PV ever showed: nothing left to wait for.
        if (h.type === 'DELETED') {
          this.waitingForPv.delete(h.name);
          for (const x of q) this.deliver(x);
        }
        return;
      }
      if (h.type !== 'DELETED' && h.pv !== undefined && !this.pvsOut.has(h.pv)) {
        this.counters.heldForPv++;
        this.waitingForPv.set(h.name, [h]);
        return;
      }
    }
    this.deliver(h);
    if (h.resource !== 'persistentvolumes') return;
    if (h.type === 'DELETED') {
      this.pvsOut.delete(h.name);
      return;
    }
    this.pvsOut.add(h.name);
    for (const [name, q] of this.waitingForPv) {
      if (q[0].pv !== h.name) continue;
      this.waitingForPv.delete(name);
      for (const x of q) this.deliver(x);
    }
  }

  private deliver(h: Held): void {
    if (h.rv > this.rv) this.rv = h.rv;
    this.counters.delivered++;
    let parsed: KubeObject | undefined;
    const ev: StoreEvent = {
      type: h.type, resource: h.resource, rv: h.rv, namespace: h.namespace, name: h.name, json: h.json,
      object: () => JSON.parse(h.json) as KubeObject,
      view: () => (parsed ??= JSON.parse(h.json) as KubeObject),
    };
    this.delivering = h.receivedAt;
    try {
      for (const fn of this.subscribers) fn(ev);
    } finally {
      this.delivering = undefined;
    }
  }
}

/** namespace/name → resourceVersion of every object of `resource` a view holds. */
export function versions(store: { list(r: ResourceName): KubeObject[] }, resource: ResourceName): Map<string, string> {
  const out = new Map<string, string>();
  for (const o of store.list(resource)) out.set(`${o.metadata.namespace ?? ''}/${o.metadata.name}`, String(o.metadata.resourceVersion));
  return out;
}

/** Differences between two namespace/name → resourceVersion maps, at most `max` of them. */
export function diffVersions(a: Map<string, string>, b: Map<string, string>, max = 10): string[] {
  const out: string[] = [];
  for (const [k, v] of a) {
    if (out.length >= max) return out;
    const w = b.get(k);
    if (w !== v) out.push(`${k}: watcher ${v}, fresh list ${w ?? 'absent'}`);
  }
  for (const k of b.keys()) {
    if (out.length >= max) return out;
    if (!a.has(k)) out.push(`${k}: watcher absent, fresh list ${b.get(k)}`);
  }
  return out;
}
