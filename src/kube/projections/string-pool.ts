/**
 * StringPool: one shared copy of the values that many objects repeat (namespaces, node names,
 * driver names, phases, access-mode lists). JSON.parse makes a new string for every occurrence,
 * and at fleet scale those copies are millions of live objects that every major GC marks
 * (a heap snapshot at 2,000 nodes held ~14 such copies per pod). Projections pass repeated
 * fields through {@link sharedString}; unique values (uids, object names) are not pooled: a
 * pool entry would cost more than the copy it saves.
 *
 * Bounded: a full pool starts over, so a value may then have two copies, never a wrong one.
 */
export class StringPool {
  private strings = new Map<string, string>();
  private lists = new Map<string, readonly string[]>();

  constructor(private readonly max = 1 << 18) {}

  /** The pooled copy of `s` (`s` itself the first time). */
  string(s: string): string {
    const hit = this.strings.get(s);
    if (hit !== undefined) return hit;
    if (this.strings.size >= this.max) this.strings = new Map();
    this.strings.set(s, s);
    return s;
  }

  /** A frozen shared list equal to `list` (short lists of pooled values, e.g. access modes). */
  list(list: readonly string[]): readonly string[] {
    if (list.length === 0) return EMPTY;
    const key = list.length === 1 ? list[0]! : list.join('\u0000');
    const hit = this.lists.get(key);
    // The key alone could be shared by lists whose values contain the separator.
    if (hit !== undefined && sameList(hit, list)) return hit;
    if (this.lists.size >= this.max) this.lists = new Map();
    const frozen = Object.freeze(list.map((s) => this.string(s)));
    this.lists.set(key, frozen);
    return frozen;
  }

  get size(): number {
    return this.strings.size + this.lists.size;
  }
}

const EMPTY: readonly string[] = Object.freeze([]);

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The process's pool, shared by every projection. */
const pool = new StringPool();

export function sharedString(s: string): string {
  return pool.string(s);
}

export function sharedList(list: readonly string[]): readonly string[] {
  return pool.list(list);
}
