/**
 * StringTable: an off-heap interner with reference counts. Each distinct string is held once,
 * as UTF-8 bytes in a ByteArena, and named by an integer id (its arena slot) that stays the
 * same while any reference to it is held; the last `release` frees the id, which may then be
 * issued to another string. Lookups go through a KeyIndex, so a table of a million strings is a
 * few Buffers and typed arrays, not a million JS strings.
 *
 * For names shared by many holders (node names, volume names, error messages) that must not
 * each hold a JS string: a holder keeps the id, and reads the string (`text`) only transiently.
 */
import { ByteArena, grownUint32 } from './byte-arena.js';
import { KeyIndex } from './key-index.js';

/** Longest string copied in through the scratch buffer; longer ones go through the encoder. */
const MAX_SCRATCH = 1 << 16;

export class StringTable {
  private readonly arena: ByteArena;
  private readonly index: KeyIndex;
  private refs = new Uint32Array(64);
  private scratch = Buffer.allocUnsafeSlow(256);

  constructor(opts: { chunkBytes?: number } = {}) {
    this.arena = new ByteArena({ chunkBytes: opts.chunkBytes ?? 1 << 16 });
    this.index = new KeyIndex(this.arena);
  }

  /** Distinct strings held. */
  get size(): number {
    return this.index.count;
  }

  /** One past the highest id ever issued: per-id arrays of users are sized by it. */
  get idLimit(): number {
    return this.arena.slotLimit;
  }

  /** The id of `s`, or -1 when the table does not hold it. Takes no reference. */
  find(s: string): number {
    return this.index.find(s);
  }

  /**
   * The id of `s`, adding it with one reference when absent and taking none when present: for a
   * holder that owns each string once and frees it with one `release`.
   */
  intern(s: string): number {
    const id = this.index.find(s);
    return id < 0 ? this.add(s) : id;
  }

  /** Whether `id` is held now. */
  has(id: number): boolean {
    return id >= 0 && this.arena.has(id);
  }

  /** The id of `s`, adding it when absent, with one more reference to it. */
  acquire(s: string): number {
    const id = this.index.find(s);
    if (id < 0) return this.add(s);
    this.refs[id]++;
    return id;
  }

  /** Adds `s`, which the table does not hold (`find` said -1), with one reference; its new id. */
  add(s: string): number {
    const id = this.arena.newSlot();
    // An ASCII string is copied in by a JS loop: for names of tens of chars that costs less than
    // the two calls into Buffer's encoder (its byte length, then its bytes) that `set` makes.
    if (this.asciiToScratch(s)) this.arena.setBytes(id, this.scratch, 0, s.length);
    else this.arena.set(id, s, '');
    this.index.insert(id);
    if (id >= this.refs.length) this.refs = grownUint32(this.refs, Math.max(id + 1, this.refs.length * 2));
    this.refs[id] = 1;
    return id;
  }

  /** Writes `s` into `scratch` when it is ASCII (its chars are its bytes); false when it is not. */
  private asciiToScratch(s: string): boolean {
    const n = s.length;
    if (n > this.scratch.length) {
      if (n > MAX_SCRATCH) return false;
      this.scratch = Buffer.allocUnsafeSlow(Math.max(n, this.scratch.length * 2));
    }
    const buf = this.scratch;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) return false;
      buf[i] = c;
    }
    return true;
  }

  /** One more reference to a held id. */
  retain(id: number): void {
    this.refs[id]++;
  }

  /** Drops one reference to `id`; the last one frees the string and its id. */
  release(id: number): void {
    if (--this.refs[id] > 0) return;
    this.index.remove(id);
    this.arena.releaseSlot(id);
  }

  /** References held to `id` (0 for a free id). */
  refCount(id: number): number {
    return id < this.refs.length && this.arena.has(id) ? this.refs[id] : 0;
  }

  /** The string of a held id (a new JS string each call). */
  text(id: number): string {
    return this.arena.text(id, 0);
  }

  /** Whether `id` holds `s` (no string made for an ASCII `s`). */
  equals(id: number, s: string): boolean {
    // A non-ASCII `s` is compared decoded: its chars are not its bytes.
    return isAscii(s) ? this.arena.keyEqualsAscii(id, s) : this.arena.text(id, 0) === s;
  }

  /** Whether `id` holds `head + sep + tail` (`sep` one ASCII char), without building that string. */
  equalsJoined(id: number, head: string, sep: string, tail: string): boolean {
    const a = this.arena;
    const len = a.length(id, 0);
    if (len !== head.length + 1 + tail.length) return isAscii(head) && isAscii(tail) ? false : a.text(id, 0) === head + sep + tail;
    const buf = a.chunkOf(id);
    let p = a.start(id, 0);
    for (let i = 0; i < head.length; i++) {
      const c = head.charCodeAt(i);
      if (c >= 0x80) return a.text(id, 0) === head + sep + tail;
      if (buf[p++] !== c) return false;
    }
    if (buf[p++] !== sep.charCodeAt(0)) return false;
    for (let i = 0; i < tail.length; i++) {
      const c = tail.charCodeAt(i);
      if (c >= 0x80) return a.text(id, 0) === head + sep + tail;
      if (buf[p++] !== c) return false;
    }
    return true;
  }
}

export function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false;
  return true;
}
