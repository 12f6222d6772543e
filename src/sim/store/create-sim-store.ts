/**
 * The in-memory SimStore: each object is kept as its serialised JSON string (compact at a
 * million objects, and the bytes a list or watch sends), with a sorted key index per resource
 * for paginated lists, an index of pods by spec.nodeName, and a bounded window of committed
 * events for watches. Single-threaded: every write commits synchronously.
 */
import { randomUUID } from 'node:crypto';
import { logger } from '../../log/logger.js';
import { CommittedEvent, EventWindow } from './event-window.js';
import { generateName, hasFinalizers, keepServerOwnedMeta, podGracePeriod, podNodeName, rfc3339, validateObject, invalid } from './object-rules.js';
import { RESOURCES, RESOURCE_NAMES, type ResourceInfo } from './resources.js';
import { PodNodeIndex } from './pod-node-index.js';
import { SortedKeys } from './sorted-keys.js';
import type { ListPage, ListPageOptions, ServableStore, SimStoreOptions } from './servable-store.js';
import { StoreError, type DeleteOptions, type KubeObject, type ObjectMeta, type ResourceName, type StoreEventType } from './sim-store.js';

export function createSimStore(opts: SimStoreOptions = {}): ServableStore {
  return new MemoryStore(opts);
}

interface Table {
  objects: Map<string, string>;
  keys: SortedKeys;
}

const log = logger('sim-store');

class MemoryStore implements ServableStore {
  private rv = 0;
  private readonly tables = new Map<ResourceName, Table>();
  private readonly podsByNode = new PodNodeIndex();
  private readonly window: EventWindow;
  private subscribers: Array<(ev: CommittedEvent) => void> = [];
  private readonly queue: CommittedEvent[] = [];
  private delivering = false;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly uid: () => string;

  constructor(opts: SimStoreOptions) {
    this.window = new EventWindow(opts.watchWindow ?? 100_000);
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.uid = opts.uid ?? randomUUID;
    for (const r of RESOURCE_NAMES) this.tables.set(r, { objects: new Map(), keys: new SortedKeys() });
    for (const ns of opts.namespaces ?? ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      this.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    }
  }

  resourceVersion(): number {
    return this.rv;
  }

  count(resource: ResourceName): number {
    return this.table(resource).objects.size;
  }

  get(resource: ResourceName, namespace: string | undefined, name: string): KubeObject | undefined {
    const json = this.getJson(resource, namespace, name);
    return json === undefined ? undefined : (JSON.parse(json) as KubeObject);
  }

  getJson(resource: ResourceName, namespace: string | undefined, name: string): string | undefined {
    return this.table(resource).objects.get(keyOf(RESOURCES[resource], namespace, name));
  }

  list(resource: ResourceName, namespace?: string): KubeObject[] {
    return this.listPage(resource, { namespace }).items.map((j) => JSON.parse(j) as KubeObject);
  }

  listPage(resource: ResourceName, opts: ListPageOptions = {}): ListPage {
    const info = RESOURCES[resource];
    const t = this.table(resource);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const nsPrefix = info.namespaced && opts.namespace !== undefined ? `${opts.namespace}/` : undefined;
    let after = opts.after;
    let end: string | undefined;
    if (nsPrefix !== undefined) {
      if (after === undefined || after < nsPrefix) after = nsPrefix;
      end = `${opts.namespace}0`; // '0' follows '/': the end of the namespace's key range
    }
    let keys: Iterable<string>;
    if (resource === 'pods' && opts.nodeName !== undefined) {
      const all = this.podsByNode.keysOn(opts.nodeName);
      keys = all.filter((k) => (after === undefined || k > after) && (end === undefined || k < end));
    } else {
      keys = t.keys.range(after, end);
    }
    const items: string[] = [];
    let lastKey: string | undefined;
    let more = false;
    for (const key of keys) {
      const json = t.objects.get(key);
      if (json === undefined || (opts.filter && !opts.filter(json, key))) continue;
      if (items.length === limit) {
        more = true;
        break;
      }
      items.push(json);
      lastKey = key;
    }
    return { items, lastKey, more };
  }

  create(resource: ResourceName, obj: KubeObject): KubeObject {
    const info = RESOURCES[resource];
    const t = this.table(resource);
    const meta = { ...(obj?.metadata ?? {}) } as KubeObject['metadata'];
    const o = { ...obj, metadata: meta };
    if (!info.namespaced) delete meta.namespace;
    else if (typeof meta.namespace !== 'string' || meta.namespace === '') throw invalid(info, String(meta.name ?? ''), 'metadata.namespace: Required value');
    if ((meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string' && meta.generateName !== '') {
      do meta.name = generateName(meta.generateName, this.random);
      while (t.objects.has(keyOf(info, meta.namespace, meta.name)));
    }
    validateObject(info, o);
    const key = keyOf(info, meta.namespace, meta.name);
    if (t.objects.has(key)) throw new StoreError('AlreadyExists', 409, `${qualified(info)} "${meta.name}" already exists`);
    meta.uid = this.uid();
    meta.creationTimestamp = rfc3339(this.now());
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    const created = withTypeMeta(info, o);
    const rv = this.rv + 1;
    created.metadata.resourceVersion = String(rv);
    if (resource === 'pods') this.podsByNode.move(key, undefined, podNodeName(created));
    const json = JSON.stringify(created);
    t.objects.set(key, json);
    t.keys.insert(key);
    return this.publish('ADDED', info, created, json, undefined);
  }

  update(resource: ResourceName, obj: KubeObject, opts: { subresource?: 'status' } = {}): KubeObject {
    const info = RESOURCES[resource];
    validateObject(info, obj);
    const ns = info.namespaced ? obj.metadata.namespace : undefined;
    if (info.namespaced && (typeof ns !== 'string' || ns === '')) throw invalid(info, obj.metadata.name, 'metadata.namespace: Required value');
    const key = keyOf(info, ns, obj.metadata.name);
    const stored = this.stored(info, key, obj.metadata.name);
    const rv = obj.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== stored.metadata.resourceVersion) throw conflict(info, obj.metadata.name);
    if (obj.metadata.uid !== undefined && obj.metadata.uid !== stored.metadata.uid) {
      throw new StoreError('Conflict', 409, `Precondition failed: UID in precondition: ${obj.metadata.uid}, UID in object meta: ${stored.metadata.uid}`);
    }
    let next: KubeObject;
    if (opts.subresource === 'status') {
      if (!info.status) throw new StoreError('NotFound', 404, `the server could not find the requested resource (${qualified(info)}/status)`);
      next = { ...stored };
      if (obj.status === undefined) delete next.status;
      else next.status = obj.status;
    } else {
      next = { ...obj, metadata: { ...obj.metadata } };
      keepServerOwnedMeta(next.metadata, stored.metadata);
      if (info.status) {
        if (stored.status === undefined) delete next.status;
        else next.status = stored.status;
      }
    }
    return this.writeExisting(info, key, stored.metadata, podNodeName(stored), next);
  }

  mutate(resource: ResourceName, namespace: string | undefined, name: string, fn: (obj: KubeObject) => KubeObject | void): KubeObject | undefined {
    const info = RESOURCES[resource];
    const key = keyOf(info, namespace, name);
    const json = this.table(resource).objects.get(key);
    if (json === undefined) return undefined;
    const copy = JSON.parse(json) as KubeObject;
    // The server-owned metadata are scalars: a shallow snapshot survives whatever fn does to the copy.
    const storedMeta = { ...copy.metadata };
    const prevNode = resource === 'pods' ? podNodeName(copy) : undefined;
    const next = fn(copy) ?? copy;
    validateObject(info, next);
    keepServerOwnedMeta(next.metadata, storedMeta);
    return this.writeExisting(info, key, storedMeta, prevNode, next);
  }

  delete(resource: ResourceName, namespace: string | undefined, name: string, opts: DeleteOptions = {}): KubeObject | undefined {
    const info = RESOURCES[resource];
    const key = keyOf(info, namespace, name);
    const json = this.table(resource).objects.get(key);
    if (json === undefined) return undefined;
    const stored = JSON.parse(json) as KubeObject;
    const meta = stored.metadata;
    if (opts.uid !== undefined && opts.uid !== meta.uid) {
      throw new StoreError('Conflict', 409, `Precondition failed: UID in precondition: ${opts.uid}, UID in object meta: ${meta.uid}`);
    }
    const grace = resource === 'pods' ? podGracePeriod(stored, opts.gracePeriodSeconds) : 0;
    const current = typeof meta.deletionGracePeriodSeconds === 'number' ? meta.deletionGracePeriodSeconds : undefined;
    if (grace === 0 && !hasFinalizers(meta)) return this.remove(info, key, podNodeName(stored), stored);
    // Graceful or finalizer-held: mark for deletion; a later delete may only shorten the period.
    if (meta.deletionTimestamp !== undefined && current !== undefined && current <= grace) return stored;
    const next: KubeObject = { ...stored, metadata: { ...meta } };
    next.metadata.deletionTimestamp = rfc3339(this.now() + grace * 1000);
    next.metadata.deletionGracePeriodSeconds = grace;
    return this.writeExisting(info, key, meta, podNodeName(stored), next);
  }

  subscribe(fn: (ev: CommittedEvent) => void): () => void {
    this.subscribers = [...this.subscribers, fn];
    return () => {
      this.subscribers = this.subscribers.filter((s) => s !== fn);
    };
  }

  eventsAfter(rv: number): CommittedEvent[] | undefined {
    return this.window.after(rv);
  }

  oldestResumableRv(): number {
    return this.window.oldestResumable();
  }

  stats(): { objects: number; jsonBytes: number } {
    let objects = 0;
    let jsonBytes = 0;
    for (const t of this.tables.values()) {
      objects += t.objects.size;
      for (const j of t.objects.values()) jsonBytes += j.length;
    }
    return { objects, jsonBytes };
  }

  private table(resource: ResourceName): Table {
    const t = this.tables.get(resource);
    if (!t) throw new StoreError('NotFound', 404, `the server could not find the requested resource (${String(resource)})`);
    return t;
  }

  private stored(info: ResourceInfo, key: string, name: string): KubeObject {
    const json = this.table(info.name).objects.get(key);
    if (json === undefined) throw new StoreError('NotFound', 404, `${qualified(info)} "${name}" not found`);
    return JSON.parse(json) as KubeObject;
  }

  /**
   * Commits `next` over the stored object (its metadata `sm`, pod node `prevNode`): a no-op
   * change commits nothing; a deleting object whose finalizers are gone is removed.
   */
  private writeExisting(info: ResourceInfo, key: string, sm: ObjectMeta, prevNode: string | undefined, next: KubeObject): KubeObject {
    const o = withTypeMeta(info, next);
    if (sm.deletionTimestamp !== undefined && sm.deletionGracePeriodSeconds === 0 && !hasFinalizers(o.metadata)) return this.remove(info, key, prevNode, o);
    const t = this.table(info.name);
    const before = t.objects.get(key) as string;
    const oldRv = String(sm.resourceVersion);
    o.metadata.resourceVersion = oldRv;
    const same = JSON.stringify(o);
    if (same === before) return o;
    // Serialise once: swap the resourceVersion in the text when it occurs exactly once (string
    // values have their quotes escaped, so only a label or annotation key could repeat it).
    const rv = String(this.rv + 1);
    o.metadata.resourceVersion = rv;
    const field = `"resourceVersion":"${oldRv}"`;
    const at = same.indexOf(field);
    const json = at >= 0 && at === same.lastIndexOf(field) ? `${same.slice(0, at)}"resourceVersion":"${rv}"${same.slice(at + field.length)}` : JSON.stringify(o);
    if (info.name === 'pods') this.podsByNode.move(key, prevNode, podNodeName(o));
    t.objects.set(key, json);
    return this.publish('MODIFIED', info, o, json, before);
  }

  private remove(info: ResourceInfo, key: string, prevNode: string | undefined, last: KubeObject): KubeObject {
    const t = this.table(info.name);
    t.objects.delete(key);
    t.keys.remove(key);
    if (info.name === 'pods') this.podsByNode.move(key, prevNode, undefined);
    last.metadata.resourceVersion = String(this.rv + 1);
    return this.publish('DELETED', info, last, JSON.stringify(last), undefined);
  }

  /** Takes the next resourceVersion (already written into `obj` and `json`), records and delivers the event. */
  private publish(type: StoreEventType, info: ResourceInfo, obj: KubeObject, json: string, prevJson: string | undefined): KubeObject {
    const rv = ++this.rv;
    const ev = new CommittedEvent(type, info.name, rv, info.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name, json, prevJson);
    this.window.push(ev);
    this.deliver(ev);
    return obj;
  }

  /** Delivers in commit order: a write made by a subscriber is delivered after the current event reaches everyone. */
  private deliver(ev: CommittedEvent): void {
    this.queue.push(ev);
    if (this.delivering) return;
    this.delivering = true;
    try {
      for (let i = 0; i < this.queue.length; i++) {
        const e = this.queue[i];
        for (const fn of this.subscribers) {
          try {
            fn(e);
          } catch (err) {
            log.error({ err, resource: e.resource, name: e.name }, 'store subscriber threw');
          }
        }
      }
    } finally {
      this.queue.length = 0;
      this.delivering = false;
    }
  }
}

function keyOf(info: ResourceInfo, namespace: string | undefined, name: string): string {
  return info.namespaced ? `${namespace ?? ''}/${name}` : name;
}

/** `pods` or `volumeattachments.storage.k8s.io`, as kube-apiserver names a resource in messages. */
export function qualified(info: ResourceInfo): string {
  return info.group === '' ? info.name : `${info.name}.${info.group}`;
}

function conflict(info: ResourceInfo, name: string): StoreError {
  return new StoreError('Conflict', 409, `Operation cannot be fulfilled on ${qualified(info)} "${name}": the object has been modified; please apply your changes to the latest version and try again`);
}

/** The object in Kubernetes' key order: apiVersion and kind (the resource's), metadata, then the rest. */
function withTypeMeta(info: ResourceInfo, o: KubeObject): KubeObject {
  const { apiVersion: _a, kind: _k, metadata, ...rest } = o;
  return { apiVersion: info.apiVersion, kind: info.kind, metadata, ...rest };
}
