/**
 * A SimStore backed by a Kubernetes API server, so that the fleet actors (src/sim/actors) can
 * drive any cluster — a kwok-style one, a real kube-apiserver with no kubelets and no CSI
 * attacher — over the API instead of the simulator's in-memory store.
 *
 * Reads: every resource in `resources` (DEFAULT_MIRROR) is listed and watched (the
 * controller's reflector, src/kube/reflector.ts: paged lists, bookmarks, relist on 410) into a
 * local mirror; `get`, `list` and `count` answer from it, and each change of the mirror is
 * delivered to `subscribe` callbacks, synchronously and in order, as the in-memory store's
 * commits are.
 *
 * Writes: the SimStore methods are synchronous, so a write is applied to the mirror at once,
 * as predicted with the in-memory store's rules (predict.ts: finalizers, pod grace periods), and
 * returned; the API call follows (remote-writer.ts). Each object keeps its writes in order and
 * has at most one call in flight; consecutive read-modify-writes of one object go as one. At
 * most `maxInFlight` objects are written at once, every call takes a token of a `qps`/`burst`
 * rate limiter. While writes of an object are pending, what the mirror shows is the server's
 * latest state with the pending writes predicted over it, computed again whenever either
 * changes; once none is pending, it is the server's state. Errors are counted and logged,
 * never thrown out of a later call: the synchronous errors are those the in-memory store
 * would raise from the mirror's state (AlreadyExists, NotFound, Conflict).
 *
 * Ordering across objects: a create waits for the pending create of its namespace, a pod's for
 * its claims', a PersistentVolume's for its claimRef's claim. A create returns a uid of its own
 * making (the server assigns the real one); any later body that carries it (a PV's claimRef)
 * is sent with the server's uid.
 *
 * Not for unmirrored resources (events, csinodes): those throw BadRequest.
 */
import { randomUUID } from 'node:crypto';
import { logger } from '../../log/logger.js';
import { loadKubeConfig, type FleetKubeConfig, type LoadKubeConfigOptions } from '../../kube/kube-config.js';
import { createRateLimiter } from '../../kube/rate-limiter.js';
import { createReflector, type Reflector } from '../../kube/reflector.js';
import type { ResourceKind } from '../../kube/projections/read.js';
import { podClaimNames } from '../actors/fields.js';
import { generateName } from '../store/object-rules.js';
import { RESOURCES } from '../store/resources.js';
import { CommittedEvent } from '../store/committed-event.js';
import { StoreError, type DeleteOptions, type KubeObject, type ResourceName, type SimStore, type StoreEvent, type StoreEventType } from '../store/sim-store.js';
import { copyObject, predict, predictCreate, type WriteOp } from './predict.js';
import { RemoteWriter, type Outcome, type WriterCounters } from './remote-writer.js';
import { DEFAULT_MIRROR, collectionPath, mirrorKey, type MirrorSpec } from './remote-paths.js';

export interface RemoteStoreOptions {
  /** Where the cluster is: kubeconfig options (`--kubeconfig` path or a document) or a loaded one. */
  kubeconfig: LoadKubeConfigOptions | FleetKubeConfig;
  /** What is listed and watched; writes to anything else throw. Default {@link DEFAULT_MIRROR}. */
  resources?: readonly MirrorSpec[];
  /** Sustained calls per second (<= 0: unlimited). Default 200. */
  qps?: number;
  /** Calls allowed at once above the rate. Default 2 × qps (at least 1). */
  burst?: number;
  /** Objects being written at once (each at most one call on the wire). Default 32. */
  maxInFlight?: number;
  /** Timeout of one call, ms. Default 30 s. */
  requestTimeoutMs?: number;
  /** GET-and-apply-again rounds of a read-modify-write after 409 Conflict. Default 5. */
  conflictRetries?: number;
  /** Calls sent again after no answer, 429 or a 5xx. Default 5. */
  transientRetries?: number;
  /** How long the first lists may take before createRemoteStore fails, ms. Default 60 s. */
  syncTimeoutMs?: number;
  /** Passed to the reflectors (tests shorten them). */
  bookmarkIntervalMs?: number;
  watchdogMs?: number;
}

export interface RemoteStoreStats extends WriterCounters {
  /** Writes queued or on the wire. */
  pending: number;
  /** Objects being written now. */
  inFlight: number;
  /** Objects in the mirror. */
  objects: number;
  /** Watch and list changes applied to the mirror. */
  watchChanges: number;
}

export interface RemoteStore extends SimStore {
  /** Writes queued or on the wire. */
  pending(): number;
  /** Resolves once at most `n` writes are pending (default 0: all done). */
  drained(n?: number): Promise<void>;
  stats(): RemoteStoreStats;
  /** Waits up to `flushMs` (default 5 s) for pending writes, then stops watches and calls. */
  close(opts?: { flushMs?: number }): Promise<void>;
}

/** One object of the mirror, with its pending writes. */
class Entry {
  /** The server's latest state as far as known (JSON), and its resourceVersion. */
  server: string | undefined;
  serverRv = -1;
  /** Uid of an incarnation this store saw deleted: its late watch events are not taken for a new object. */
  goneUid: string | undefined;
  goneAt = 0;
  /** What the mirror shows (JSON) and the object it was made from (shared, read only). */
  json: string | undefined;
  view: KubeObject | undefined;
  readonly ops: WriteOp[] = [];
  busy = false;
  queued = false;
  /** Entries whose create waits for a create of this one. */
  waiters: Entry[] | undefined;

  constructor(
    readonly resource: ResourceName,
    readonly namespace: string | undefined,
    readonly name: string,
    readonly key: string,
  ) {}
}

/** What the reflector keeps per object: its JSON and identity. */
interface Listed {
  json: string;
  namespace: string | undefined;
  name: string;
  rv: number;
  uid: string | undefined;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** How long a predicted uid is translated, and a deleted incarnation remembered, ms. */
const REMEMBER_MS = 10 * 60_000;
const log = logger('sim-remote');

const rvOf = (rv: unknown): number => {
  const n = typeof rv === 'string' && rv !== '' ? Number(rv) : NaN;
  return Number.isFinite(n) ? n : -1;
};

/**
 * Connects, lists every mirrored resource and starts the watches; resolves once the mirror
 * holds the first lists. Throws FA_ERR_KUBECONFIG_INVALID for a bad kubeconfig, and an Error
 * when the lists do not complete within `syncTimeoutMs`.
 * @example const store = await createRemoteStore({ kubeconfig: { path: 'kubeconfig' } }); startFleetActors(store, { nodes: 0 });
 */
export async function createRemoteStore(opts: RemoteStoreOptions): Promise<RemoteStore> {
  const store = new ApiBackedStore(opts);
  try {
    await store.start(opts.syncTimeoutMs ?? 60_000);
  } catch (err) {
    await store.close({ flushMs: 0 });
    throw err;
  }
  return store;
}

class ApiBackedStore implements RemoteStore {
  private readonly kc: FleetKubeConfig;
  private readonly entries = new Map<ResourceName, Map<string, Entry>>();
  private readonly mirrored = new Map<ResourceName, MirrorSpec>();
  private readonly counts = new Map<ResourceName, number>();
  private readonly subscribers = new Set<(ev: StoreEvent) => void>();
  private readonly reflectors: Array<Reflector<Listed>> = [];
  private readonly writer: RemoteWriter;
  private readonly maxInFlight: number;
  /**
   * Entries with writes to send, in the order they got their first one: node Leases in a lane of
   * their own, served when nothing else waits, so that heartbeats beyond the rate limit delay
   * each other rather than the attacher and the kubelets (pending renewals of one Lease merge).
   */
  private readonly lanes = [new Fifo<Entry>(), new Fifo<Entry>()];
  private inFlight = 0;
  private opsPending = 0;
  private pumping = false;
  private maxRv = 0;
  private watchChanges = 0;
  private closed = false;
  /** Predicted uid → the server's, with when each was learnt (for pruning). */
  private readonly uids = new Map<string, string>();
  private readonly uidTimes: Array<[number, string]> = [];
  private readonly drainWaiters: Array<{ n: number; resolve: () => void }> = [];
  private readonly idleRuns = new Set<Promise<void>>();
  private readonly sweepTimer: NodeJS.Timeout;

  constructor(private readonly opts: RemoteStoreOptions) {
    this.kc = 'loadFromString' in opts.kubeconfig ? opts.kubeconfig : loadKubeConfig(opts.kubeconfig);
    this.maxInFlight = Math.max(1, opts.maxInFlight ?? 32);
    this.kc.sizeAgentFor(this.maxInFlight);
    const qps = opts.qps ?? 200;
    this.writer = new RemoteWriter({
      kc: this.kc,
      limiter: createRateLimiter({ qps, burst: opts.burst ?? Math.max(1, Math.ceil(2 * qps)) }),
      requestTimeoutMs: opts.requestTimeoutMs ?? 30_000,
      conflictRetries: opts.conflictRetries ?? 5,
      transientRetries: opts.transientRetries ?? 5,
      resolveUids: (text) => (this.uids.size === 0 ? text : text.replace(UUID, (u) => this.uids.get(u) ?? u)),
    });
    for (const m of opts.resources ?? DEFAULT_MIRROR) {
      this.mirrored.set(m.resource, m);
      this.entries.set(m.resource, new Map());
      this.counts.set(m.resource, 0);
    }
    this.sweepTimer = setInterval(() => this.sweep(), 30_000);
    this.sweepTimer.unref();
  }

  async start(syncTimeoutMs: number): Promise<void> {
    for (const [resource, m] of this.mirrored) {
      const r = createReflector<Listed>({
        kc: this.kc,
        kind: listedKind(resource, m.namespace),
        ...(m.labelSelector ? { labelSelector: m.labelSelector } : {}),
        ...(this.opts.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: this.opts.bookmarkIntervalMs } : {}),
        ...(this.opts.watchdogMs !== undefined ? { watchdogMs: this.opts.watchdogMs } : {}),
      });
      r.addHandler({
        add: (o) => this.fromServer(resource, o, false),
        update: (o) => this.fromServer(resource, o, false),
        delete: (o) => this.fromServer(resource, o, true),
      });
      this.reflectors.push(r);
      void r.start();
    }
    let timer: NodeJS.Timeout | undefined;
    const synced = Promise.all(this.reflectors.map((r) => new Promise<void>((resolve) => r.onSynced(resolve))));
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const missing = this.reflectors.filter((r) => !r.synced()).map((r) => r.resource);
        reject(new Error(`remote store: the first list of ${missing.join(', ')} did not complete within ${syncTimeoutMs} ms (is the cluster reachable, and may this user list and watch them?)`));
      }, syncTimeoutMs);
    });
    try {
      await Promise.race([synced, timeout]);
    } finally {
      clearTimeout(timer);
    }
    log.info({ server: this.kc.server(), objects: this.objectCount() }, 'remote store synced');
  }

  // ---- SimStore reads ----

  resourceVersion(): number {
    return this.maxRv;
  }

  count(resource: ResourceName): number {
    return this.counts.get(resource) ?? 0;
  }

  get(resource: ResourceName, namespace: string | undefined, name: string): KubeObject | undefined {
    const json = this.table(resource)?.get(mirrorKey(resource, namespace, name))?.json;
    return json === undefined ? undefined : (JSON.parse(json) as KubeObject);
  }

  list(resource: ResourceName, namespace?: string): KubeObject[] {
    const table = this.table(resource);
    if (!table) return [];
    const out: Array<[string, string]> = [];
    for (const e of table.values()) if (e.json !== undefined && (namespace === undefined || e.namespace === namespace)) out.push([e.key, e.json]);
    out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return out.map(([, j]) => JSON.parse(j) as KubeObject);
  }

  subscribe(fn: (ev: StoreEvent) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  // ---- SimStore writes: predicted at once, sent later ----

  create(resource: ResourceName, obj: KubeObject): KubeObject {
    const info = RESOURCES[resource];
    const table = this.writable(resource);
    const meta = obj?.metadata;
    if (!meta || typeof meta !== 'object') throw new StoreError('Invalid', 422, `${info.kind}: metadata: Required value`);
    const namespace = info.namespaced ? meta.namespace : undefined;
    if (info.namespaced && (typeof namespace !== 'string' || namespace === '')) throw new StoreError('Invalid', 422, `${info.kind} "${String(meta.name ?? '')}": metadata.namespace: Required value`);
    let name = meta.name;
    if ((name === undefined || name === '') && typeof meta.generateName === 'string' && meta.generateName !== '') {
      do name = generateName(meta.generateName, Math.random);
      while (table.get(mirrorKey(resource, namespace, name))?.json !== undefined);
    }
    if (typeof name !== 'string' || name === '') throw new StoreError('Invalid', 422, `${info.kind}: metadata.name: Required value`);
    const entry = this.entry(resource, namespace, name);
    if (entry.json !== undefined) throw new StoreError('AlreadyExists', 409, `${info.name} "${name}" already exists`);
    const uid = randomUUID();
    const predicted = predictCreate(resource, { ...obj, metadata: { ...meta, name } }, uid, Date.now());
    this.push(entry, { kind: 'create', obj: predicted, uid });
    this.show(entry, predicted);
    return copyObject(predicted);
  }

  update(resource: ResourceName, obj: KubeObject, opts: { subresource?: 'status' } = {}): KubeObject {
    const info = RESOURCES[resource];
    this.writable(resource);
    const namespace = info.namespaced ? obj.metadata.namespace : undefined;
    const entry = this.table(resource)?.get(mirrorKey(resource, namespace, obj.metadata.name));
    const cur = entry?.view;
    if (!entry || !cur) throw new StoreError('NotFound', 404, `${info.name} "${obj.metadata.name}" not found`);
    if (opts.subresource === 'status' && !info.status) throw new StoreError('NotFound', 404, `the server could not find the requested resource (${info.name}/status)`);
    const rv = obj.metadata.resourceVersion;
    if ((rv !== undefined && rv !== '' && rv !== cur.metadata.resourceVersion) || (obj.metadata.uid !== undefined && obj.metadata.uid !== cur.metadata.uid)) {
      throw new StoreError('Conflict', 409, `Operation cannot be fulfilled on ${info.name} "${obj.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`);
    }
    const op: WriteOp = { kind: 'replace', obj: copyObject(obj), status: opts.subresource === 'status' };
    return this.write(entry, op) ?? copyObject(cur);
  }

  mutate(resource: ResourceName, namespace: string | undefined, name: string, fn: (obj: KubeObject) => KubeObject | void): KubeObject | undefined {
    this.writable(resource);
    const entry = this.table(resource)?.get(mirrorKey(resource, namespace, name));
    if (!entry?.view) return undefined;
    const last = entry.view;
    return this.write(entry, { kind: 'mutate', fn }) ?? copyObject(last);
  }

  delete(resource: ResourceName, namespace: string | undefined, name: string, opts: DeleteOptions = {}): KubeObject | undefined {
    this.writable(resource);
    const entry = this.table(resource)?.get(mirrorKey(resource, namespace, name));
    const cur = entry?.view;
    if (!entry || !cur) return undefined;
    if (opts.uid !== undefined && opts.uid !== cur.metadata.uid) {
      throw new StoreError('Conflict', 409, `Precondition failed: UID in precondition: ${opts.uid}, UID in object meta: ${String(cur.metadata.uid)}`);
    }
    return this.write(entry, { kind: 'delete', opts: { ...opts } }) ?? copyObject(cur);
  }

  // ---- RemoteStore ----

  pending(): number {
    return this.opsPending;
  }

  drained(n = 0): Promise<void> {
    if (this.opsPending <= n || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push({ n, resolve }));
  }

  stats(): RemoteStoreStats {
    return { ...this.writer.counters, pending: this.opsPending, inFlight: this.inFlight, objects: this.objectCount(), watchChanges: this.watchChanges };
  }

  async close(opts: { flushMs?: number } = {}): Promise<void> {
    if (this.closed) return;
    const flushMs = opts.flushMs ?? 5000;
    if (flushMs > 0 && this.opsPending > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.drained(0), new Promise<void>((r) => (timer = setTimeout(r, flushMs)))]);
      clearTimeout(timer);
    }
    this.closed = true;
    this.writer.close();
    clearInterval(this.sweepTimer);
    for (const w of this.drainWaiters.splice(0)) w.resolve();
    await Promise.all(this.reflectors.map((r) => r.stop()));
    await Promise.all([...this.idleRuns]);
    this.subscribers.clear();
  }

  // ---- the mirror ----

  private table(resource: ResourceName): Map<string, Entry> | undefined {
    return this.entries.get(resource);
  }

  private writable(resource: ResourceName): Map<string, Entry> {
    const t = this.entries.get(resource);
    if (!t) throw new StoreError('BadRequest', 400, `the remote store does not mirror ${resource}; it cannot write them`);
    if (this.closed) throw new StoreError('BadRequest', 400, 'the remote store is closed');
    return t;
  }

  private entry(resource: ResourceName, namespace: string | undefined, name: string): Entry {
    const table = this.entries.get(resource) as Map<string, Entry>;
    const key = mirrorKey(resource, namespace, name);
    let e = table.get(key);
    if (!e) table.set(key, (e = new Entry(resource, RESOURCES[resource].namespaced ? namespace : undefined, name, key)));
    return e;
  }

  private objectCount(): number {
    let n = 0;
    for (const c of this.counts.values()) n += c;
    return n;
  }

  /** Queues `op` (not a create) over the mirror's object; returns the predicted object (undefined: gone), or undefined with nothing queued when it changes nothing. */
  private write(entry: Entry, op: WriteOp): KubeObject | undefined {
    const cur = entry.view as KubeObject;
    const next = predict(entry.resource, op, cur, Date.now());
    if (next !== undefined && JSON.stringify(next) === entry.json) return undefined;
    this.push(entry, op);
    this.show(entry, next);
    return copyObject(next ?? cur);
  }

  /** Sets what the mirror shows for `entry` and delivers the change (none when the JSON is the same). */
  private show(entry: Entry, obj: KubeObject | undefined, json = obj === undefined ? undefined : JSON.stringify(obj), final?: { obj: KubeObject; json: string }): void {
    const prev = entry.json;
    if (prev === json) return;
    const prevView = entry.view;
    entry.json = json;
    entry.view = obj;
    const c = this.counts.get(entry.resource) ?? 0;
    let type: StoreEventType;
    if (prev === undefined) {
      type = 'ADDED';
      this.counts.set(entry.resource, c + 1);
    } else if (json === undefined) {
      type = 'DELETED';
      this.counts.set(entry.resource, c - 1);
    } else type = 'MODIFIED';
    const evObj = type === 'DELETED' ? (final?.obj ?? (prevView as KubeObject)) : (obj as KubeObject);
    const evJson = type === 'DELETED' ? (final?.json ?? prev as string) : (json as string);
    // As the in-memory store's CommitBus: the object is lent to the event while it is delivered.
    const ev = new CommittedEvent(type, entry.resource, this.maxRv, entry.namespace, entry.name, evJson);
    ev.lend(evObj);
    for (const fn of this.subscribers) {
      try {
        fn(ev);
      } catch (err) {
        log.error({ err, resource: entry.resource, name: entry.name }, 'store subscriber threw');
      }
    }
    ev.lend(undefined);
    this.collect(entry);
  }

  /** The mirror of `entry` computed again: the server's state with the pending writes predicted over it. */
  private rebase(entry: Entry, final?: { obj: KubeObject; json: string }): void {
    if (entry.ops.length === 0) {
      this.show(entry, entry.server === undefined ? undefined : (JSON.parse(entry.server) as KubeObject), entry.server, final);
      return;
    }
    let obj = entry.server === undefined ? undefined : (JSON.parse(entry.server) as KubeObject);
    const now = Date.now();
    for (const op of entry.ops) {
      try {
        obj = predict(entry.resource, op, obj, now);
      } catch (err) {
        log.debug({ err, name: entry.name }, 'a pending write does not apply to the newest object');
      }
    }
    this.show(entry, obj, undefined, final);
  }

  /** A change the reflector saw (list or watch). */
  private fromServer(resource: ResourceName, o: Listed, deleted: boolean): void {
    if (o.rv > this.maxRv) this.maxRv = o.rv;
    const entry = this.entry(resource, o.namespace, o.name);
    if (deleted) {
      // A watch DELETED carries the deletion's resourceVersion; a relist's deletion the last one
      // seen, which a write's answer may have passed: believed when no write is pending.
      if (entry.server === undefined) {
        if (entry.goneUid === o.uid) entry.goneUid = undefined;
        this.collect(entry);
        return;
      }
      if (o.rv < entry.serverRv && (entry.busy || entry.ops.length > 0)) return;
      this.serverGone(entry, o.rv, o.uid);
      this.watchChanges++;
      if (!entry.busy) this.rebase(entry, { obj: JSON.parse(o.json) as KubeObject, json: o.json });
      return;
    }
    if (entry.server === undefined && entry.goneUid !== undefined && entry.goneUid === o.uid) return; // a late event of a deleted incarnation
    if (o.rv >= 0 && o.rv <= entry.serverRv) return;
    entry.server = o.json;
    entry.serverRv = o.rv;
    entry.goneUid = undefined;
    this.watchChanges++;
    if (!entry.busy) this.rebase(entry);
  }

  private serverGone(entry: Entry, rv: number, uid: string | undefined): void {
    entry.server = undefined;
    if (rv > entry.serverRv) entry.serverRv = rv;
    entry.goneUid = uid;
    entry.goneAt = Date.now();
  }

  /** An answer to a write: the server's state, when newer than what is known. */
  private fromAnswer(entry: Entry, out: Outcome): void {
    if (out.kind === 'unknown') return;
    if (out.kind === 'gone') {
      const rv = out.obj ? rvOf(out.obj.metadata.resourceVersion) : -1;
      if (rv > this.maxRv) this.maxRv = rv;
      const uid = out.obj?.metadata.uid ?? (entry.server === undefined ? undefined : (JSON.parse(entry.server) as KubeObject).metadata.uid);
      this.serverGone(entry, rv, uid);
      return;
    }
    const rv = rvOf(out.obj.metadata.resourceVersion);
    if (rv > this.maxRv) this.maxRv = rv;
    if (rv >= 0 && rv <= entry.serverRv && entry.server !== undefined) return;
    entry.server = JSON.stringify(out.obj);
    entry.serverRv = rv;
    entry.goneUid = undefined;
  }

  /** Drops an entry that holds nothing any more. */
  private collect(entry: Entry): void {
    if (entry.json !== undefined || entry.server !== undefined || entry.ops.length > 0 || entry.busy || entry.goneUid !== undefined || entry.waiters) return;
    this.entries.get(entry.resource)?.delete(entry.key);
  }

  private sweep(): void {
    const old = Date.now() - REMEMBER_MS;
    while (this.uidTimes.length > 0 && this.uidTimes[0][0] < old) this.uids.delete((this.uidTimes.shift() as [number, string])[1]);
    for (const table of this.entries.values()) {
      for (const e of table.values()) {
        if (e.goneUid !== undefined && e.goneAt < old) {
          e.goneUid = undefined;
          this.collect(e);
        }
      }
    }
  }

  // ---- the write queue ----

  private push(entry: Entry, op: WriteOp): void {
    entry.ops.push(op);
    this.opsPending++;
    this.enqueue(entry);
    this.schedulePump();
  }

  private enqueue(entry: Entry): void {
    if (entry.busy || entry.queued || entry.ops.length === 0) return;
    entry.queued = true;
    this.lanes[entry.resource === 'leases' ? 1 : 0].push(entry);
  }

  private schedulePump(): void {
    if (this.pumping) return;
    this.pumping = true;
    queueMicrotask(() => {
      this.pumping = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.closed) return;
    while (this.inFlight < this.maxInFlight) {
      const entry = this.lanes[0].shift() ?? this.lanes[1].shift();
      if (!entry) return;
      entry.queued = false;
      if (entry.ops.length === 0 || entry.busy) continue;
      const dep = this.blockedBy(entry);
      if (dep) {
        (dep.waiters ??= []).push(entry);
        continue;
      }
      const run = this.send(entry);
      this.idleRuns.add(run);
      void run.finally(() => this.idleRuns.delete(run));
    }
  }

  /** The entry whose pending create this entry's first write (a create) must wait for, if any. */
  private blockedBy(entry: Entry): Entry | undefined {
    const op = entry.ops[0];
    if (op.kind !== 'create') return undefined;
    for (const [resource, ns, name] of dependencies(entry.resource, op.obj)) {
      const dep = this.table(resource)?.get(mirrorKey(resource, ns, name));
      if (dep && dep !== entry && dep.ops.some((o) => o.kind === 'create')) return dep;
    }
    return undefined;
  }

  private async send(entry: Entry): Promise<void> {
    entry.busy = true;
    this.inFlight++;
    const head = entry.ops[0];
    let taken = 1;
    let out: Outcome = { kind: 'unknown' };
    try {
      if (head.kind === 'create') {
        out = await this.writer.create(entry.resource, head, (created) => this.learnUid(head.uid, created.metadata.uid));
      } else if (head.kind === 'delete') {
        out = await this.writer.delete(entry.resource, entry.namespace, entry.name, head);
      } else {
        while (taken < entry.ops.length && entry.ops[taken].kind !== 'create' && entry.ops[taken].kind !== 'delete') taken++;
        const group = entry.ops.slice(0, taken) as Array<Exclude<WriteOp, { kind: 'create' | 'delete' }>>;
        const base = entry.server === undefined ? undefined : (JSON.parse(entry.server) as KubeObject);
        out = await this.writer.writeGroup(entry.resource, entry.namespace, entry.name, group, base);
      }
    } catch (err) {
      log.error({ err, resource: entry.resource, name: entry.name }, 'remote write failed unexpectedly');
    }
    entry.ops.splice(0, taken);
    this.opsPending -= taken;
    entry.busy = false;
    this.inFlight--;
    if (this.closed) return;
    this.fromAnswer(entry, out);
    this.rebase(entry);
    this.enqueue(entry);
    // Creates that waited for this one's go on once it has no create pending.
    if (entry.waiters && !entry.ops.some((o) => o.kind === 'create')) {
      const waiters = entry.waiters;
      entry.waiters = undefined;
      for (const w of waiters) this.enqueue(w);
      this.collect(entry);
    }
    for (let i = this.drainWaiters.length - 1; i >= 0; i--) {
      if (this.opsPending <= this.drainWaiters[i].n) this.drainWaiters.splice(i, 1)[0].resolve();
    }
    this.schedulePump();
  }

  private learnUid(predicted: string, real: string | undefined): void {
    if (!real || real === predicted) return;
    this.uids.set(predicted, real);
    this.uidTimes.push([Date.now(), predicted]);
  }
}

/** A queue with O(1) shift. */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  push(v: T): void {
    this.items.push(v);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const v = this.items[this.head++];
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return v;
  }
}

/** Objects a create must follow: its namespace; a pod's claims; a PersistentVolume's claim. */
function dependencies(resource: ResourceName, obj: KubeObject): Array<[ResourceName, string | undefined, string]> {
  const out: Array<[ResourceName, string | undefined, string]> = [];
  const ns = obj.metadata.namespace;
  if (RESOURCES[resource].namespaced && ns) out.push(['namespaces', undefined, ns]);
  if (resource === 'pods' && ns) for (const claim of podClaimNames(obj)) out.push(['persistentvolumeclaims', ns, claim]);
  if (resource === 'persistentvolumes') {
    const ref = (obj.spec as { claimRef?: { namespace?: unknown; name?: unknown } } | undefined)?.claimRef;
    if (typeof ref?.namespace === 'string' && typeof ref.name === 'string') out.push(['persistentvolumeclaims', ref.namespace, ref.name]);
  }
  return out;
}

/** A reflector kind that keeps each object's JSON (with its type meta, which list items lack). */
function listedKind(resource: ResourceName, namespace: string | undefined): ResourceKind<Listed> {
  const info = RESOURCES[resource];
  return {
    resource,
    path: collectionPath(resource, namespace),
    namespaced: info.namespaced,
    project(raw) {
      if (typeof raw !== 'object' || raw === null) return { ok: false, reason: 'not an object' };
      const o = raw as KubeObject;
      const m = o.metadata;
      if (!m || typeof m.name !== 'string') return { ok: false, reason: 'metadata.name missing' };
      const typed = o.apiVersion !== undefined && o.kind !== undefined ? o : { apiVersion: info.apiVersion, kind: info.kind, ...o };
      return { ok: true, value: { json: JSON.stringify(typed), namespace: info.namespaced ? m.namespace : undefined, name: m.name, rv: rvOf(m.resourceVersion), uid: m.uid } };
    },
  };
}
