/**
 * The reflector's cache: projections by key (`namespace/name` or `name`) with the
 * resourceVersion each was read at, and the add/update/delete fan-out to handlers.
 *
 * Distinct from the controller's desired/actual state: this is a mirror of the API server,
 * nothing more. Handlers run synchronously in commit order; one that throws is logged and the
 * others still run.
 */
import { flatCopy } from '../cache/flat-copy.js';
import { packRv, type PackedRv } from './packed-rv.js';
import type { Logger } from '../log/logger.js';

export interface ProjectionHandler<T> {
  add?(obj: T): void;
  /** `old` is the previous projection; called only when the resourceVersion changed. */
  update?(obj: T, old: T): void;
  /** `obj` is the final state when the watch delivered one, else the last one seen. */
  delete?(obj: T): void;
}

/** What a {@link ProjectionStore.replace} changed. */
export interface ReplaceCounts {
  added: number;
  updated: number;
  deleted: number;
}

export interface StoreEntry<T> {
  value: T;
  rv: string;
}

/**
 * What a reflector mirrors into: {@link ProjectionStore} (a Map of the objects) or a packed store
 * (packed-store.ts: bytes off the heap, decoded on each read). An object a packed store hands out
 * (`get`, `values`, a handler's `obj` and `old`) is a transient copy: a caller must not keep it
 * beyond its own call, and two reads of one stored object are two objects. An update that changed
 * nothing the projection keeps reaches `update` with `obj === old` (in a ProjectionStore, when its
 * `keepFrom` returns the stored object).
 */
export interface ProjectionCache<T> {
  get(key: string): T | undefined;
  has(key: string): boolean;
  /** The resourceVersion the stored object was read at, or undefined when it is not stored. */
  resourceVersionOf(key: string): string | undefined;
  readonly size: number;
  values(): IterableIterator<T>;
  keys(): IterableIterator<string>;
  addHandler(h: ProjectionHandler<T>): () => void;
  upsert(key: string, fresh: T, rv: string): void;
  remove(key: string, final?: T): void;
  replace(listed: Map<string, StoreEntry<T>>, present: ReadonlySet<string>): ReplaceCounts;
  replaceInChunks(listed: Map<string, StoreEntry<T>>, present: ReadonlySet<string>, chunk: number): Generator<void, ReplaceCounts>;
}

/** A cache's `replace`: its `replaceInChunks` run to the end in one block. */
export function replaceAtOnce<T>(cache: ProjectionCache<T>, listed: Map<string, StoreEntry<T>>, present: ReadonlySet<string>): ReplaceCounts {
  const steps = cache.replaceInChunks(listed, present, Number.POSITIVE_INFINITY);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

export class ProjectionStore<T> implements ProjectionCache<T> {
  // Two maps rather than one of {value, rv} records: at fleet scale the record is one more
  // object per stored object (four per pod) for every major GC to mark.
  private readonly objects = new Map<string, T>();
  private readonly versions = new Map<string, PackedRv>();
  private readonly handlers = new Set<ProjectionHandler<T>>();

  /** `keepFrom`: how an update reuses the stored projection (ResourceKind.keepFrom). */
  constructor(private readonly log: Logger, private readonly keepFrom?: (old: T, fresh: T) => T) {}

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  has(key: string): boolean {
    return this.objects.has(key);
  }

  resourceVersionOf(key: string): string | undefined {
    const v = this.versions.get(key);
    return v === undefined ? undefined : String(v);
  }

  get size(): number {
    return this.objects.size;
  }

  values(): IterableIterator<T> {
    return this.objects.values();
  }

  keys(): IterableIterator<string> {
    return this.objects.keys();
  }

  addHandler(h: ProjectionHandler<T>): () => void {
    this.handlers.add(h);
    return () => this.handlers.delete(h);
  }

  /** Add or update from a watch event; ADDED for a known key is an update and vice versa. */
  upsert(key: string, fresh: T, rv: string): void {
    const old = this.objects.get(key);
    const stored = old === undefined ? flatCopy(key) : key; // a new key stays for the object's life
    const value = old !== undefined && this.keepFrom ? this.keepFrom(old, fresh) : fresh;
    if (value !== old) this.objects.set(stored, value); // kept as it was: the entry is already there
    this.versions.set(stored, packRv(rv));
    if (old !== undefined) this.emit('update', value, old);
    else this.emit('add', value);
  }

  /** Removes `key`; a no-op (no event) when it is not stored. */
  remove(key: string, final?: T): void {
    const old = this.objects.get(key);
    if (old === undefined) return;
    this.objects.delete(key);
    this.versions.delete(key);
    this.emit('delete', final ?? old);
  }

  /**
   * Replaces the contents with a full list: adds for new keys and updates only where the
   * resourceVersion changed, then deletes for stored keys that are neither listed nor in `present`
   * (listed but unprojectable, so kept as last seen). In one block; see {@link replaceInChunks}.
   */
  replace(listed: Map<string, StoreEntry<T>>, present: ReadonlySet<string>): ReplaceCounts {
    return replaceAtOnce(this, listed, present);
  }

  /**
   * {@link replace} in steps of at most `chunk` listed or stored objects, so that a relist of a
   * million objects need not hold the thread for seconds: the caller may yield between steps,
   * and handlers, other reflectors and passes then see part of the relist applied, as client-go's
   * informers deliver a Replace one delta at a time, in the same order: the listed objects
   * first, the deletions last. A state seen between steps may then hold a vanished object beside
   * its replacement (a volume wanted twice: an attach held back), never neither of them (a
   * volume wanted by nobody: a detach started under a pod that is still there). Nothing but this
   * generator may write the store until it is done (the reflector's watch starts after its list).
   */
  *replaceInChunks(listed: Map<string, StoreEntry<T>>, present: ReadonlySet<string>, chunk: number): Generator<void, ReplaceCounts> {
    const counts: ReplaceCounts = { added: 0, updated: 0, deleted: 0 };
    let n = 0;
    for (const [key, e] of listed) {
      if (++n % chunk === 0) yield;
      const rv = packRv(e.rv);
      const old = this.objects.get(key);
      if (old !== undefined && this.versions.get(key) === rv) continue;
      const stored = old === undefined ? flatCopy(key) : key;
      const value = old !== undefined && this.keepFrom ? this.keepFrom(old, e.value) : e.value;
      this.objects.set(stored, value);
      this.versions.set(stored, rv);
      if (old !== undefined) {
        counts.updated++;
        this.emit('update', value, old);
      } else {
        counts.added++;
        this.emit('add', e.value);
      }
    }
    if (this.objects.size > listed.size) {
      // Deleting the entry a Map iterator stands on is allowed and skips nothing, so the walk
      // needs no copy of a million keys.
      for (const [key, old] of this.objects) {
        if (++n % chunk === 0) yield;
        if (listed.has(key) || present.has(key)) continue;
        this.objects.delete(key);
        this.versions.delete(key);
        counts.deleted++;
        this.emit('delete', old);
      }
    }
    return counts;
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
