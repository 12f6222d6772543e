/**
 * StringInterner: names to dense integer ids and back, with the names held as UTF-8 bytes in a
 * ByteArena (the id is the name's arena slot) and found through a KeyIndex: no JavaScript
 * string per name. `name(id)` decodes a fresh string for the caller, which dies young.
 *
 * Freed ids are reused (about last freed first), so tables indexed by id stay dense. It does
 * not know when an id is unused: its owner frees it (`release`).
 *
 * A freed id keeps its name binding, dormant, until the id is handed to another name: a name
 * interned again while its old id is still unused gets that id back without touching the
 * index. Dormant names are invisible: find, name and isLive answer as for any dead id.
 */
import { ByteArena, readUtf8 } from './byte-arena.js';
import { KeyIndex } from './key-index.js';

export class StringInterner {
  private readonly arena = new ByteArena();
  private readonly index = new KeyIndex(this.arena);
  private live = new Uint8Array(64);
  /** Freed ids; may also hold ids revived since (skipped when popped, see `inFree`). */
  private free = new Int32Array(64);
  private freeCount = 0;
  private inFree = new Uint8Array(64);
  private liveCount = 0;
  private high = 0;
  /** Whether the last {@link intern} made the id live (it was absent, freed or dormant). */
  created = false;

  /** Number of live ids. */
  get size(): number {
    return this.liveCount;
  }

  /** One past the largest id ever handed out. */
  get highWater(): number {
    return this.high;
  }

  /** UTF-8 bytes held for the names (live and dormant). */
  get bytes(): number {
    return this.arena.bytes;
  }

  find(name: string): number | undefined {
    const id = this.index.find(name);
    return id >= 0 && this.live[id] === 1 ? id : undefined;
  }

  /**
   * Whether {@link intern}(name) now would hand out a new id at {@link highWater}: the name is
   * bound to no id and no freed id is left. The tables behind the ids must grow first.
   */
  wouldExtend(name: string): boolean {
    if (this.index.find(name) >= 0) return false;
    for (let i = this.freeCount - 1; i >= 0; i--) if (this.live[this.free[i]] === 0) return false;
    return true;
  }

  /** The id of `name`, made live if needed; `created` tells which. */
  intern(name: string): number {
    let id = this.index.find(name);
    if (id >= 0) {
      this.created = this.live[id] === 0;
    } else {
      id = this.takeFreeId();
      if (this.arena.has(id)) this.index.remove(id);
      this.arena.set(id, name, '');
      this.index.insert(id);
      this.created = true;
    }
    if (this.created) {
      this.live[id] = 1;
      this.liveCount++;
    }
    return id;
  }

  /** The name of a live id (a new string), or undefined. */
  name(id: number): string | undefined {
    if (this.live[id] !== 1) return undefined;
    const at = this.arena.start(id, 0);
    const len = this.arena.length(id, 0);
    return len === 0 ? '' : readUtf8(this.arena.chunkOf(id), at, at + len);
  }

  isLive(id: number): boolean {
    return this.live[id] === 1;
  }

  /** Whether live `id`'s name is `bytes[start, start + len)`, bytewise (no string made). */
  nameEquals(id: number, bytes: Uint8Array, start: number, len: number): boolean {
    if (this.live[id] !== 1 || this.arena.length(id, 0) !== len) return false;
    const buf = this.arena.chunkOf(id);
    const at = this.arena.start(id, 0);
    for (let i = 0; i < len; i++) if (buf[at + i] !== bytes[start + i]) return false;
    return true;
  }

  /** The chunk holding the name of `id` (live or dormant), read at [`byteStart`, + `byteLength`). */
  chunkOf(id: number): Buffer {
    return this.arena.chunkOf(id);
  }

  byteStart(id: number): number {
    return this.arena.start(id, 0);
  }

  byteLength(id: number): number {
    return this.arena.length(id, 0);
  }

  release(id: number): void {
    if (this.live[id] !== 1) return;
    this.live[id] = 0;
    this.liveCount--;
    if (this.inFree[id] === 0) {
      this.inFree[id] = 1;
      if (this.freeCount === this.free.length) this.free = grownInt32(this.free);
      this.free[this.freeCount++] = id;
    }
  }

  private takeFreeId(): number {
    while (this.freeCount > 0) {
      const id = this.free[--this.freeCount];
      this.inFree[id] = 0;
      if (this.live[id] === 0) return id;
    }
    const id = this.high++;
    // The arena issues slots in order (none is ever released), so its next slot is this id.
    this.arena.newSlot();
    if (id >= this.live.length) {
      this.live = grownUint8(this.live);
      this.inFree = grownUint8(this.inFree);
    }
    return id;
  }
}

function grownUint8(a: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(a.length * 2);
  b.set(a);
  return b;
}

function grownInt32(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
