/**
 * The reflector's cache: projections by key (`namespace/name` or `name`) with the
 * resourceVersion each was read at, and the add/update/delete fan-out to handlers.
 *
 * Distinct from the controller's desired/actual state: this is a mirror of the API server,
 * nothing more. Handlers run synchronously in commit order; one that throws is logged and the
 * others still run.
 */
import type { Logger } from '../log/logger.js';

export interface ProjectionHandler<T> {
  add?(obj: T): void;
  /** `old` is the previous projection; called only when the resourceVersion changed. */
  update?(obj: T, old: T): void;
  /** `obj` is the final state when the watch delivered one, else the last one seen. */
  delete?(obj: T): void;
}

export interface StoreEntry<T> {
  value: T;
  rv: string;
}

export class ProjectionStore<T> {
  private entries = new Map<string, StoreEntry<T>>();
  private readonly handlers = new Set<ProjectionHandler<T>>();

  constructor(private readonly log: Logger) {}

  get(key: string): T | undefined {
    return this.entries.get(key)?.value;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  get size(): number {
    return this.entries.size;
  }

  values(): IterableIterator<T> {
    const it = this.entries.values();
    return (function* () {
      for (const e of it) yield e.value;
    })();
  }

  keys(): IterableIterator<string> {
    return this.entries.keys();
  }

  addHandler(h: ProjectionHandler<T>): () => void {
    this.handlers.add(h);
    return () => this.handlers.delete(h);
  }

  /** Add or update from a watch event; ADDED for a known key is an update and vice versa. */
  upsert(key: string, value: T, rv: string): void {
    const old = this.entries.get(key);
    this.entries.set(key, { value, rv });
    if (old) this.emit('update', value, old.value);
    else this.emit('add', value);
  }

  /** Removes `key`; a no-op (no event) when it is not stored. */
  remove(key: string, final?: T): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.emit('delete', final ?? old.value);
  }

  /**
   * Replaces the contents with a full list: deletes for stored keys that are neither listed nor
   * in `present` (listed but unprojectable, so kept as last seen), then adds for new keys and
   * updates only where the resourceVersion changed. The store takes ownership of `listed`.
   */
  replace(listed: Map<string, StoreEntry<T>>, present: ReadonlySet<string>): { added: number; updated: number; deleted: number } {
    if (this.entries.size === 0) {
      // The first list: adopt the map instead of copying it entry by entry.
      this.entries = listed;
      for (const e of listed.values()) this.emit('add', e.value);
      return { added: listed.size, updated: 0, deleted: 0 };
    }
    let added = 0;
    let updated = 0;
    let deleted = 0;
    for (const [key, old] of [...this.entries]) {
      if (listed.has(key) || present.has(key)) continue;
      this.entries.delete(key);
      deleted++;
      this.emit('delete', old.value);
    }
    for (const [key, e] of listed) {
      const old = this.entries.get(key);
      if (old && old.rv === e.rv) continue;
      this.entries.set(key, e);
      if (old) {
        updated++;
        this.emit('update', e.value, old.value);
      } else {
        added++;
        this.emit('add', e.value);
      }
    }
    return { added, updated, deleted };
  }

  private emit(kind: 'add' | 'delete', obj: T): void;
  private emit(kind: 'update', obj: T, old: T): void;
  private emit(kind: 'add' | 'update' | 'delete', obj: T, old?: T): void {
    for (const h of this.handlers) {
      try {
        if (kind === 'add') h.add?.(obj);
        else if (kind === 'update') h.update?.(obj, old as T);
        else h.delete?.(obj);
      } catch (err) {
        this.log.error({ err, event: kind }, 'projection handler threw');
      }
    }
  }
}
