/**
 * The in-memory SimStore: each object is kept as its serialised JSON string (compact at a
 * million objects, and the bytes a list or watch sends) in ObjectTables, and every committed
 * change is recorded in a bounded EventWindow for watches and delivered through the
 * CommitBus. Single-threaded: every write commits synchronously. Each write serialises the
 * object once; that JSON is what is stored, what watchers receive and what the API server
 * answers (the `…Json` methods).
 */
import { randomUUID } from 'node:crypto';
import { CommitBus } from './commit-bus.js';
import { CommittedEvent } from './committed-event.js';
import { EventWindow } from './event-window.js';
import { generateName, hasFinalizers, keepServerOwnedMeta, podGracePeriod, podNodeName, rfc3339, validateObject, invalid, kindDetails, resourceDetails, applyCreateDefaults, checkImmutable, dropOmittedEmpty } from './object-rules.js';
import { ObjectTables, keyOf } from './object-tables.js';
import { RESOURCES, type ResourceInfo } from './resources.js';
import type { BytePage, ListPage, ListPageOptions, ServableStore, SimStoreOptions } from './servable-store.js';
import { StoreError, type DeleteOptions, type KubeObject, type ObjectMeta, type ResourceName, type StoreEventType } from './sim-store.js';

export function createSimStore(opts: SimStoreOptions = {}): ServableStore {
  return new MemoryStore(opts);
}

/** A write's outcome: the object as committed and its stored JSON. */
interface Committed {
  obj: KubeObject;
  json: string;
}

type Subresource = { subresource?: 'status' };

class MemoryStore implements ServableStore {
  private rv = 0;
  private readonly tables = new ObjectTables();
  /** One window per resource, as kube-apiserver keeps one watch cache per resource: lease renewals
   * at 2,000/s must not push the pod events out from under a pod watch. */
  private readonly windows = new Map<ResourceName, EventWindow>();
  private readonly windowCapacity: number;
  private readonly bus = new CommitBus();
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly uid: () => string;

  constructor(opts: SimStoreOptions) {
    this.windowCapacity = opts.watchWindow ?? 100_000;
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.uid = opts.uid ?? randomUUID;
    for (const ns of opts.namespaces ?? ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      this.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    }
  }

  resourceVersion(): number {
    return this.rv;
  }

  count(resource: ResourceName): number {
    return this.tables.count(resource);
  }

  get(resource: ResourceName, namespace: string | undefined, name: string): KubeObject | undefined {
    const json = this.getJson(resource, namespace, name);
    return json === undefined ? undefined : (JSON.parse(json) as KubeObject);
  }

  getJson(resource: ResourceName, namespace: string | undefined, name: string): string | undefined {
    return this.tables.json(resource, keyOf(RESOURCES[resource], namespace, name));
  }

  getBytes(resource: ResourceName, namespace: string | undefined, name: string): Buffer | undefined {
    return this.tables.jsonBytes(resource, keyOf(RESOURCES[resource], namespace, name));
  }

  list(resource: ResourceName, namespace?: string): KubeObject[] {
    return this.listPage(resource, { namespace }).items.map((j) => JSON.parse(j) as KubeObject);
  }

  listPage(resource: ResourceName, opts: ListPageOptions = {}): ListPage {
    return this.tables.page(RESOURCES[resource], opts);
  }

  listPageBytes(resource: ResourceName, opts: ListPageOptions = {}): BytePage {
    return this.tables.bytePage(RESOURCES[resource], opts);
  }

  create(resource: ResourceName, obj: KubeObject): KubeObject {
    return this.doCreate(resource, obj).obj;
  }

  createJson(resource: ResourceName, obj: KubeObject): string {
    return this.doCreate(resource, obj).json;
  }

  update(resource: ResourceName, obj: KubeObject, opts: Subresource = {}): KubeObject {
    return this.doUpdate(resource, obj, opts).obj;
  }

  updateJson(resource: ResourceName, obj: KubeObject, opts: Subresource = {}): string {
    return this.doUpdate(resource, obj, opts).json;
  }

  patchJson(resource: ResourceName, namespace: string | undefined, name: string, patch: (stored: KubeObject) => KubeObject, opts: Subresource = {}): string {
    const info = RESOURCES[resource];
    const key = keyOf(info, namespace, name);
    const stored = this.stored(info, key, name);
    const next = patch(stored);
    validateObject(info, next);
    return this.replace(info, key, stored, next, opts).json;
  }

  mutate(resource: ResourceName, namespace: string | undefined, name: string, fn: (obj: KubeObject) => KubeObject | void): KubeObject | undefined {
    const info = RESOURCES[resource];
    const key = keyOf(info, namespace, name);
    const json = this.tables.json(resource, key);
    if (json === undefined) return undefined;
    const copy = JSON.parse(json) as KubeObject;
    // The server-owned metadata are scalars: a shallow snapshot survives whatever fn does to the copy.
    const storedMeta = { ...copy.metadata };
    const prevNode = resource === 'pods' ? podNodeName(copy) : undefined;
    const next = fn(copy) ?? copy;
    validateObject(info, next);
    keepServerOwnedMeta(next.metadata, storedMeta);
    return this.writeExisting(info, key, storedMeta, prevNode, next, json).obj;
  }

  delete(resource: ResourceName, namespace: string | undefined, name: string, opts: DeleteOptions = {}): KubeObject | undefined {
    return this.doDelete(resource, namespace, name, opts)?.obj;
  }

  deleteJson(resource: ResourceName, namespace: string | undefined, name: string, opts: DeleteOptions = {}): string | undefined {
    return this.doDelete(resource, namespace, name, opts)?.json;
  }

  subscribe(fn: (ev: CommittedEvent) => void): () => void {
    return this.bus.subscribe(fn);
  }

  eventsAfter(resource: ResourceName, rv: number): CommittedEvent[] | undefined {
    const window = this.windows.get(resource);
    return window ? window.after(rv) : [];
  }

  oldestResumableRv(resource: ResourceName): number {
    return this.windows.get(resource)?.oldestResumable() ?? 0;
  }

  stats(): { objects: number; jsonBytes: number } {
    return this.tables.stats();
  }

  private doCreate(resource: ResourceName, obj: KubeObject): Committed {
    const info = RESOURCES[resource];
    // Object.assign, not a spread: on Node 20 each property added to a spread's copy gets a
    // hidden class of its own (src/kube/raw-write.ts, h2RequestOptions), and uid,
    // creationTimestamp and resourceVersion are added here to every object created.
    const meta = Object.assign({}, obj?.metadata) as KubeObject['metadata'];
    const o = { ...obj, metadata: meta };
    if (!info.namespaced) delete meta.namespace;
    else if (typeof meta.namespace !== 'string' || meta.namespace === '') throw invalid(info, String(meta.name ?? ''), 'metadata.namespace: Required value');
    if ((meta.name === undefined || meta.name === '') && typeof meta.generateName === 'string' && meta.generateName !== '') {
      do meta.name = generateName(meta.generateName, this.random);
      while (this.tables.has(resource, keyOf(info, meta.namespace, meta.name)));
    }
    validateObject(info, o);
    const key = keyOf(info, meta.namespace, meta.name);
    if (this.tables.has(resource, key)) throw new StoreError('AlreadyExists', 409, `${qualified(info)} "${meta.name}" already exists`, resourceDetails(info, meta.name));
    meta.uid = this.uid();
    meta.creationTimestamp = rfc3339(this.now());
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    const created = withTypeMeta(info, o);
    applyCreateDefaults(info, created);
    dropOmittedEmpty(info, created);
    created.metadata.resourceVersion = String(this.rv + 1);
    const json = JSON.stringify(created);
    this.tables.put(resource, key, json, undefined, resource === 'pods' ? podNodeName(created) : undefined);
    return this.publish('ADDED', info, created, json, undefined);
  }

  private doUpdate(resource: ResourceName, obj: KubeObject, opts: Subresource): Committed {
    const info = RESOURCES[resource];
    validateObject(info, obj);
    const ns = info.namespaced ? obj.metadata.namespace : undefined;
    if (info.namespaced && (typeof ns !== 'string' || ns === '')) throw invalid(info, obj.metadata.name, 'metadata.namespace: Required value');
    const key = keyOf(info, ns, obj.metadata.name);
    return this.replace(info, key, this.stored(info, key, obj.metadata.name), obj, opts);
  }

  /** Writes `obj` over `stored` with update's rules: preconditions, then the status subresource split. */
  private replace(info: ResourceInfo, key: string, stored: KubeObject, obj: KubeObject, opts: Subresource): Committed {
    const rv = obj.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== stored.metadata.resourceVersion) throw conflict(info, obj.metadata.name);
    if (obj.metadata.uid !== undefined && obj.metadata.uid !== stored.metadata.uid) {
      throw new StoreError('Conflict', 409, `Precondition failed: UID in precondition: ${obj.metadata.uid}, UID in object meta: ${stored.metadata.uid}`, kindDetails(info, obj.metadata.name));
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
      checkImmutable(info, stored, next);
      if (info.status) {
        if (stored.status === undefined) delete next.status;
        else next.status = stored.status;
      }
    }
    return this.writeExisting(info, key, stored.metadata, podNodeName(stored), next);
  }

  private doDelete(resource: ResourceName, namespace: string | undefined, name: string, opts: DeleteOptions): Committed | undefined {
    const info = RESOURCES[resource];
    const key = keyOf(info, namespace, name);
    const json = this.tables.json(resource, key);
    if (json === undefined) return undefined;
    const stored = JSON.parse(json) as KubeObject;
    const meta = stored.metadata;
    // As kube-apiserver's BeforeDelete words them: a Conflict naming the kind.
    if (opts.uid !== undefined && opts.uid !== meta.uid) {
      throw new StoreError('Conflict', 409, `Operation cannot be fulfilled on ${info.kind} "${name}": the UID in the precondition (${opts.uid}) does not match the UID in record (${meta.uid}). The object might have been deleted and then recreated`, kindDetails(info, name));
    }
    if (opts.resourceVersion !== undefined && opts.resourceVersion !== meta.resourceVersion) {
      throw new StoreError('Conflict', 409, `Operation cannot be fulfilled on ${info.kind} "${name}": the ResourceVersion in the precondition (${opts.resourceVersion}) does not match the ResourceVersion in record (${meta.resourceVersion}). The object might have been modified`, kindDetails(info, name));
    }
    const grace = resource === 'pods' ? podGracePeriod(stored, opts.gracePeriodSeconds) : 0;
    const current = typeof meta.deletionGracePeriodSeconds === 'number' ? meta.deletionGracePeriodSeconds : undefined;
    if (grace === 0 && !hasFinalizers(meta)) return this.remove(info, key, podNodeName(stored), stored, json);
    // Graceful or finalizer-held: mark for deletion; a later delete may only shorten the period.
    if (meta.deletionTimestamp !== undefined && current !== undefined && current <= grace) return { obj: stored, json };
    const next: KubeObject = { ...stored, metadata: Object.assign({}, meta) };
    next.metadata.deletionTimestamp = rfc3339(this.now() + grace * 1000);
    next.metadata.deletionGracePeriodSeconds = grace;
    return this.writeExisting(info, key, meta, podNodeName(stored), next, json);
  }

  /** A parse of the stored object; NotFound if there is none. */
  private stored(info: ResourceInfo, key: string, name: string): KubeObject {
    const json = this.tables.json(info.name, key);
    if (json === undefined) throw new StoreError('NotFound', 404, `${qualified(info)} "${name}" not found`, resourceDetails(info, name));
    return JSON.parse(json) as KubeObject;
  }

  /**
   * Commits `next` over the stored object (its metadata `sm`, pod node `prevNode`, JSON
   * `before` if the caller has it): a no-op change commits nothing; a deleting object whose
   * finalizers are gone is removed.
   */
  private writeExisting(info: ResourceInfo, key: string, sm: ObjectMeta, prevNode: string | undefined, next: KubeObject, before = this.tables.json(info.name, key) as string): Committed {
    const o = withTypeMeta(info, next);
    dropOmittedEmpty(info, o);
    if (sm.deletionTimestamp !== undefined && sm.deletionGracePeriodSeconds === 0 && !hasFinalizers(o.metadata)) return this.remove(info, key, prevNode, o);
    const oldRv = String(sm.resourceVersion);
    o.metadata.resourceVersion = oldRv;
    const same = JSON.stringify(o);
    if (same === before) return { obj: o, json: before };
    // Serialise once: the committed text is this one with the next resourceVersion.
    const rv = String(this.rv + 1);
    o.metadata.resourceVersion = rv;
    const json = withResourceVersion(same, oldRv, rv) ?? JSON.stringify(o);
    this.tables.put(info.name, key, json, prevNode, info.name === 'pods' ? podNodeName(o) : undefined);
    return this.publish('MODIFIED', info, o, json, before, Number(oldRv));
  }

  /** Removes the object; `lastJson`, when given, is `last` as stored (the DELETED event's text then needs no serialisation). */
  private remove(info: ResourceInfo, key: string, prevNode: string | undefined, last: KubeObject, lastJson?: string): Committed {
    this.tables.remove(info.name, key, prevNode);
    const oldRv = String(last.metadata.resourceVersion);
    const rv = String(this.rv + 1);
    last.metadata.resourceVersion = rv;
    const json = (lastJson !== undefined ? withResourceVersion(lastJson, oldRv, rv) : undefined) ?? JSON.stringify(last);
    return this.publish('DELETED', info, last, json, undefined);
  }

  /**
   * Takes the next resourceVersion (already written into `obj` and `json`), records and delivers
   * the event. `prevRv` is the resourceVersion of `prevJson`, which the window finds it under.
   */
  private publish(type: StoreEventType, info: ResourceInfo, obj: KubeObject, json: string, prevJson: string | undefined, prevRv?: number): Committed {
    const rv = ++this.rv;
    const ev = new CommittedEvent(type, info.name, rv, info.namespaced ? obj.metadata.namespace : undefined, obj.metadata.name, json, prevJson);
    let window = this.windows.get(info.name);
    if (!window) this.windows.set(info.name, (window = new EventWindow(this.windowCapacity, info.name)));
    window.push(ev, prevRv);
    this.bus.deliver(ev, obj);
    return { obj, json };
  }
}

/** `pods` or `volumeattachments.storage.k8s.io`, as kube-apiserver names a resource in messages. */
export function qualified(info: ResourceInfo): string {
  return info.group === '' ? info.name : `${info.name}.${info.group}`;
}

function conflict(info: ResourceInfo, name: string): StoreError {
  return new StoreError('Conflict', 409, `Operation cannot be fulfilled on ${qualified(info)} "${name}": the object has been modified; please apply your changes to the latest version and try again`, resourceDetails(info, name));
}

/**
 * `json` with its resourceVersion `from` replaced by `to`, or undefined when the field does not
 * occur exactly once. String values have their quotes escaped, so only a label or annotation
 * key could repeat it; the caller then serialises the object instead.
 *
 * The result is one flat string (`join`), not the rope that `+` or a template literal makes: V8
 * keeps `a + b` as a pair of pointers, here to two slices that hold the whole serialisation
 * they were cut from, and this string lives as long as the object is stored and its events are
 * in the window. As a rope every scavenge copied its four parts, and the next read flattened it
 * into another copy anyway. Measured side by side in a store-shaped sketch: scavenge pauses
 * 0.58×, the helper threads' share 0.35× (docs/performance.md).
 */
export function withResourceVersion(json: string, from: string, to: string): string | undefined {
  const field = `"resourceVersion":"${from}"`;
  const at = json.indexOf(field);
  if (at < 0 || at !== json.lastIndexOf(field)) return undefined;
  return [json.slice(0, at), '"resourceVersion":"', to, '"', json.slice(at + field.length)].join('');
}

/** The object in Kubernetes' key order: apiVersion and kind (the resource's), metadata, then the rest. */
function withTypeMeta(info: ResourceInfo, o: KubeObject): KubeObject {
  const { apiVersion: _a, kind: _k, metadata, ...rest } = o;
  return { apiVersion: info.apiVersion, kind: info.kind, metadata, ...rest };
}
