/**
 * KeySets: key → set of member strings, for the populator's indexes (claim → pods, PV → claims),
 * where almost every set holds one member: a lone member is stored as the string itself and
 * only a second member makes a Set. Saves a Set per key on the start-up fill (one per pod and
 * one per claim at fleet scale).
 */
export class KeySets {
  private readonly map = new Map<string, string | Set<string>>();

  add(key: string, member: string): void {
    const cur = this.map.get(key);
    if (cur === undefined) this.map.set(key, member);
    else if (typeof cur === 'string') {
      if (cur !== member) this.map.set(key, new Set([cur, member]));
    } else cur.add(member);
  }

  delete(key: string, member: string): void {
    const cur = this.map.get(key);
    if (cur === undefined) return;
    if (typeof cur === 'string') {
      if (cur === member) this.map.delete(key);
    } else if (cur.delete(member) && cur.size === 0) this.map.delete(key);
  }

  /** The members of `key` (a copy: callers may mutate the sets while iterating it). */
  members(key: string): readonly string[] {
    const cur = this.map.get(key);
    return cur === undefined ? [] : typeof cur === 'string' ? [cur] : [...cur];
  }

  /** Number of keys with at least one member. */
  get size(): number {
    return this.map.size;
  }
}
