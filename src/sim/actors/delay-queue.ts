/**
 * A keyed delay queue: each key is due at one time; scheduling a key again keeps the earlier
 * time unless `replace` is asked. Actors drain it from their tick with a budget, so a burst of
 * due work (a million attaches) is spread over ticks instead of blocking the event loop.
 * Size is bounded by the number of distinct keys (objects), never by events.
 */
interface Entry<K> {
  at: number;
  key: K;
}

export class DelayQueue<K> {
  private heap: Array<Entry<K>> = [];
  private readonly due = new Map<K, number>();

  get size(): number {
    return this.due.size;
  }

  has(key: K): boolean {
    return this.due.has(key);
  }

  /** Schedules `key` at `at` (epoch ms). An already earlier schedule is kept unless `replace`. */
  add(key: K, at: number, replace = false): void {
    const cur = this.due.get(key);
    if (cur !== undefined && (cur <= at && !replace)) return;
    if (cur === at) return;
    this.due.set(key, at);
    this.push({ at, key });
    // Superseded entries stay in the heap until popped; compact when they dominate.
    if (this.heap.length > 2 * this.due.size + 1024) this.compact();
  }

  delete(key: K): void {
    this.due.delete(key);
  }

  /** Removes and returns up to `max` keys due at or before `now`, earliest first. */
  popDue(now: number, max: number): K[] {
    const out: K[] = [];
    while (out.length < max && this.heap.length > 0 && this.heap[0].at <= now) {
      const e = this.pop();
      if (this.due.get(e.key) !== e.at) continue;
      this.due.delete(e.key);
      out.push(e.key);
    }
    return out;
  }

  clear(): void {
    this.heap = [];
    this.due.clear();
  }

  private compact(): void {
    this.heap = [];
    for (const [key, at] of this.due) this.push({ at, key });
  }

  private push(e: Entry<K>): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p].at <= e.at) break;
      h[i] = h[p];
      i = p;
    }
    h[i] = e;
  }

  private pop(): Entry<K> {
    const h = this.heap;
    const top = h[0];
    const last = h.pop() as Entry<K>;
    if (h.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= h.length) break;
        const c = l + 1 < h.length && h[l + 1].at < h[l].at ? l + 1 : l;
        if (h[c].at >= last.at) break;
        h[i] = h[c];
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}
