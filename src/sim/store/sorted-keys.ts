/**
 * A sorted set of strings (object keys `namespace/name` or `name`) kept as a list of sorted
 * chunks, so that insert and remove cost O(log n + chunk) and a paginated list can resume
 * after any key in O(log n). Ordering is by UTF-16 code unit, which is byte order for the
 * ASCII names Kubernetes allows (the order etcd lists keys in).
 */
const MAX_CHUNK = 1024;

export class SortedKeys {
  private chunks: string[][] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Inserts `key`; a key already present is left as it is. */
  insert(key: string): void {
    if (this.chunks.length === 0) {
      this.chunks.push([key]);
      this.count = 1;
      return;
    }
    let ci = this.chunkFor(key);
    if (ci === this.chunks.length) ci--;
    const chunk = this.chunks[ci];
    const i = lowerBound(chunk, key);
    if (chunk[i] === key) return;
    chunk.splice(i, 0, key);
    this.count++;
    if (chunk.length > MAX_CHUNK) this.chunks.splice(ci + 1, 0, chunk.splice(MAX_CHUNK >> 1));
  }

  /** Removes `key` if present. */
  remove(key: string): void {
    const ci = this.chunkFor(key);
    if (ci === this.chunks.length) return;
    const chunk = this.chunks[ci];
    const i = lowerBound(chunk, key);
    if (chunk[i] !== key) return;
    chunk.splice(i, 1);
    this.count--;
    if (chunk.length === 0) this.chunks.splice(ci, 1);
  }

  /** Keys strictly greater than `after` (all keys when undefined) and below `end` (exclusive, no
   * bound when undefined), in order, as an array; list pages walk them with {@link visit}. */
  range(after: string | undefined, end?: string): string[] {
    const out: string[] = [];
    this.visit(after, end, (k) => {
      out.push(k);
      return true;
    });
    return out;
  }

  /**
   * Calls `visit` with the keys strictly greater than `after` and below `end` (as `range`), in
   * order, until it returns false. No iterator objects: what a list page walks.
   */
  visit(after: string | undefined, end: string | undefined, visit: (key: string) => boolean): void {
    let ci = after === undefined ? 0 : this.chunkFor(after);
    let i = after === undefined || ci === this.chunks.length ? 0 : upperBound(this.chunks[ci], after);
    for (; ci < this.chunks.length; ci++, i = 0) {
      const chunk = this.chunks[ci];
      for (; i < chunk.length; i++) {
        const k = chunk[i];
        if ((end !== undefined && k >= end) || !visit(k)) return;
      }
    }
  }

  /** Index of the first chunk whose last key is >= key (chunks.length if none). */
  private chunkFor(key: string): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = this.chunks[mid];
      if (c[c.length - 1] < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

function lowerBound(a: string[], key: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function upperBound(a: string[], key: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
