/**
 * A small in-memory SimStore for the actor tests: the contract of src/sim/store/sim-store.ts
 * (global resourceVersion, synchronous ordered events, copies out, finalizers, pod graceful
 * deletion, status subresource) without indexes or watch windows.
 */
import { randomUUID } from 'node:crypto';
import { StoreError, type DeleteOptions, type KubeObject, type ResourceName, type SimStore, type StoreEvent, type StoreEventType } from '../../src/sim/store/sim-store.js';

const CLUSTER_SCOPED = new Set<ResourceName>(['namespaces', 'nodes', 'persistentvolumes', 'volumeattachments', 'csidrivers', 'csinodes']);
const WITH_STATUS = new Set<ResourceName>(['nodes', 'pods', 'persistentvolumes', 'persistentvolumeclaims', 'volumeattachments']);

export function createFakeStore(): SimStore & { writes: number } {
  const data = new Map<ResourceName, Map<string, string>>();
  const subs = new Set<(ev: StoreEvent) => void>();
  let rv = 0;
  const store = { writes: 0 } as SimStore & { writes: number };

  const table = (r: ResourceName) => {
    let t = data.get(r);
    if (!t) data.set(r, (t = new Map()));
    return t;
  };
  const key = (r: ResourceName, ns: string | undefined, name: string) => (CLUSTER_SCOPED.has(r) ? name : `${ns ?? ''}/${name}`);
  const commit = (type: StoreEventType, r: ResourceName, obj: KubeObject): KubeObject => {
    store.writes++;
    rv++;
    obj.metadata.resourceVersion = String(rv);
    const json = JSON.stringify(obj);
    const k = key(r, obj.metadata.namespace, obj.metadata.name);
    if (type === 'DELETED') table(r).delete(k);
    else table(r).set(k, json);
    const ev: StoreEvent = { type, resource: r, rv, namespace: obj.metadata.namespace, name: obj.metadata.name, json, object: () => JSON.parse(json) as KubeObject };
    for (const fn of [...subs]) fn(ev);
    return JSON.parse(json) as KubeObject;
  };
  const notFound = (r: ResourceName, name: string) => new StoreError('NotFound', 404, `${r} "${name}" not found`);
  // Writes an object; removes it instead when it is deleting and has no finalizers left.
  const write = (r: ResourceName, obj: KubeObject): KubeObject => {
    if (obj.metadata.deletionTimestamp && !(obj.metadata.finalizers?.length)) return commit('DELETED', r, obj);
    return commit('MODIFIED', r, obj);
  };

  store.resourceVersion = () => rv;
  store.count = (r) => table(r).size;
  store.get = (r, ns, name) => {
    const j = table(r).get(key(r, ns, name));
    return j === undefined ? undefined : (JSON.parse(j) as KubeObject);
  };
  store.list = (r, ns) => [...table(r).values()].map((j) => JSON.parse(j) as KubeObject).filter((o) => ns === undefined || o.metadata.namespace === ns);
  store.create = (r, input) => {
    const obj = structuredClone(input);
    if (!obj.metadata.name && obj.metadata.generateName) obj.metadata.name = obj.metadata.generateName + randomUUID().slice(0, 5);
    if (!obj.metadata.name) throw new StoreError('Invalid', 422, 'metadata.name: Required value');
    if (CLUSTER_SCOPED.has(r)) delete obj.metadata.namespace;
    if (table(r).has(key(r, obj.metadata.namespace, obj.metadata.name))) throw new StoreError('AlreadyExists', 409, `${r} "${obj.metadata.name}" already exists`);
    obj.metadata.uid = randomUUID();
    obj.metadata.creationTimestamp = new Date().toISOString();
    delete obj.metadata.deletionTimestamp;
    return commit('ADDED', r, obj);
  };
  store.update = (r, input, opts) => {
    const cur = store.get(r, input.metadata.namespace, input.metadata.name);
    if (!cur) throw notFound(r, input.metadata.name);
    if (input.metadata.resourceVersion && input.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw new StoreError('Conflict', 409, `the object has been modified`);
    }
    let next: KubeObject;
    if (opts?.subresource === 'status') next = { ...cur, status: structuredClone(input.status) };
    else {
      next = structuredClone(input);
      if (WITH_STATUS.has(r)) next.status = cur.status;
      next.metadata.uid = cur.metadata.uid;
      next.metadata.creationTimestamp = cur.metadata.creationTimestamp;
      next.metadata.deletionTimestamp = cur.metadata.deletionTimestamp;
    }
    return write(r, next);
  };
  store.mutate = (r, ns, name, fn) => {
    const cur = store.get(r, ns, name);
    if (!cur) return undefined;
    const before = JSON.stringify(cur);
    const copy = JSON.parse(before) as KubeObject;
    const next = fn(copy) ?? copy;
    if (JSON.stringify(next) === before) return cur;
    return write(r, next);
  };
  store.delete = (r, ns, name, opts?: DeleteOptions) => {
    const cur = store.get(r, ns, name);
    if (!cur) return undefined;
    if (opts?.uid && opts.uid !== cur.metadata.uid) throw new StoreError('Conflict', 409, 'uid precondition failed');
    const spec = cur.spec as { nodeName?: string } | undefined;
    const graceful = r === 'pods' && !!spec?.nodeName && opts?.gracePeriodSeconds !== 0;
    if (cur.metadata.finalizers?.length || graceful) {
      if (cur.metadata.deletionTimestamp && !(r === 'pods' && opts?.gracePeriodSeconds === 0)) return cur;
      if (r === 'pods' && opts?.gracePeriodSeconds === 0 && !cur.metadata.finalizers?.length) return commit('DELETED', r, cur);
      cur.metadata.deletionTimestamp ??= new Date().toISOString();
      if (graceful) cur.metadata.deletionGracePeriodSeconds = opts?.gracePeriodSeconds ?? 30;
      return commit('MODIFIED', r, cur);
    }
    commit('DELETED', r, cur);
    return undefined;
  };
  store.subscribe = (fn) => {
    subs.add(fn);
    return () => subs.delete(fn);
  };
  return store;
}
