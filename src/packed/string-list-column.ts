/**
 * StringListColumn: an optional list of strings per integer slot (a node's volumesInUse, say),
 * held as one record of UTF-8 bytes in a ByteArena: no JavaScript string or array per slot.
 * A record is its entry count then, per entry, its byte length and bytes (lengths as 32-bit
 * little-endian words). Lists are read by comparing bytes in place (`commonPrefix`,
 * `includes`) or decoded whole into fresh strings (`get`), which die young.
 */
import { ByteArena, bytesEqualText, readUtf8, writeUtf8 } from './byte-arena.js';

/** Compares a held entry, as bytes, with something of the caller's (an interned name, say). */
export interface BytesMatcher {
  nameEquals(id: number, bytes: Uint8Array, start: number, len: number): boolean;
}

export class StringListColumn {
  private readonly arena = new ByteArena();
  private scratch = Buffer.allocUnsafeSlow(1024);

  /** Whether the slot holds a list (an empty one too). */
  has(slot: number): boolean {
    return this.arena.has(slot);
  }

  /** Bytes of the held records. */
  get bytes(): number {
    return this.arena.bytes;
  }

  set(slot: number, list: readonly string[]): void {
    let need = 4;
    for (let i = 0; i < list.length; i++) need += 4 + 3 * list[i].length;
    if (need > this.scratch.length) this.scratch = Buffer.allocUnsafeSlow(need * 2);
    const buf = this.scratch;
    buf.writeUInt32LE(list.length, 0);
    let at = 4;
    for (let i = 0; i < list.length; i++) {
      const s = list[i];
      const len = s.length === 0 ? 0 : writeUtf8(buf, s, at + 4, 3 * s.length);
      buf.writeUInt32LE(len, at);
      at += 4 + len;
    }
    while (this.arena.slotLimit <= slot) this.arena.newSlot();
    this.arena.setBytes(slot, buf, 0, at);
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
    const buf = this.arena.chunkOf(slot);
    let at = this.arena.start(slot, 0);
    const n = buf.readUInt32LE(at);
    at += 4;
    const out = new Array<string>(n);
    for (let i = 0; i < n; i++) {
      const len = buf.readUInt32LE(at);
      out[i] = len === 0 ? '' : readUtf8(buf, at + 4, at + 4 + len);
      at += 4 + len;
    }
    return out;
  }

  /** How many leading strings of `list` equal the slot's first entries (0 when it has no list). */
  commonPrefix(slot: number, list: readonly string[]): number {
    if (!this.arena.has(slot)) return 0;
    const buf = this.arena.chunkOf(slot);
    let at = this.arena.start(slot, 0);
    const n = Math.min(buf.readUInt32LE(at), list.length);
    at += 4;
    for (let i = 0; i < n; i++) {
      const len = buf.readUInt32LE(at);
      if (!bytesEqualText(buf, at + 4, len, list[i])) return i;
      at += 4 + len;
    }
    return n;
  }

  /** Whether some entry of the slot's list matches `id` by `m.nameEquals`. */
  includes(slot: number, m: BytesMatcher, id: number): boolean {
    if (!this.arena.has(slot)) return false;
    const buf = this.arena.chunkOf(slot);
    let at = this.arena.start(slot, 0);
    const n = buf.readUInt32LE(at);
    at += 4;
    for (let i = 0; i < n; i++) {
      const len = buf.readUInt32LE(at);
      if (m.nameEquals(id, buf, at + 4, len)) return true;
      at += 4 + len;
    }
    return false;
  }
}
