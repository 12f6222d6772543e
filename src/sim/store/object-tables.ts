/**
 * Where the store keeps objects: per resource, the serialised JSON of each object by key
 * (`namespace/name` or `name`) and the sorted key index that paginated lists walk, plus the
 * index of pods by spec.nodeName. Knows nothing of write rules or resourceVersions.
 */
import { PodNodeIndex } from './pod-node-index.js';
import { RESOURCE_NAMES, type ResourceInfo } from './resources.js';
import type { ListPage, ListPageOptions } from './servable-store.js';
import { StoreError, type ResourceName } from './sim-store.js';
import { SortedKeys } from './sorted-keys.js';

interface Table {
  objects: Map<string, string>;
  keys: SortedKeys;
}

/** The store key of an object: `namespace/name` for namespaced resources, else `name`. */
export function keyOf(info: ResourceInfo, namespace: string | undefined, name: string): string {
  return info.namespaced ? `${namespace ?? ''}/${name}` : name;
}

export class ObjectTables {
  private readonly tables = new Map<ResourceName, Table>();
  private readonly podsByNode = new PodNodeIndex();

  constructor() {
    for (const r of RESOURCE_NAMES) this.tables.set(r, { objects: new Map(), keys: new SortedKeys() });
  }

  count(resource: ResourceName): number {
    return this.table(resource).objects.size;
  }

  has(resource: ResourceName, key: string): boolean {
    return this.table(resource).objects.has(key);
  }

  json(resource: ResourceName, key: string): string | undefined {
    return this.table(resource).objects.get(key);
  }

  /**
   * Stores `json` under `key`, adding the key to the index if it is new. For pods, `fromNode`
   * and `toNode` are the pod's spec.nodeName before and after (undefined: unbound or absent).
   */
  put(resource: ResourceName, key: string, json: string, fromNode?: string, toNode?: string): void {
    const t = this.table(resource);
    const before = t.objects.size;
    t.objects.set(key, json);
    if (t.objects.size !== before) t.keys.insert(key); // one hash lookup per write, not two
    if (resource === 'pods') this.podsByNode.move(key, fromNode, toNode);
  }

  remove(resource: ResourceName, key: string, fromNode?: string): void {
    const t = this.table(resource);
    t.objects.delete(key);
    t.keys.remove(key);
    if (resource === 'pods') this.podsByNode.move(key, fromNode, undefined);
  }

  /** One page of stored JSON in key order (see ListPageOptions). */
  page(info: ResourceInfo, opts: ListPageOptions = {}): ListPage {
    const t = this.table(info.name);
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const nsPrefix = info.namespaced && opts.namespace !== undefined ? `${opts.namespace}/` : undefined;
    let after = opts.after;
    let end: string | undefined;
    if (nsPrefix !== undefined) {
      if (after === undefined || after < nsPrefix) after = nsPrefix;
      end = `${opts.namespace}0`; // '0' follows '/': the end of the namespace's key range
    }
    const items: string[] = [];
    let lastKey: string | undefined;
    let more = false;
    const filter = opts.filter;
    // False once the page is full and one more match showed that more follow.
    const take = (key: string): boolean => {
      const json = t.objects.get(key);
      if (json === undefined || (filter && !filter(json, key))) return true;
      if (items.length === limit) {
        more = true;
        return false;
      }
      items.push(json);
      lastKey = key;
      return true;
    };
    if (info.name === 'pods' && opts.nodeName !== undefined) {
      for (const key of this.podsByNode.keysOn(opts.nodeName)) {
        if ((after === undefined || key > after) && (end === undefined || key < end) && !take(key)) break;
      }
    } else {
      t.keys.visit(after, end, take);
    }
    return { items, lastKey, more };
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
}
