/**
 * A hash index from a key to the arena slot whose record's part a is that key: open addressing
 * with linear probing over an Int32Array of slots, deletion by backward shift (no tombstones),
 * a slot's hash kept in a second typed array so that a probe compares bytes only on equal
 * hashes. No JavaScript object per key: the keys are the arena's bytes.
 *
 * Keys are looked up as strings: each lookup encodes its key once into a scratch buffer
 * (UTF-8), and hashes and compares those bytes.
 */
import { hashBytes, writeUtf8, type ByteArena } from './byte-arena.js';

const EMPTY = -1;

export class KeyIndex {
  private table = new Int32Array(16).fill(EMPTY);
  private mask = 15;
  private hashes = new Uint32Array(16);
  private size = 0;
  /** The last key encoded, in `scratch[0, scratchLen)`. */
  private scratch = Buffer.allocUnsafeSlow(256);
  private scratchLen = 0;

  constructor(private readonly arena: ByteArena) {}

  get count(): number {
    return this.size;
  }

  /** The slot of `key`, or -1. */
  find(key: string): number {
    const h = asciiHash(key);
    if (h < 0) return this.findEncoded(key);
    for (let i = h & this.mask; ; i = (i + 1) & this.mask) {
      const s = this.table[i];
      if (s === EMPTY) return -1;
      if (this.hashes[s] === h && this.arena.keyEqualsAscii(s, key)) return s;
    }
  }

  /** The slot whose key is `bytes[0, len)`, or -1: for a caller that holds keys in a form of its own. */
  findBytes(bytes: Uint8Array, len: number): number {
    const h = hashBytes(bytes, 0, len);
    for (let i = h & this.mask; ; i = (i + 1) & this.mask) {
      const s = this.table[i];
      if (s === EMPTY) return -1;
      if (this.hashes[s] === h && this.arena.compareKey(s, bytes, len) === 0) return s;
    }
  }

  /** `find` for a key with non-ASCII characters: hashed and compared as UTF-8 bytes. */
  private findEncoded(key: string): number {
    const h = this.encode(key);
    for (let i = h & this.mask; ; i = (i + 1) & this.mask) {
      const s = this.table[i];
      if (s === EMPTY) return -1;
      if (this.hashes[s] === h && this.arena.compareKey(s, this.scratch, this.scratchLen) === 0) return s;
    }
  }

  /** Indexes `slot`, whose record's part a holds its key (not already indexed). */
  insert(slot: number): void {
    if ((this.size + 1) * 2 > this.table.length) this.grow();
    const h = this.arena.hashKey(slot);
    if (slot >= this.hashes.length) {
      const n = new Uint32Array(Math.max(slot + 1, this.hashes.length * 2));
      n.set(this.hashes);
      this.hashes = n;
    }
    this.hashes[slot] = h;
    this.place(slot, h);
    this.size++;
  }

  /** Drops `slot` from the index (its record must still hold its key, or its hash be kept). */
  remove(slot: number): void {
    const h = this.hashes[slot];
    let i = h & this.mask;
    for (; ; i = (i + 1) & this.mask) {
      const s = this.table[i];
      if (s === EMPTY) return;
      if (s === slot) break;
    }
    // Backward shift: move each later entry of the run into the hole when its home allows.
    let hole = i;
    for (let j = (i + 1) & this.mask; ; j = (j + 1) & this.mask) {
      const s = this.table[j];
      if (s === EMPTY) break;
      const home = this.hashes[s] & this.mask;
      // `s` may move to `hole` unless its home lies cyclically in (hole, j].
      const inRange = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (!inRange) {
        this.table[hole] = s;
        hole = j;
      }
    }
    this.table[hole] = EMPTY;
    this.size--;
  }

  private place(slot: number, h: number): void {
    let i = h & this.mask;
    while (this.table[i] !== EMPTY) i = (i + 1) & this.mask;
    this.table[i] = slot;
  }

  private grow(): void {
    const old = this.table;
    this.table = new Int32Array(old.length * 2).fill(EMPTY);
    this.mask = this.table.length - 1;
    for (let i = 0; i < old.length; i++) if (old[i] !== EMPTY) this.place(old[i], this.hashes[old[i]]);
  }

  private encode(key: string): number {
    // Keys are mostly ASCII (Kubernetes names); this path is for the rest.
    const need = Buffer.byteLength(key, 'utf8');
    if (need > this.scratch.length) this.scratch = Buffer.allocUnsafeSlow(need * 2);
    this.scratchLen = writeUtf8(this.scratch, key, 0, need);
    return hashBytes(this.scratch, 0, this.scratchLen);
  }
}

/**
 * FNV-1a of an ASCII key's characters, which are its UTF-8 bytes (so equal to `hashBytes` of
 * its record), or -1 when it has a non-ASCII character. No encoding: most lookups are of short
 * keys, for which a call into Buffer's encoder costs more than the lookup.
 */
function asciiHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0x80) return -1;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h >>> 0;
}
