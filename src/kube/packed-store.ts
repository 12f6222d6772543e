/**
 * PackedStore: the reflector's cache for the kinds whose count grows with the fleet (pods, PVCs,
 * PVs, VolumeAttachments, nodes), held off the JavaScript heap. Each object is one ByteArena
 * record (part a: its key, part b: its projection encoded by the kind's codec), found by a
 * KeyIndex; its resourceVersion is an Int32Array column (a canonical one packs into a number,
 * packed-rv.ts; any other is kept as a string in a side Map). No JavaScript object per stored
 * object: not its key, not its projection, not its strings.
 *
 * Same contract as ProjectionStore (ProjectionCache), with one difference a caller must heed:
 * what it hands out (`get`, `values`, a handler's `obj` and `old`) is decoded afresh on each
 * read, a transient copy to use and drop, not to keep (kept, it would be one more object per
 * stored object, and a stale one). An update whose projection encodes to the bytes stored leaves
 * the record as it was and reaches `update` with `obj === old` (one decoded object), as
 * ProjectionStore's `keepFrom` hands over the stored object.
 *
 * `add` and a changed `update` get the caller's own `fresh` projection as `obj` (equal to its
 * decoding: test/kube/projection-codecs.test.ts), so that a list or a watch event decodes nothing
 * but the previous version an update replaces.
 *
 * `values()` and `keys()` walk the slots in order: an object added during the walk is visited
 * when its slot lies ahead (a freed slot behind is reused first), one removed before it is
 * reached is not. Level-based passes (the populator's) need no more: an added object reaches
 * them through the `add` handler anyway.
 */
import { ByteArena, grownInt32 } from '../packed/byte-arena.js';
import { KeyIndex } from '../packed/key-index.js';
import type { Logger } from '../log/logger.js';
import { packRv } from './packed-rv.js';
import { replaceAtOnce, type ProjectionCache, type ProjectionHandler, type ReplaceCounts, type StoreEntry } from './projection-store.js';
import { RecordReader, RecordWriter, type ProjectionCodec } from './projections/record-codec.js';
import { isPackedKey, packedKeyText, packKey, PACKED_KEY_BYTES } from './projections/store-key.js';

/**
 * Bytes of an arena chunk. Smaller than the arena's default: each store holds one chunk being
 * filled and a few spare ones (byte-arena.ts), and five stores of 1 MiB chunks held ~10 MiB
 * whatever the fleet's size; 256 KiB chunks are still ~1,500 records each.
 */
const CHUNK_BYTES = 256 << 10;

/** The rv column's mark for a version kept as a string (`textRvs`). */
const TEXT_RV = -1;

export class PackedStore<T> implements ProjectionCache<T> {
  private readonly arena = new ByteArena({ chunkBytes: CHUNK_BYTES });
  private readonly index = new KeyIndex(this.arena);
  private rvs = new Int32Array(64);
  /** Versions that do not pack into a number, by slot (none on a cluster with etcd's versions). */
  private readonly textRvs = new Map<number, string>();
  private readonly handlers = new Set<ProjectionHandler<T>>();
  private readonly writer = new RecordWriter();
  private readonly reader = new RecordReader();
  private readonly keyScratch = Buffer.allocUnsafeSlow(PACKED_KEY_BYTES);
  /** Bytes of the key at the head of the writer's buffer (the record's part a). */
  private keyLen = 0;

  constructor(private readonly log: Logger, private readonly codec: ProjectionCodec<T>) {}

  get(key: string): T | undefined {
    const slot = this.slotOf(key);
    return slot < 0 ? undefined : this.decode(slot);
  }

  has(key: string): boolean {
    return this.slotOf(key) >= 0;
  }

  resourceVersionOf(key: string): string | undefined {
    const slot = this.slotOf(key);
    if (slot < 0) return undefined;
    const v = this.rvs[slot]!;
    return v === TEXT_RV ? this.textRvs.get(slot) : String(v);
  }

  get size(): number {
    return this.index.count;
  }

  *values(): IterableIterator<T> {
    const arena = this.arena;
    for (let s = 0; s < arena.slotLimit; s++) if (arena.has(s)) yield this.decode(s);
  }

  *keys(): IterableIterator<string> {
    const arena = this.arena;
    for (let s = 0; s < arena.slotLimit; s++) if (arena.has(s)) yield this.keyOf(s);
  }

  addHandler(h: ProjectionHandler<T>): () => void {
    this.handlers.add(h);
    return () => this.handlers.delete(h);
  }

  /** Add or update from a watch event; ADDED for a known key is an update and vice versa. */
  upsert(key: string, fresh: T, rv: string): void {
    this.write(key, fresh, rv, this.slotOf(key));
  }

  /** Removes `key`; a no-op (no event) when it is not stored. */
  remove(key: string, final?: T): void {
    const slot = this.slotOf(key);
    if (slot < 0) return;
    const old = final ?? (this.handlers.size > 0 ? this.decode(slot) : undefined);
    this.drop(slot);
    if (old !== undefined) this.emit('delete', old);
  }

  /** As ProjectionStore.replace. */
  replace(listed: Map<string, StoreEntry<T>>, present: ReadonlySet<string>): ReplaceCounts {
    return replaceAtOnce(this, listed, present);
  }

  /** As ProjectionStore.replaceInChunks: listed objects first, deletions last, at most `chunk` per step. */
  *replaceInChunks(listed: Map<string, StoreEntry<T>>, present: ReadonlySet<string>, chunk: number): Generator<void, ReplaceCounts> {
    const counts: ReplaceCounts = { added: 0, updated: 0, deleted: 0 };
    let n = 0;
    for (const [key, e] of listed) {
      if (++n % chunk === 0) yield;
      const slot = this.slotOf(key);
      if (slot >= 0 && this.sameRv(slot, e.rv)) continue;
      if (slot >= 0) counts.updated++;
      else counts.added++;
      this.write(key, e.value, e.rv, slot);
    }
    if (this.index.count > listed.size) {
      const arena = this.arena;
      for (let s = 0; s < arena.slotLimit; s++) {
        if (!arena.has(s)) continue;
        if (++n % chunk === 0) yield;
        if (!arena.has(s)) continue;
        const key = this.keyOf(s);
        if (listed.has(key) || present.has(key)) continue;
        const old = this.handlers.size > 0 ? this.decode(s) : undefined;
        this.drop(s);
        counts.deleted++;
        if (old !== undefined) this.emit('delete', old);
      }
    }
    return counts;
  }

  /** Stores `fresh` under `key` (at `slot`, or a new slot when -1) and tells the handlers. */
  private write(key: string, fresh: T, rv: string, slot: number): void {
    const bodyLen = this.encode(key, fresh);
    const w = this.writer.bytes;
    if (slot < 0) {
      const s = this.arena.newSlot();
      this.arena.setParts(s, w, this.keyLen, bodyLen);
      this.index.insert(s);
      this.setRv(s, rv);
      this.emit('add', fresh);
      return;
    }
    const old = this.handlers.size > 0 ? this.decode(slot) : undefined;
    const same = this.arena.partBEquals(slot, w, this.keyLen, bodyLen);
    // The key is the stored one (found by it), so its hash in the index stays valid.
    if (!same) this.arena.setParts(slot, w, this.keyLen, bodyLen);
    this.setRv(slot, rv);
    if (old !== undefined) this.emit('update', same ? old : fresh, old);
  }

  /** The key then the body into the writer; returns the body's length. */
  private encode(key: string, value: T): number {
    const w = this.writer;
    w.reset();
    w.key(key);
    this.keyLen = w.pos;
    this.codec.encode(value, w);
    return w.pos - this.keyLen;
  }

  private decode(slot: number): T {
    const r = this.reader;
    const arena = this.arena;
    r.reset(arena.chunkOf(slot), arena.start(slot, 0), arena.length(slot, 0));
    try {
      return this.codec.decode(r);
    } finally {
      r.release();
    }
  }

  /** The slot of `key`, held packed when it packs (store-key.ts), or -1. */
  private slotOf(key: string): number {
    const n = packKey(key, this.keyScratch, 0);
    return n < 0 ? this.index.find(key) : this.index.findBytes(this.keyScratch, n);
  }

  private keyOf(slot: number): string {
    const arena = this.arena;
    const bytes = arena.chunkOf(slot);
    const start = arena.start(slot, 0);
    return isPackedKey(bytes, start, arena.length(slot, 0)) ? packedKeyText(bytes, start) : arena.text(slot, 0);
  }

  private drop(slot: number): void {
    this.index.remove(slot);
    this.arena.releaseSlot(slot);
    if (this.rvs[slot] === TEXT_RV) this.textRvs.delete(slot);
  }

  private setRv(slot: number, rv: string): void {
    if (slot >= this.rvs.length) this.rvs = grownInt32(this.rvs, Math.max(slot + 1, this.rvs.length * 2));
    const packed = packRv(rv);
    if (typeof packed === 'number') {
      if (this.rvs[slot] === TEXT_RV) this.textRvs.delete(slot);
      this.rvs[slot] = packed;
    } else {
      this.rvs[slot] = TEXT_RV;
      this.textRvs.set(slot, packed);
    }
  }

  private sameRv(slot: number, rv: string): boolean {
    const packed = packRv(rv);
    const stored = this.rvs[slot];
    return typeof packed === 'number' ? stored === packed : stored === TEXT_RV && this.textRvs.get(slot) === packed;
  }

  private emit(kind: 'add' | 'delete', obj: T): void;
  private emit(kind: 'update', obj: T, old: T): void;
  private emit(kind: 'add' | 'update' | 'delete', obj: T, old?: T): void {
    for (const h of this.handlers) {
      try {
        if (kind === 'add') h.add?.(obj);
        else if (kind === 'update') h.update?.(obj, old as T);
        else h.delete?.(obj);
      } catch (err) {
        this.log.error({ err, event: kind }, 'projection handler threw');
      }
    }
  }
}
