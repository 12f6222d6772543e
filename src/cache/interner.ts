/**
 * Interner: names to dense integer ids and back. Freed ids are reused (about last freed
 * first), so tables indexed by id stay dense. It does not know when an id is unused: its owner
 * frees it.
 *
 * A freed id keeps its name binding, dormant, until the id is handed to another name: a name
 * interned again while its old id is still unused gets that id back without touching the map.
 * The controller frees a volume id when its last pair goes and re-interns the name when the
 * next pod wants it, so this spares two hash-map writes (and the map's rehashing) per cycle.
 * Dormant names are invisible: find, name and isLive answer as for any dead id.
 */
export class Interner {
  private readonly ids = new Map<string, number>();
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
    const id = this.ids.get(name);
    return id !== undefined && this.live[id] === 1 ? id : undefined;
  }

  /** The id of `name`, made live if needed; `created` tells which. */
  intern(name: string): number {
    let id = this.ids.get(name);
    if (id !== undefined) {
      this.created = this.live[id] === 0;
    } else {
      id = this.takeFreeId();
      const old = this.names[id];
      if (old !== undefined) this.ids.delete(old);
      this.names[id] = name;
      this.ids.set(name, id);
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

function grow(a: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(a.length * 2);
  b.set(a);
  return b;
}
