/**
 * Exponential backoff constants (upstream `exponential_backoff.go`, I3) and BackoffHeap, a
 * binary min-heap of (window end, key) so expiring windows costs O(expired x log n) per plan
 * instead of a scan. Entries are never updated in place: a renewed window pushes a new entry
 * and the owner ignores stale ones when they pop.
 */

/** First backoff after a failure. */
export const INITIAL_BACKOFF_MS = 500;
/** Cap of the doubling: 2 min 2 s. */
export const MAX_BACKOFF_MS = 122_000;

export class BackoffHeap {
  private ends: number[] = [];
  private keys: number[] = [];

  get size(): number {
    return this.ends.length;
  }

  push(key: number, end: number): void {
    const e = this.ends;
    const k = this.keys;
    let i = e.length;
    e.push(end);
    k.push(key);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (e[parent] <= end) break;
      e[i] = e[parent];
      k[i] = k[parent];
      i = parent;
    }
    e[i] = end;
    k[i] = key;
  }

  /** Removes and returns the key of an entry whose window ended before `now`, or -1. */
  popDue(now: number): number {
    if (this.ends.length === 0 || this.ends[0] >= now) return -1;
    const key = this.keys[0];
    const lastEnd = this.ends.pop() as number;
    const lastKey = this.keys.pop() as number;
    const n = this.ends.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && this.ends[r] < this.ends[l] ? r : l;
        if (this.ends[c] >= lastEnd) break;
        this.ends[i] = this.ends[c];
        this.keys[i] = this.keys[c];
        i = c;
      }
      this.ends[i] = lastEnd;
      this.keys[i] = lastKey;
    }
    return key;
  }
}
