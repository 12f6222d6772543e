/**
 * Arena slots sorted by their key (part a of their record), so that a paginated list can
 * resume after any key in O(log n): a list of sorted chunks, each an Int32Array of up to
 * MAX_CHUNK slots. Its node count grows by one per ~500 keys, not per key. Ordering is by
 * UTF-8 byte, which is code point order and, for the ASCII names Kubernetes allows, the
 * UTF-16 order of the keys as strings (the order etcd lists keys in).
 *
 * A key beyond the last is appended at once; any other is sorted in when a read needs it, not
 * when it is inserted. Writes far outnumber lists (a 50k-node cold start creates 500k
 * VolumeAttachments, whose names are hashes, so each lands in a random chunk, and lists them
 * once), and a sorted insert's binary search over a large set misses the cache at every key
 * it compares. A read sorts what is pending and merges it in.
 *
 * The pending slots are kept as a list that may hold a slot more than once, or a slot removed
 * since; a per-slot state (not indexed / in the chunks / pending) decides what a flush takes.
 */
import { writeUtf8, type ByteArena } from '../../packed/byte-arena.js';

const MAX_CHUNK = 1024;
/** A flush merges everything in one pass when at least 1/BULK of the set is pending; fewer are inserted one by one. */
const BULK = 128;
const OUT = 0;
const IN = 1;
const PENDING = 2;

export class SortedSlots {
  private chunks: Int32Array[] = [];
  private lengths = new Int32Array(16);
  /** Slots in `chunks`. */
  private count = 0;
  private pending = new Int32Array(64);
  private pendingCount = 0;
  private state = new Uint8Array(64);
  private scratch = Buffer.allocUnsafeSlow(256);

  constructor(private readonly arena: ByteArena) {}

  get size(): number {
    this.flush();
    return this.count;
  }

  /** Inserts `slot` (whose record holds its key); a slot already present is left as it is. */
  insert(slot: number): void {
    if (slot >= this.state.length) {
      const n = new Uint8Array(Math.max(slot + 1, this.state.length * 2));
      n.set(this.state);
      this.state = n;
    }
    if (this.state[slot] !== OUT) return;
    // A key beyond the last goes on the end at once: the generated fleet's names come in
    // order, and appending costs one comparison (a pending key it passes is merged later).
    const ci = this.chunks.length - 1;
    if (ci < 0 || this.arena.compareKeys(slot, this.lastOf(ci)) > 0) {
      if (ci < 0 || this.lengths[ci] >= MAX_CHUNK) this.pushChunk(slot);
      else this.chunks[ci][this.lengths[ci]++] = slot;
      this.count++;
      this.state[slot] = IN;
      return;
    }
    if (this.pendingCount === this.pending.length) {
      const n = new Int32Array(this.pending.length * 2);
      n.set(this.pending);
      this.pending = n;
    }
    this.pending[this.pendingCount++] = slot;
    this.state[slot] = PENDING;
  }

  /** Removes `slot` if present; its record must still hold its key. */
  remove(slot: number): void {
    const st = slot < this.state.length ? this.state[slot] : OUT;
    this.state[slot] = OUT;
    if (st !== IN) return; // pending: the flush skips it
    const ci = this.chunkForSlot(slot);
    if (ci === this.chunks.length) return;
    const chunk = this.chunks[ci];
    const len = this.lengths[ci];
    let i = this.lowerBoundSlot(chunk, len, slot);
    while (i < len && chunk[i] !== slot) i++; // equal keys cannot repeat; a guard, not a scan
    if (i === len) return;
    chunk.copyWithin(i, i + 1, len);
    this.lengths[ci] = len - 1;
    this.count--;
    if (len === 1) this.dropChunk(ci);
  }

  /**
   * Calls `visit` with the slots whose keys are strictly greater than `after` (all when
   * undefined) and below `end` (exclusive; no bound when undefined), in order, until it
   * returns false. `visit` must not insert or remove slots.
   */
  visit(after: string | undefined, end: string | undefined, visit: (slot: number) => boolean): void {
    this.flush();
    let ci = 0;
    let i = 0;
    if (after !== undefined) {
      const n = this.encode(after);
      ci = this.chunkForBytes(n);
      if (ci < this.chunks.length) i = this.upperBoundBytes(this.chunks[ci], this.lengths[ci], n);
    }
    const endLen = end === undefined ? -1 : this.encode(end);
    for (; ci < this.chunks.length; ci++, i = 0) {
      const chunk = this.chunks[ci];
      const len = this.lengths[ci];
      for (; i < len; i++) {
        const s = chunk[i];
        if ((endLen >= 0 && this.arena.compareKey(s, this.scratch, endLen) >= 0) || !visit(s)) return;
      }
    }
  }

  /** Sorts the pending slots into the chunks. */
  private flush(): void {
    if (this.pendingCount === 0) return;
    let n = 0;
    const fresh = new Int32Array(this.pendingCount);
    for (let p = 0; p < this.pendingCount; p++) {
      const s = this.pending[p];
      if (this.state[s] !== PENDING) continue;
      this.state[s] = IN;
      fresh[n++] = s;
    }
    this.pendingCount = 0;
    if (this.pending.length > 4096) this.pending = new Int32Array(64);
    const sorted = fresh.subarray(0, n).sort((x, y) => this.arena.compareKeys(x, y));
    if (n * BULK < this.count) {
      for (let f = 0; f < n; f++) this.insertSorted(sorted[f]);
      return;
    }
    const merged = new Int32Array(this.count + n);
    let m = 0;
    let f = 0;
    for (let ci = 0; ci < this.chunks.length; ci++) {
      const chunk = this.chunks[ci];
      for (let i = 0; i < this.lengths[ci]; i++) {
        const s = chunk[i];
        while (f < n && this.arena.compareKeys(sorted[f], s) < 0) merged[m++] = sorted[f++];
        merged[m++] = s;
      }
    }
    while (f < n) merged[m++] = sorted[f++];
    // Half-full chunks, as a split leaves them: the next inserts into one do not split it at once.
    const size = MAX_CHUNK >> 1;
    this.chunks = [];
    this.lengths = new Int32Array(Math.max(16, Math.ceil(m / size) * 2));
    for (let at = 0; at < m; at += size) {
      const c = new Int32Array(MAX_CHUNK);
      const len = Math.min(size, m - at);
      c.set(merged.subarray(at, at + len));
      this.lengths[this.chunks.length] = len;
      this.chunks.push(c);
    }
    this.count = m;
  }

  private insertSorted(slot: number): void {
    if (this.chunks.length === 0) {
      this.pushChunk(slot);
      this.count = 1;
      return;
    }
    let ci = this.chunkForSlot(slot);
    if (ci === this.chunks.length) ci--;
    const chunk = this.chunks[ci];
    const len = this.lengths[ci];
    const i = this.lowerBoundSlot(chunk, len, slot);
    chunk.copyWithin(i + 1, i, len);
    chunk[i] = slot;
    this.lengths[ci] = len + 1;
    this.count++;
    if (len + 1 === MAX_CHUNK) this.split(ci);
  }

  /** Splits a full chunk in two halves. */
  private split(ci: number): void {
    const chunk = this.chunks[ci];
    const half = MAX_CHUNK >> 1;
    const next = new Int32Array(MAX_CHUNK);
    next.set(chunk.subarray(half, MAX_CHUNK));
    this.chunks.splice(ci + 1, 0, next);
    this.ensureLengths(this.chunks.length);
    this.lengths.copyWithin(ci + 2, ci + 1, this.chunks.length - 1);
    this.lengths[ci] = half;
    this.lengths[ci + 1] = MAX_CHUNK - half;
  }

  private pushChunk(slot: number): void {
    const c = new Int32Array(MAX_CHUNK);
    c[0] = slot;
    this.ensureLengths(this.chunks.length + 1);
    this.lengths[this.chunks.length] = 1;
    this.chunks.push(c);
  }

  private dropChunk(ci: number): void {
    this.chunks.splice(ci, 1);
    this.lengths.copyWithin(ci, ci + 1, this.chunks.length + 1);
  }

  private ensureLengths(n: number): void {
    if (n <= this.lengths.length) return;
    const l = new Int32Array(n * 2);
    l.set(this.lengths);
    this.lengths = l;
  }

  private lastOf(ci: number): number {
    return this.chunks[ci][this.lengths[ci] - 1];
  }

  /** Index of the first chunk whose last key is >= the slot's key (chunks.length if none). */
  private chunkForSlot(slot: number): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.arena.compareKeys(this.lastOf(mid), slot) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** As chunkForSlot, for the key in `scratch[0, len)`. */
  private chunkForBytes(len: number): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.arena.compareKey(this.lastOf(mid), this.scratch, len) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private lowerBoundSlot(a: Int32Array, len: number, slot: number): number {
    let lo = 0;
    let hi = len;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.arena.compareKeys(a[mid], slot) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose key is > the key in `scratch[0, len)`. */
  private upperBoundBytes(a: Int32Array, n: number, len: number): number {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.arena.compareKey(a[mid], this.scratch, len) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Encodes `key` into `scratch`; answers its byte length. */
  private encode(key: string): number {
    const need = Buffer.byteLength(key, 'utf8');
    if (need > this.scratch.length) this.scratch = Buffer.allocUnsafeSlow(need * 2);
    return writeUtf8(this.scratch, key, 0, need);
  }
}
