/**
 * Interner: names to dense integer ids and back. Freed ids are reused (about last freed
 * first), so tables indexed by id stay dense. It does not know when an id is unused: its owner
 * frees it.
 *
 * A freed id keeps its name binding, dormant, until the id is handed to another name: a name
 * interned again while its old id is still unused gets that id back without touching the
 * table. The controller frees a volume id when its last pair goes and re-interns the name when
 * the next pod wants it. Dormant names are invisible: find, name and isLive answer as for any
 * dead id.
 *
 * The name index is an open-addressing table over a typed array (linear probing, load at most
 * 1/2, backward-shift deletion) whose slots hold the name's hash beside its id, so a probe
 * compares strings only on a full hash match. A JS Map of a million names costs 1-2 us per
 * lookup of a name just parsed from an event: its collision chains compare other keys, each
 * one more cache miss (measured: about twice this table's time).
 */
import { flatCopy } from './flat-copy.js';

const EMPTY = -1;

export class Interner {
  /** Pairs of (hash, id); id EMPTY = free slot. */
  private slots = new Int32Array(2 * 64).fill(EMPTY);
  private mask = 63;
  private bindings = 0;
  /** Name bound to each id, live or dormant. */
  private readonly names: Array<string | undefined> = [];
  private live = new Uint8Array(64);
  /** Freed ids; may also hold ids revived since (skipped when popped, see `inFree`). */
  private readonly free: number[] = [];
  private inFree = new Uint8Array(64);
  private liveCount = 0;
  /** Whether the last {@link intern} made the id live (it was absent, freed or dormant). */
  created = false;

  /** Number of live ids. */
  get size(): number {
    return this.liveCount;
  }

  /** One past the largest id ever handed out. */
  get highWater(): number {
    return this.names.length;
  }

  find(name: string): number | undefined {
    const id = this.lookup(name, hashOf(name));
    return id !== EMPTY && this.live[id] === 1 ? id : undefined;
  }

  /**
   * Whether {@link intern}(name) now would hand out a new id at {@link highWater}: the name is
   * bound to no id and no freed id is left. The tables behind the ids must grow first.
   */
  wouldExtend(name: string): boolean {
    if (this.lookup(name, hashOf(name)) !== EMPTY) return false;
    for (let i = this.free.length - 1; i >= 0; i--) if (this.live[this.free[i] as number] === 0) return false;
    return true;
  }

  /** The id of `name`, made live if needed; `created` tells which. */
  intern(name: string): number {
    const h = hashOf(name);
    let id = this.lookup(name, h);
    if (id !== EMPTY) {
      this.created = this.live[id] === 0;
    } else {
      id = this.takeFreeId();
      const old = this.names[id];
      if (old !== undefined) this.unbind(old, id);
      // Names live as long as their id (a million at fleet scale): keep a flat copy, not a rope.
      this.names[id] = flatCopy(name);
      this.bind(h, id);
      this.created = true;
    }
    if (this.created) {
      this.live[id] = 1;
      this.liveCount++;
    }
    return id;
  }

  /** The name of a live id, or undefined. */
  name(id: number): string | undefined {
    return this.live[id] === 1 ? this.names[id] : undefined;
  }

  isLive(id: number): boolean {
    return this.live[id] === 1;
  }

  release(id: number): void {
    if (this.live[id] !== 1) return;
    this.live[id] = 0;
    this.liveCount--;
    if (this.inFree[id] === 0) {
      this.inFree[id] = 1;
      this.free.push(id);
    }
  }

  /** The id bound to `name` (live or dormant), or EMPTY. */
  private lookup(name: string, h: number): number {
    const slots = this.slots;
    const mask = this.mask;
    for (let i = home(h, mask); ; i = (i + 1) & mask) {
      const id = slots[2 * i + 1];
      if (id === EMPTY) return EMPTY;
      if (slots[2 * i] === h && this.names[id] === name) return id;
    }
  }

  private bind(h: number, id: number): void {
    if ((this.bindings + 1) * 2 > this.mask + 1) this.grow();
    const mask = this.mask;
    let i = home(h, mask);
    while (this.slots[2 * i + 1] !== EMPTY) i = (i + 1) & mask;
    this.slots[2 * i] = h;
    this.slots[2 * i + 1] = id;
    this.bindings++;
  }

  /** Removes the binding of `name` to `id`. */
  private unbind(name: string, id: number): void {
    const slots = this.slots;
    const mask = this.mask;
    let hole = home(hashOf(name), mask);
    while (slots[2 * hole + 1] !== id) hole = (hole + 1) & mask;
    this.bindings--;
    // Backward shift: pull later entries of the probe run into the hole when their home slot
    // is not between the hole and themselves, so that every lookup still finds them.
    for (let j = (hole + 1) & mask; slots[2 * j + 1] !== EMPTY; j = (j + 1) & mask) {
      const at = home(slots[2 * j], mask);
      if (((j - at) & mask) < ((j - hole) & mask)) continue;
      slots[2 * hole] = slots[2 * j];
      slots[2 * hole + 1] = slots[2 * j + 1];
      hole = j;
    }
    slots[2 * hole + 1] = EMPTY;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2).fill(EMPTY);
    this.mask = old.length - 1;
    this.bindings = 0;
    for (let i = 0; i < old.length; i += 2) if (old[i + 1] !== EMPTY) this.bind(old[i], old[i + 1]);
  }

  private takeFreeId(): number {
    while (this.free.length > 0) {
      const id = this.free.pop() as number;
      this.inFree[id] = 0;
      if (this.live[id] === 0) return id;
    }
    const id = this.names.length;
    this.names.push(undefined);
    if (id >= this.live.length) {
      this.live = grow(this.live);
      this.inFree = grow(this.inFree);
    }
    return id;
  }
}

/** FNV-1a over the UTF-16 code units, finished with a multiply so the low bits mix too. */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
}

function home(h: number, mask: number): number {
  return (h ^ (h >>> 16)) & mask;
}

function grow(a: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(a.length * 2);
  b.set(a);
  return b;
}
