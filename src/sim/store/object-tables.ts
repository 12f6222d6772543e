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
import { ByteArena, grownInt32 } from '../../packed/byte-arena.js';
import { KeyIndex } from '../../packed/key-index.js';
import { PodNodeIndex } from './pod-node-index.js';
import { RESOURCE_NAMES, type ResourceInfo } from './resources.js';
import type { BytePage, ListPage, ListPageOptions } from './servable-store.js';
import { StoreError, type ResourceName } from './sim-store.js';
import { SortedSlots } from './sorted-slots.js';

const KEY = 0;
const JSON_PART = 1;
const COMMA = 0x2c;

type Latin1Slicer = Buffer & { latin1Slice(start: number, end: number): string };
const hasLatin1Slice = typeof (Buffer.prototype as Partial<Latin1Slicer>).latin1Slice === 'function';

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
  /** Per slot: 1 when its record is all ASCII (see `jsonAt`). */
  private ascii = new Uint8Array(64);
  /** The slots of the last `pageSlots`. */
  private pageBuf = new Int32Array(512);

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
    return slot < 0 ? undefined : this.jsonAt(slot);
  }

  /**
   * The stored JSON of `key` as bytes, or undefined: a copy (from Buffer's pool for JSON of a
   * few KB). Not a view of the arena: a chunk lent to a view is never reused once released, and
   * with GETs between writes every chunk would be (each rewrite then pays a fresh chunk's page
   * faults).
   */
  jsonBytes(resource: ResourceName, key: string): Buffer | undefined {
    const slot = this.table(resource).byKey.find(key);
    if (slot < 0) return undefined;
    const out = Buffer.allocUnsafe(this.arena.length(slot, JSON_PART));
    this.copyJson(slot, out, 0);
    return out;
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
    this.markAscii(slot, key, json);
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
    const p = this.pageSlots(info, opts);
    const items = new Array<string>(p.count);
    for (let i = 0; i < p.count; i++) items[i] = this.jsonAt(p.slots[i]);
    return { items, lastKey: p.lastKey, more: p.more };
  }

  /**
   * One page as the slots of its items (in `slots[0, count)`, a buffer reused by the next
   * call): what `page` decodes, and what `copyJson` copies as bytes.
   */
  pageSlots(info: ResourceInfo, opts: ListPageOptions = {}): { slots: Int32Array; count: number; lastKey: string | undefined; more: boolean } {
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
    let count = 0;
    let more = false;
    const filter = opts.filter;
    // False once the page is full and one more match showed that more follow.
    const take = (slot: number): boolean => {
      if (filter && !filter(this.jsonAt(slot), arena.text(slot, KEY))) return true;
      if (count === limit) {
        more = true;
        return false;
      }
      if (count === this.pageBuf.length) this.pageBuf = grownInt32(this.pageBuf, count * 2);
      this.pageBuf[count++] = slot;
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
    const lastKey = count === 0 ? undefined : arena.text(this.pageBuf[count - 1], KEY);
    return { slots: this.pageBuf, count, lastKey, more };
  }

  /** One page as bytes (see BytePage): the slots' records are copied when asked, until the next write. */
  bytePage(info: ResourceInfo, opts: ListPageOptions = {}): BytePage {
    const p = this.pageSlots(info, opts);
    const slots = p.slots.slice(0, p.count);
    let bytes = 0;
    for (let i = 0; i < slots.length; i++) bytes += this.jsonLength(slots[i]);
    return {
      count: slots.length,
      bytes,
      lastKey: p.lastKey,
      more: p.more,
      copyItems: (buf: Buffer, at: number): number => {
        for (let i = 0; i < slots.length; i++) {
          if (i > 0) buf[at++] = COMMA;
          at = this.copyJson(slots[i], buf, at);
        }
        return at;
      },
      strings: () => Array.from(slots, (s) => this.jsonAt(s)),
    };
  }

  /** Byte length of the slot's stored JSON. */
  jsonLength(slot: number): number {
    return this.arena.length(slot, JSON_PART);
  }

  /** Copies the slot's stored JSON into `buf` at `at` (room for `jsonLength(slot)`); answers the offset after it. */
  copyJson(slot: number, buf: Buffer, at: number): number {
    const start = this.arena.start(slot, JSON_PART);
    const len = this.arena.length(slot, JSON_PART);
    const chunk = this.arena.chunkOf(slot);
    // A view and TypedArray#set: Buffer#copy validates its arguments, then does the same (~1.5× the time).
    buf.set(new Uint8Array(chunk.buffer, chunk.byteOffset + start, len), at);
    return at + len;
  }

  /**
   * The slot's JSON as a string. Most JSON is ASCII (Kubernetes names, JSON.stringify's
   * escapes), and an ASCII record is decoded as Latin-1, a plain copy into a one-byte string
   * (about half the time of a UTF-8 decode of the same bytes).
   */
  jsonAt(slot: number): string {
    if (this.ascii[slot] === 1) {
      const start = this.arena.start(slot, JSON_PART);
      return (this.arena.chunkOf(slot) as Latin1Slicer).latin1Slice(start, start + this.arena.length(slot, JSON_PART));
    }
    return this.arena.text(slot, JSON_PART);
  }

  /** Records whether the slot's record (just written from `key` and `json`) is ASCII: its byte lengths are its lengths in code units. */
  private markAscii(slot: number, key: string, json: string): void {
    if (slot >= this.ascii.length) {
      const n = new Uint8Array(Math.max(slot + 1, this.ascii.length * 2));
      n.set(this.ascii);
      this.ascii = n;
    }
    const a = this.arena;
    this.ascii[slot] = a.length(slot, KEY) === key.length && a.length(slot, JSON_PART) === json.length && hasLatin1Slice ? 1 : 0;
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
