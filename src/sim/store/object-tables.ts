/**
 * Where the store keeps objects: per resource, the serialised JSON of each object by key
 * (`namespace/name` or `name`), a hash index from key to record and the sorted index that
 * paginated lists walk, plus the index of pods by spec.nodeName. Knows nothing of write rules
 * or resourceVersions.
 *
 * Every object is one record of a ByteArena shared by all resources (its key, then its JSON, as
 * UTF-8 outside the JavaScript heap), addressed by a slot that stays the object's for as long
 * as it is stored; the indexes hold slots in typed arrays. A read decodes the JSON into a fresh
 * string: the store holds no JavaScript object per stored object, so a major collection has
 * none of them to mark.
 */
import { ByteArena } from '../../packed/byte-arena.js';
import { KeyIndex } from '../../packed/key-index.js';
import { PodNodeIndex } from './pod-node-index.js';
import { RESOURCE_NAMES, type ResourceInfo } from './resources.js';
import type { ListPage, ListPageOptions } from './servable-store.js';
import { StoreError, type ResourceName } from './sim-store.js';
import { SortedSlots } from './sorted-slots.js';

const KEY = 0;
const JSON_PART = 1;

interface Table {
  byKey: KeyIndex;
  sorted: SortedSlots;
}

/** The store key of an object: `namespace/name` for namespaced resources, else `name`. */
export function keyOf(info: ResourceInfo, namespace: string | undefined, name: string): string {
  return info.namespaced ? `${namespace ?? ''}/${name}` : name;
}

export class ObjectTables {
  private readonly arena = new ByteArena();
  private readonly tables = new Map<ResourceName, Table>();
  private readonly podsByNode = new PodNodeIndex();

  constructor() {
    for (const r of RESOURCE_NAMES) this.tables.set(r, { byKey: new KeyIndex(this.arena), sorted: new SortedSlots(this.arena) });
  }

  count(resource: ResourceName): number {
    return this.table(resource).byKey.count;
  }

  has(resource: ResourceName, key: string): boolean {
    return this.table(resource).byKey.find(key) >= 0;
  }

  json(resource: ResourceName, key: string): string | undefined {
    const slot = this.table(resource).byKey.find(key);
    return slot < 0 ? undefined : this.arena.text(slot, JSON_PART);
  }

  /**
   * Stores `json` under `key`, adding the key to the indexes if it is new. For pods, `fromNode`
   * and `toNode` are the pod's spec.nodeName before and after (undefined: unbound or absent).
   */
  put(resource: ResourceName, key: string, json: string, fromNode?: string, toNode?: string): void {
    const t = this.table(resource);
    let slot = t.byKey.find(key);
    if (slot < 0) {
      slot = this.arena.newSlot();
      this.arena.set(slot, key, json);
      t.byKey.insert(slot);
      t.sorted.insert(slot);
    } else this.arena.set(slot, key, json);
    if (resource === 'pods') this.podsByNode.move(slot, fromNode, toNode);
  }

  remove(resource: ResourceName, key: string, _fromNode?: string): void {
    const t = this.table(resource);
    const slot = t.byKey.find(key);
    if (slot < 0) return;
    t.sorted.remove(slot);
    t.byKey.remove(slot);
    if (resource === 'pods') this.podsByNode.forget(slot);
    this.arena.releaseSlot(slot);
  }

  /** One page of stored JSON in key order (see ListPageOptions). */
  page(info: ResourceInfo, opts: ListPageOptions = {}): ListPage {
    const t = this.table(info.name);
    const arena = this.arena;
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Infinity;
    const nsPrefix = info.namespaced && opts.namespace !== undefined ? `${opts.namespace}/` : undefined;
    let after = opts.after;
    let end: string | undefined;
    if (nsPrefix !== undefined) {
      if (after === undefined || after < nsPrefix) after = nsPrefix;
      end = `${opts.namespace}0`; // '0' follows '/': the end of the namespace's key range
    }
    const items: string[] = [];
    let lastSlot = -1;
    let more = false;
    const filter = opts.filter;
    // False once the page is full and one more match showed that more follow.
    const take = (slot: number): boolean => {
      const json = arena.text(slot, JSON_PART);
      if (filter && !filter(json, arena.text(slot, KEY))) return true;
      if (items.length === limit) {
        more = true;
        return false;
      }
      items.push(json);
      lastSlot = slot;
      return true;
    };
    if (info.name === 'pods' && opts.nodeName !== undefined) {
      const keyed = this.podsByNode.slotsOn(opts.nodeName).map((slot) => ({ slot, key: arena.text(slot, KEY) }));
      keyed.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
      for (const { slot, key } of keyed) {
        if ((after === undefined || key > after) && (end === undefined || key < end) && !take(slot)) break;
      }
    } else {
      t.sorted.visit(after, end, take);
    }
    return { items, lastKey: lastSlot < 0 ? undefined : arena.text(lastSlot, KEY), more };
  }

  stats(): { objects: number; jsonBytes: number } {
    let objects = 0;
    for (const t of this.tables.values()) objects += t.byKey.count;
    let keyBytes = 0;
    for (let s = 0; s < this.arena.slotLimit; s++) if (this.arena.has(s)) keyBytes += this.arena.length(s, KEY);
    return { objects, jsonBytes: this.arena.bytes - keyBytes };
  }

  private table(resource: ResourceName): Table {
    const t = this.tables.get(resource);
    if (!t) throw new StoreError('NotFound', 404, `the server could not find the requested resource (${String(resource)})`);
    return t;
  }
}
