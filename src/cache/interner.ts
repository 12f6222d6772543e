/**
 * Interner: names to dense integer ids and back. Freed ids are reused (last freed first), so
 * tables indexed by id stay dense. It does not know when an id is unused: its owner frees it.
 */
export class Interner {
  private readonly ids = new Map<string, number>();
  private readonly names: Array<string | undefined> = [];
  private readonly free: number[] = [];

  /** Number of live ids. */
  get size(): number {
    return this.ids.size;
  }

  /** One past the largest id ever handed out. */
  get highWater(): number {
    return this.names.length;
  }

  find(name: string): number | undefined {
    return this.ids.get(name);
  }

  /** The id of `name`; `created` says it was not live before. */
  intern(name: string): { id: number; created: boolean } {
    const known = this.ids.get(name);
    if (known !== undefined) return { id: known, created: false };
    const id = this.free.length > 0 ? (this.free.pop() as number) : this.names.length;
    this.names[id] = name;
    this.ids.set(name, id);
    return { id, created: true };
  }

  /** The name of a live id, or undefined. */
  name(id: number): string | undefined {
    return this.names[id];
  }

  isLive(id: number): boolean {
    return Number.isInteger(id) && id >= 0 && this.names[id] !== undefined;
  }

  release(id: number): void {
    const name = this.names[id];
    if (name === undefined) return;
    this.ids.delete(name);
    this.names[id] = undefined;
    this.free.push(id);
  }
}
