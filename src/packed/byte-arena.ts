/**
 * Text held outside the JavaScript heap: records of up to three UTF-8 strings (a key, a body
 * and an optional tail), each addressed by an integer slot, stored back to back in large
 * Buffers ("chunks"). A slot's chunk, offset and part lengths live in typed arrays, so a
 * million records cost a few hundred chunks and a dozen typed arrays, not a million strings:
 * a major collection marks none of them.
 *
 * Each record is preceded in its chunk by an 8-byte header (its slot, the payload bytes it
 * occupies), so a chunk can be walked: a record is live when its slot still points at it.
 * Rewriting a slot with a record that fits where the old one lies (no larger, and at least half
 * its room) writes over it in place, unless its chunk is lent; otherwise the new record is
 * appended and the old one freed. Most rewrites of a store (a status flips, a phase changes)
 * keep their length, so they leave no dead bytes behind. A chunk whose live bytes fall to zero is
 * released; with `compact`, a chunk that is no longer written to and whose live bytes fall
 * below half of what it holds has its live records moved to the chunk being written, so the
 * held bytes stay within about twice the live ones whatever the order of frees. A FIFO user
 * (the watch window) frees in write order, so its chunks empty on their own and it needs no
 * compaction.
 *
 * Lengths are in bytes of UTF-8; strings are encoded with Buffer.write and decoded with
 * toString('utf8'), so any text (not only ASCII) round-trips.
 */
const HEADER = 8;
const NONE = 0xffffffff;
const DEFAULT_CHUNK = 1 << 20;
const NO_LENGTHS = new Uint32Array(0);
/**
 * Released chunks of the standard size kept for reuse. A fresh chunk's pages fault in as it is
 * first written (and a freed one goes back to the system): with chunks released and opened at
 * the pace of the writes, those faults were the largest part of a rewrite's cost.
 */
const SPARE_CHUNKS = 4;

export interface ByteArenaOptions {
  /** Bytes of a chunk (a larger record gets a chunk of its own size). */
  chunkBytes?: number;
  /** Move the live records out of chunks under half live (see above). */
  compact?: boolean;
}

export class ByteArena {
  private readonly chunkBytes: number;
  private readonly compact: boolean;
  private chunks: Array<Buffer | undefined> = [];
  /** Bytes written into each chunk (its append position), and of those the live ones. */
  private used = new Uint32Array(8);
  private live = new Uint32Array(8);
  /** 1 for a chunk lent out by `lend`: once released it is left to the collector, never reused. */
  private lent = new Uint8Array(8);
  private readonly freeChunks: number[] = [];
  private readonly spares: Buffer[] = [];
  private current = -1;
  private slotChunk = new Uint32Array(64).fill(NONE);
  private slotOffset = new Uint32Array(64);
  private lenA = new Uint32Array(64);
  /**
   * Parts b and c: empty until a record has such a part (most users store only keys, and the
   * informer caches no part c), then as long as the slot arrays; a slot past the end has none.
   */
  private lenB = NO_LENGTHS;
  private lenC = NO_LENGTHS;
  private freeSlots = new Int32Array(64);
  private freeSlotCount = 0;
  private slotsIssued = 0;
  private liveBytes = 0;

  constructor(opts: ByteArenaOptions = {}) {
    this.chunkBytes = opts.chunkBytes ?? DEFAULT_CHUNK;
    this.compact = opts.compact ?? true;
  }

  /** One past the highest slot ever issued: per-slot arrays of users are sized by it. */
  get slotLimit(): number {
    return this.slotsIssued;
  }

  /** Payload bytes of the live records. */
  get bytes(): number {
    return this.liveBytes;
  }

  /** Bytes held in chunks (live, dead and unwritten). */
  get heldBytes(): number {
    let n = 0;
    for (const c of this.chunks) if (c) n += c.length;
    return n;
  }

  /** A slot with no record; the lowest freed one first. */
  newSlot(): number {
    if (this.freeSlotCount > 0) return this.freeSlots[--this.freeSlotCount];
    const s = this.slotsIssued++;
    if (s === this.slotChunk.length) this.growSlots();
    return s;
  }

  /** Frees the slot's record and the slot itself (it may be issued again). */
  releaseSlot(slot: number): void {
    this.clear(slot);
    if (this.freeSlotCount === this.freeSlots.length) this.freeSlots = grownInt32(this.freeSlots, this.freeSlots.length * 2);
    this.freeSlots[this.freeSlotCount++] = slot;
  }

  has(slot: number): boolean {
    return slot < this.slotsIssued && this.slotChunk[slot] !== NONE;
  }

  /** Stores `a`, `b` and `c` as the slot's record, replacing the one it had. */
  set(slot: number, a: string, b: string, c = ''): void {
    const la = Buffer.byteLength(a, 'utf8');
    const lb = Buffer.byteLength(b, 'utf8');
    const lc = c === '' ? 0 : Buffer.byteLength(c, 'utf8');
    const total = la + lb + lc;
    const p = this.place(slot, total);
    const buf = this.chunks[this.slotChunk[slot]] as Buffer;
    if (la > 0) writeUtf8(buf, a, p, la);
    if (lb > 0) writeUtf8(buf, b, p + la, lb);
    if (lc > 0) writeUtf8(buf, c, p + la + lb, lc);
    this.setLengths(slot, la, lb, lc);
  }

  /**
   * Whether a record of `total` payload bytes may be written over the slot's current one: it
   * fits the room that one occupies without wasting more than half of it, and no reader holds
   * the chunk (a lent chunk's bytes never change).
   */
  private fitsInPlace(slot: number, total: number): boolean {
    const chunk = this.slotChunk[slot];
    if (chunk === NONE || this.lent[chunk] === 1) return false;
    const room = this.roomOf(slot);
    return total <= room && total * 2 >= room;
  }

  /** Payload bytes the slot's record occupies in its chunk (its header's length). */
  private roomOf(slot: number): number {
    return (this.chunks[this.slotChunk[slot]] as Buffer).readUInt32LE(this.slotOffset[slot] - 4);
  }

  /** Frees the slot's record (the slot stays issued, with no record). */
  clear(slot: number): void {
    const chunk = this.slotChunk[slot];
    if (chunk === NONE) return;
    const room = this.roomOf(slot);
    this.slotChunk[slot] = NONE;
    this.live[chunk] -= room + HEADER;
    this.liveBytes -= this.lenA[slot] + this.partB(slot) + this.partC(slot);
    if (chunk === this.current) return;
    if (this.live[chunk] === 0) this.releaseChunk(chunk);
    else if (this.compact && this.live[chunk] * 2 < this.used[chunk]) this.compactChunk(chunk);
  }

  /** Part `part` (0: a, 1: b, 2: c) of the slot's record as a string ('' when it has none). */
  text(slot: number, part: 0 | 1 | 2): string {
    const chunk = this.slotChunk[slot];
    if (chunk === NONE) return '';
    let start = this.slotOffset[slot];
    let len = this.lenA[slot];
    if (part > 0) {
      start += len;
      len = this.partB(slot);
      if (part === 2) {
        start += len;
        len = this.partC(slot);
      }
    }
    return len === 0 ? '' : readUtf8(this.chunks[chunk] as Buffer, start, start + len);
  }

  /** The chunk holding the slot's record (see `start`); its record bytes never change while it is lent. */
  chunkOf(slot: number): Buffer {
    return this.chunks[this.slotChunk[slot]] as Buffer;
  }

  /** Offset of part `part` of the slot's record in `chunkOf(slot)`. */
  start(slot: number, part: 0 | 1 | 2): number {
    const p = this.slotOffset[slot];
    return part === 0 ? p : part === 1 ? p + this.lenA[slot] : p + this.lenA[slot] + this.partB(slot);
  }

  /**
   * Marks the chunk of the slot's record as read outside the arena (`chunkOf`): a lent chunk's
   * records are never written over, so its bytes stay as they are for as long as the reader
   * holds the Buffer, provided it is not reused once released.
   */
  lend(slot: number): void {
    this.lent[this.slotChunk[slot]] = 1;
  }

  /** Stores `src[start, start + len)` as part a of the slot's record (no parts b and c), bytewise. */
  setBytes(slot: number, src: Uint8Array, start: number, len: number): void {
    const p = this.place(slot, len);
    (this.chunks[this.slotChunk[slot]] as Buffer).set(src.subarray(start, start + len), p);
    this.setLengths(slot, len, 0, 0);
  }

  /**
   * Stores `src[0, lenA)` as part a and `src[lenA, lenA + lenB)` as part b of the slot's record
   * (no part c), bytewise: for a caller that encodes a key and a body into one scratch buffer.
   */
  setParts(slot: number, src: Uint8Array, lenA: number, lenB: number): void {
    const total = lenA + lenB;
    const p = this.place(slot, total);
    (this.chunks[this.slotChunk[slot]] as Buffer).set(src.subarray(0, total), p);
    this.setLengths(slot, lenA, lenB, 0);
  }

  /**
   * Room for the slot's next record of `total` payload bytes, in place or appended (the old
   * record freed), with the bookkeeping of bytes done; the caller writes the payload at the
   * offset returned and sets the part lengths.
   */
  private place(slot: number, total: number): number {
    if (this.fitsInPlace(slot, total)) {
      this.liveBytes += total - this.lenA[slot] - this.partB(slot) - this.partC(slot);
      return this.slotOffset[slot];
    }
    // Freed before the room is reserved: freeing may compact a chunk into the one being written,
    // and a room reserved but not yet counted live could be compacted away under the record.
    this.clear(slot);
    const [chunk, at] = this.reserve(total);
    const buf = this.chunks[chunk] as Buffer;
    buf.writeUInt32LE(slot, at);
    buf.writeUInt32LE(total, at + 4);
    this.slotChunk[slot] = chunk;
    this.slotOffset[slot] = at + HEADER;
    this.live[chunk] += total + HEADER;
    this.liveBytes += total;
    return at + HEADER;
  }

  /** True when part b of the slot's record is `src[start, start + len)`, bytewise. */
  partBEquals(slot: number, src: Buffer, start: number, len: number): boolean {
    if (this.partB(slot) !== len) return false;
    const at = this.slotOffset[slot] + this.lenA[slot];
    return (this.chunks[this.slotChunk[slot]] as Buffer).compare(src, start, start + len, at, at + len) === 0;
  }

  /** Byte length of part `part` of the slot's record. */
  length(slot: number, part: 0 | 1 | 2): number {
    return part === 0 ? this.lenA[slot] : part === 1 ? this.partB(slot) : this.partC(slot);
  }

  /** Compares part a of the slot's record with `bytes[0, len)`, bytewise (UTF-8 order is code point order). */
  compareKey(slot: number, bytes: Uint8Array, len: number): number {
    const buf = this.chunks[this.slotChunk[slot]] as Buffer;
    const start = this.slotOffset[slot];
    const la = this.lenA[slot];
    const n = la < len ? la : len;
    for (let i = 0; i < n; i++) {
      const d = buf[start + i] - bytes[i];
      if (d !== 0) return d;
    }
    return la - len;
  }

  /** True when part a of the slot's record is `key`, an ASCII string (its chars are its bytes). */
  keyEqualsAscii(slot: number, key: string): boolean {
    const len = key.length;
    if (this.lenA[slot] !== len) return false;
    const buf = this.chunks[this.slotChunk[slot]] as Buffer;
    const start = this.slotOffset[slot];
    for (let i = 0; i < len; i++) if (buf[start + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  /** Compares part a of two slots' records, bytewise. */
  compareKeys(x: number, y: number): number {
    const bx = this.chunks[this.slotChunk[x]] as Buffer;
    const by = this.chunks[this.slotChunk[y]] as Buffer;
    const sx = this.slotOffset[x];
    const sy = this.slotOffset[y];
    const lx = this.lenA[x];
    const ly = this.lenA[y];
    const n = lx < ly ? lx : ly;
    for (let i = 0; i < n; i++) {
      const d = bx[sx + i] - by[sy + i];
      if (d !== 0) return d;
    }
    return lx - ly;
  }

  /** FNV-1a over part a of the slot's record (equal to `hashBytes` of the same bytes). */
  hashKey(slot: number): number {
    return hashBytes(this.chunks[this.slotChunk[slot]] as Buffer, this.slotOffset[slot], this.lenA[slot]);
  }

  /**
   * Room for a record of `total` payload bytes: its chunk and header offset. The caller counts
   * it live before anything else can compact (the room is not a record until then).
   */
  private reserve(total: number): [number, number] {
    const need = total + HEADER;
    // Retiring a chunk may compact it into a new one, which then is the chunk being written.
    for (let cur = this.current; cur >= 0; cur = this.current) {
      const buf = this.chunks[cur] as Buffer;
      const at = this.used[cur];
      if (at + need <= buf.length) {
        this.used[cur] = at + need;
        return [cur, at];
      }
      this.retire(cur);
    }
    const chunk = this.openChunk(Math.max(need, this.chunkBytes));
    this.used[chunk] = need;
    return [chunk, 0];
  }

  /** `chunk` stops being written to: release or compact it now if its frees already call for it. */
  private retire(chunk: number): void {
    this.current = -1;
    if (this.live[chunk] === 0) this.releaseChunk(chunk);
    else if (this.compact && this.live[chunk] * 2 < this.used[chunk]) this.compactChunk(chunk);
  }

  private openChunk(size: number): number {
    const chunk = this.freeChunks.length > 0 ? (this.freeChunks.pop() as number) : this.chunks.length;
    if (chunk === this.used.length) {
      this.used = grownUint32(this.used, chunk * 2);
      this.live = grownUint32(this.live, chunk * 2);
      const lent = new Uint8Array(chunk * 2);
      lent.set(this.lent);
      this.lent = lent;
    }
    this.chunks[chunk] = size === this.chunkBytes && this.spares.length > 0 ? (this.spares.pop() as Buffer) : Buffer.allocUnsafeSlow(size);
    this.used[chunk] = 0;
    this.live[chunk] = 0;
    this.current = chunk;
    return chunk;
  }

  private releaseChunk(chunk: number, buf = this.chunks[chunk]): void {
    if (buf && buf.length === this.chunkBytes && this.spares.length < SPARE_CHUNKS && this.lent[chunk] === 0) this.spares.push(buf);
    this.lent[chunk] = 0;
    this.chunks[chunk] = undefined;
    this.used[chunk] = 0;
    this.live[chunk] = 0;
    this.freeChunks.push(chunk);
  }

  /** Moves the chunk's live records to the chunk being written, then releases it. */
  private compactChunk(chunk: number): void {
    const buf = this.chunks[chunk] as Buffer;
    const end = this.used[chunk];
    // Out of the arena while it is walked: a record moved below can never land in it.
    this.chunks[chunk] = undefined;
    for (let at = 0; at < end; ) {
      const slot = buf.readUInt32LE(at);
      const total = buf.readUInt32LE(at + 4);
      if (slot < this.slotsIssued && this.slotChunk[slot] === chunk && this.slotOffset[slot] === at + HEADER) {
        const [to, toAt] = this.reserve(total);
        const dst = this.chunks[to] as Buffer;
        buf.copy(dst, toAt, at, at + HEADER + total);
        this.slotChunk[slot] = to;
        this.slotOffset[slot] = toAt + HEADER;
        this.live[to] += total + HEADER;
      }
      at += HEADER + total;
    }
    this.releaseChunk(chunk, buf);
  }

  private growSlots(): void {
    const n = this.slotChunk.length * 2;
    const chunk = grownUint32(this.slotChunk, n);
    chunk.fill(NONE, this.slotChunk.length);
    this.slotChunk = chunk;
    this.slotOffset = grownUint32(this.slotOffset, n);
    this.lenA = grownUint32(this.lenA, n);
    if (this.lenB.length > 0) this.lenB = grownUint32(this.lenB, n);
    if (this.lenC.length > 0) this.lenC = grownUint32(this.lenC, n);
  }

  private partB(slot: number): number {
    return slot < this.lenB.length ? this.lenB[slot] : 0;
  }

  private partC(slot: number): number {
    return slot < this.lenC.length ? this.lenC[slot] : 0;
  }

  private setLengths(slot: number, a: number, b: number, c: number): void {
    this.lenA[slot] = a;
    if (b !== 0 && this.lenB.length === 0) this.lenB = new Uint32Array(this.slotChunk.length);
    if (slot < this.lenB.length) this.lenB[slot] = b;
    if (c !== 0 && this.lenC.length === 0) this.lenC = new Uint32Array(this.slotChunk.length);
    if (slot < this.lenC.length) this.lenC[slot] = c;
  }
}

type Utf8Writer = { utf8Write?: (s: string, offset: number, length: number) => number };

/**
 * `s` as UTF-8 into `buf[offset, offset + length)`. Buffer's own utf8Write where Node has it:
 * `write(s, offset, length, 'utf8')` normalises its arguments on every call, which made it
 * the simulator's top frame on a rewrite-heavy profile (~5× the encode itself).
 */
export function writeUtf8(buf: Buffer, s: string, offset: number, length: number): number {
  const w = buf as unknown as Utf8Writer;
  return w.utf8Write ? w.utf8Write(s, offset, length) : buf.write(s, offset, length, 'utf8');
}

type Utf8Reader = { utf8Slice?: (start: number, end: number) => string };

/**
 * `buf[start, end)` decoded as UTF-8: Buffer's own utf8Slice where Node has it (toString
 * checks and normalises its arguments first, several times the cost of decoding a short name).
 */
export function readUtf8(buf: Buffer, start: number, end: number): string {
  const r = buf as unknown as Utf8Reader;
  return r.utf8Slice ? r.utf8Slice(start, end) : buf.toString('utf8', start, end);
}

/** FNV-1a (32-bit) over `bytes[start, start + len)`. */
export function hashBytes(bytes: Uint8Array, start: number, len: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < start + len; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

export function grownUint32(a: Uint32Array, n: number) {
  const b = new Uint32Array(n);
  b.set(a);
  return b;
}

export function grownInt32(a: Int32Array, n: number) {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}

/** Whether `buf[start, start + len)` is the UTF-8 of `s`: chars against bytes while ASCII, else decoded. */
export function bytesEqualText(buf: Buffer, start: number, len: number, s: string): boolean {
  if (s.length > len) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) return buf.toString('utf8', start, start + len) === s;
    if (buf[start + i] !== c) return false;
  }
  return s.length === len;
}
