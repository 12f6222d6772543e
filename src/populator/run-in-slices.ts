/**
 * Runs a long pass over many items (the populator's periodic passes over every pod) in slices of
 * about `budgetMs` each, yielding to the event loop between slices, so that at 100k nodes a
 * pass over a million pods does not hold the thread that serves watches, reconcile passes and
 * the inspection API for seconds.
 *
 * Contract: each slice runs inside `whenIdle` (never while a plan runs), as one synchronous
 * block; between slices anything may happen, so `fn` must judge each item from the current
 * state (the passes read the informer cache at the item, not a copy taken at the start).
 * Resolves when the items are exhausted or `cancelled()` turns true.
 */
export interface SliceOptions {
  whenIdle(fn: () => void): void;
  /** CPU per slice, ms (default 2: below the inspection API's 5 ms p99 target, so a request that
   * arrives during a slice still meets it). */
  budgetMs?: number;
  cancelled?: () => boolean;
}

/** The controller's periodic passes: M1 verification, C9 removal of stale pods, C10 full pod list. */
export type PeriodicPass = 'verify' | 'pods-removed' | 'pods-listed';

/** Told when a periodic pass completes (not when cancelled), with what it cost. */
export type PeriodicPassReport = (pass: PeriodicPass, stats: SliceStats) => void;

/** What a pass cost the thread it shares: its items, its slices and their summed duration. */
export interface SliceStats {
  items: number;
  slices: number;
  /** Wall time inside the slices (the event loop was held for this long in all), ms. */
  busyMs: number;
  /** True when the pass stopped early (`cancelled`). */
  cancelled: boolean;
}

/** Two walks reported as one pass (C9 walks the skipped pods, then the tracked ones). */
export function sumSliceStats(a: SliceStats, b: SliceStats): SliceStats {
  return { items: a.items + b.items, slices: a.slices + b.slices, busyMs: a.busyMs + b.busyMs, cancelled: a.cancelled || b.cancelled };
}

export async function runInSlices<T>(items: Iterator<T>, fn: (item: T) => void, o: SliceOptions): Promise<SliceStats> {
  const budget = o.budgetMs ?? 2;
  const stats: SliceStats = { items: 0, slices: 0, busyMs: 0, cancelled: false };
  for (let done = false; !done; ) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (o.cancelled?.()) {
      stats.cancelled = true;
      return stats;
    }
    done = await new Promise<boolean>((resolve, reject) => {
      o.whenIdle(() => {
        const start = performance.now();
        const end = start + budget;
        const finish = (last: boolean) => {
          stats.slices++;
          stats.busyMs += performance.now() - start;
          resolve(last);
        };
        try {
          // The clock is read every 64 items: a slice may overrun by that many items' cost.
          for (let i = 0; ; i++) {
            if ((i & 63) === 63 && performance.now() > end) return finish(false);
            const next = items.next();
            if (next.done) return finish(true);
            fn(next.value);
            stats.items++;
          }
        } catch (err) {
          reject(err);
        }
      });
    });
  }
  return stats;
}
