/**
 * A sorted set of strings (object keys `namespace/name` or `name`) kept as a list of sorted
 * chunks, so that a paginated list can resume after any key in O(log n). Ordering is by UTF-16
 * code unit, which is byte order for the ASCII names Kubernetes allows (the order etcd lists
 * keys in).
 *
 * A key beyond the last is appended at once; any other is sorted in when a read needs it, not
 * when it is inserted. Writes far outnumber lists (a 50k-node cold start creates 500k
 * VolumeAttachments, whose names are hashes, so each lands in a random chunk, and lists them
 * once), and a sorted insert's binary search over a large set misses the cache at every string
 * it compares: 4.5 s of the simulator's CPU in a 50k run (`npm run bench:e2e -- --nodes 50000
 * --profile DIR`, ~600k inserts after the fleet was generated, ~7.5 µs each; ~1.7 µs in a loop
 * doing nothing else). A read sorts what is pending and merges it in: the first list after
 * 500k random inserts waits ~0.5 s for that.
 */
const MAX_CHUNK = 1024;
/** A flush merges everything in one pass when at least 1/BULK of the set is pending; fewer are inserted one by one. */
const BULK = 128;

export class SortedKeys {
  private chunks: string[][] = [];
  /** Keys in `chunks`. */
  private count = 0;
  /** Inserted out of order since the last read, unsorted; may repeat a key already in `chunks` (the flush drops it). */
  private readonly pending = new Set<string>();

  get size(): number {
    this.flush();
    return this.count;
  }

  /** Inserts `key`; a key already present is left as it is. */
  insert(key: string): void {
    // A key beyond the last goes on the end at once: the generated fleet's names come in
    // order, and appending costs one comparison (a pending key it passes is merged later).
    const last = this.chunks[this.chunks.length - 1];
    if (last === undefined || key > last[last.length - 1]) {
      if (last === undefined || last.length >= MAX_CHUNK) this.chunks.push([key]);
      else last.push(key);
      this.count++;
      return;
    }
    this.pending.add(key);
  }

  /** Removes `key` if present. */
  remove(key: string): void {
    this.pending.delete(key);
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
   * order, until it returns false. No iterator objects: what a list page walks. `visit` must not
   * insert or remove keys.
   */
  visit(after: string | undefined, end: string | undefined, visit: (key: string) => boolean): void {
    this.flush();
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

  /** Sorts the pending keys into the chunks. */
  private flush(): void {
    if (this.pending.size === 0) return;
    const fresh = [...this.pending].sort(compare);
    this.pending.clear();
    if (fresh.length * BULK < this.count) {
      for (const key of fresh) this.insertSorted(key);
      return;
    }
    const merged: string[] = [];
    let f = 0;
    for (const chunk of this.chunks) {
      for (const key of chunk) {
        while (f < fresh.length && fresh[f] < key) merged.push(fresh[f++]);
        if (f < fresh.length && fresh[f] === key) f++;
        merged.push(key);
      }
    }
    while (f < fresh.length) merged.push(fresh[f++]);
    // Half-full chunks, as a split leaves them: the next inserts into one do not split it at once.
    const size = MAX_CHUNK >> 1;
    this.chunks = [];
    for (let at = 0; at < merged.length; at += size) this.chunks.push(merged.slice(at, at + size));
    this.count = merged.length;
  }

  private insertSorted(key: string): void {
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

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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
