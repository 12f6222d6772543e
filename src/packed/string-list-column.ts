/**
 * StringListColumn: an optional list of strings per integer slot (a node's volumesInUse, say),
 * held as one record of UTF-8 bytes in a ByteArena: no JavaScript string or array per slot.
 *
 * A record is its entry count (a 32-bit little-endian word), then the entries front-coded: per
 * entry, how many leading bytes it shares with the entry before it, how many bytes follow
 * (both LEB128), and those bytes. Unique volume names of one node share their driver's prefix
 * (`kubernetes.io/csi/<driver>^`, and more when the list is sorted), so an entry is mostly its
 * handle. Lists are read by rebuilding each entry in a scratch buffer and comparing bytes there
 * (`commonPrefix`, `includes`), or decoded whole into fresh strings (`get`), which die young.
 */
import { ByteArena, bytesEqualText, readUtf8, writeUtf8 } from './byte-arena.js';

/** Compares a held entry, as bytes, with something of the caller's (an interned name, say). */
export interface BytesMatcher {
  nameEquals(id: number, bytes: Uint8Array, start: number, len: number): boolean;
}

export class StringListColumn {
  private readonly arena = new ByteArena();
  /** Where `set` writes the record. */
  private scratch = Buffer.allocUnsafeSlow(1024);
  /** Where `set` encodes the entries whole, before front-coding them. */
  private whole = Buffer.allocUnsafeSlow(1024);
  /** The entry being rebuilt by a reader, in `entry[0, entryLen)`. */
  private entry = Buffer.allocUnsafeSlow(256);
  private entryLen = 0;
  /** A reader's position in the record being walked. */
  private at = 0;

  /** Whether the slot holds a list (an empty one too). */
  has(slot: number): boolean {
    return this.arena.has(slot);
  }

  /** Bytes of the held records. */
  get bytes(): number {
    return this.arena.bytes;
  }

  set(slot: number, list: readonly string[]): void {
    let max = 0;
    for (let i = 0; i < list.length; i++) max += 3 * list[i].length;
    if (max > this.whole.length) this.whole = Buffer.allocUnsafeSlow(max * 2);
    if (4 + max + 10 * list.length > this.scratch.length) this.scratch = Buffer.allocUnsafeSlow((4 + max + 10 * list.length) * 2);
    const whole = this.whole;
    const out = this.scratch;
    out.writeUInt32LE(list.length, 0);
    let at = 4;
    let prevStart = 0;
    let prevLen = 0;
    let start = 0;
    for (let i = 0; i < list.length; i++) {
      const s = list[i];
      const len = s.length === 0 ? 0 : writeUtf8(whole, s, start, 3 * s.length);
      let shared = 0;
      const most = Math.min(len, prevLen);
      while (shared < most && whole[start + shared] === whole[prevStart + shared]) shared++;
      at = writeLeb(out, at, shared);
      at = writeLeb(out, at, len - shared);
      whole.copy(out, at, start + shared, start + len);
      at += len - shared;
      prevStart = start;
      prevLen = len;
      start += len;
    }
    while (this.arena.slotLimit <= slot) this.arena.newSlot();
    this.arena.setBytes(slot, out, 0, at);
  }

  clear(slot: number): void {
    if (this.arena.has(slot)) this.arena.clear(slot);
  }

  /** Number of entries of the slot's list (0 when it has none). */
  count(slot: number): number {
    if (!this.arena.has(slot)) return 0;
    return this.arena.chunkOf(slot).readUInt32LE(this.arena.start(slot, 0));
  }

  /** The slot's list as fresh strings, or undefined. */
  get(slot: number): string[] | undefined {
    if (!this.arena.has(slot)) return undefined;
    const buf = this.open(slot);
    const out = new Array<string>(buf.readUInt32LE(this.at - 4));
    for (let i = 0; i < out.length; i++) {
      this.next(buf);
      out[i] = this.entryLen === 0 ? '' : readUtf8(this.entry, 0, this.entryLen);
    }
    return out;
  }

  /** How many leading strings of `list` equal the slot's first entries (0 when it has no list). */
  commonPrefix(slot: number, list: readonly string[]): number {
    if (!this.arena.has(slot)) return 0;
    const buf = this.open(slot);
    const n = Math.min(buf.readUInt32LE(this.at - 4), list.length);
    for (let i = 0; i < n; i++) {
      this.next(buf);
      if (!bytesEqualText(this.entry, 0, this.entryLen, list[i])) return i;
    }
    return n;
  }

  /** Whether some entry of the slot's list matches `id` by `m.nameEquals`. */
  includes(slot: number, m: BytesMatcher, id: number): boolean {
    if (!this.arena.has(slot)) return false;
    const buf = this.open(slot);
    const n = buf.readUInt32LE(this.at - 4);
    for (let i = 0; i < n; i++) {
      this.next(buf);
      if (m.nameEquals(id, this.entry, 0, this.entryLen)) return true;
    }
    return false;
  }

  /** Starts a walk of the slot's record: returns its chunk, `at` past the count. */
  private open(slot: number): Buffer {
    this.at = this.arena.start(slot, 0) + 4;
    this.entryLen = 0;
    return this.arena.chunkOf(slot);
  }

  /** Rebuilds the next entry into `entry` from the one before it. */
  private next(buf: Buffer): void {
    const shared = this.readLeb(buf);
    const rest = this.readLeb(buf);
    const len = shared + rest;
    if (len > this.entry.length) {
      const grown = Buffer.allocUnsafeSlow(len * 2);
      this.entry.copy(grown, 0, 0, shared);
      this.entry = grown;
    }
    buf.copy(this.entry, shared, this.at, this.at + rest);
    this.at += rest;
    this.entryLen = len;
  }

  private readLeb(buf: Buffer): number {
    let n = 0;
    let shift = 0;
    for (;;) {
      const x = buf[this.at++];
      n += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return n;
      shift += 7;
    }
  }
}

function writeLeb(buf: Buffer, at: number, n: number): number {
  while (n >= 0x80) {
    buf[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[at++] = n;
  return at;
}
