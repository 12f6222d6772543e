/**
 * Strings interned as small integer ids, held outside the JavaScript heap: each string is one
 * record of a ByteArena (its UTF-8 bytes), found by a KeyIndex, and its id is the record's
 * slot. Users keep per-id state in typed arrays indexed by id, so a million interned names cost
 * no JavaScript object each. An id stays the string's until it is released; a released id may
 * be issued again (the lowest freed first) for another string.
 */
import { ByteArena } from './byte-arena.js';
import { KeyIndex } from './key-index.js';

export class StringIds {
  private readonly arena: ByteArena;
  private readonly index: KeyIndex;

  constructor(chunkBytes = 1 << 18) {
    this.arena = new ByteArena({ chunkBytes });
    this.index = new KeyIndex(this.arena);
  }

  /** Interned strings. */
  get size(): number {
    return this.index.count;
  }

  /** One past the highest id ever issued: per-id arrays are sized by it. */
  get idLimit(): number {
    return this.arena.slotLimit;
  }

  /** The id of `s`, or -1 when it is not interned. */
  find(s: string): number {
    return this.index.find(s);
  }

  /** The id of `s`, interning it if needed. */
  intern(s: string): number {
    const found = this.index.find(s);
    if (found >= 0) return found;
    const id = this.arena.newSlot();
    this.arena.set(id, s, '');
    this.index.insert(id);
    return id;
  }

  /** The string of a live id (a fresh JavaScript string). */
  text(id: number): string {
    return this.arena.text(id, 0);
  }

  /** True when live id `id` is the string `s`, compared without decoding when `s` is ASCII. */
  is(id: number, s: string): boolean {
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return this.text(id) === s;
    return this.arena.keyEqualsAscii(id, s);
  }

  /** Whether `id` is interned now. */
  has(id: number): boolean {
    return id >= 0 && this.arena.has(id);
  }

  /** Forgets the string of `id`; the id may be issued again. */
  release(id: number): void {
    if (!this.has(id)) return;
    this.index.remove(id);
    this.arena.releaseSlot(id);
  }
}
