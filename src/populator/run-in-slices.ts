/**
 * Runs a long pass over many items (the populator's periodic passes over every pod) in slices of
 * about `budgetMs` each, yielding to the event loop between slices and resting after each so
 * that the pass holds at most `duty` of the thread, so that at 100k nodes a pass over a million
 * pods does not hold the thread that serves watches, reconcile passes and the inspection API for
 * seconds.
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
  /**
   * The share of the thread the pass may hold (default {@link PERIODIC_PASS_DUTY}): after a slice
   * that held it d ms, the next starts no sooner than d × (1 − duty) / duty later. 1: slices back
   * to back, only I/O between them.
   */
  duty?: number;
  cancelled?: () => boolean;
  /** How the pass waits between slices (tests); default a timer. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Why periodic passes are paced: at 50k nodes M1 verification and C9 each hold the thread for
 * 0.5–0.9 s a minute (1.3 s at 100k; C10's full pod walk 11.5 s every 3 minutes). Upstream runs
 * them on other goroutines; here they share the thread that ingests watches and starts
 * operations, and with slices back to back a pass takes that thread nearly whole until it ends
 * (only I/O callbacks run between its slices), while the watches and operations it shares it
 * with need ~0.7–0.8 of it under churn. At a fifth of the thread a pass takes five times as long
 * in wall time, well inside its period, and leaves the rest to them. (Its effect on the new-pod
 * tail at 50k was not separable from the full collections', docs/performance.md.)
 */
export const PERIODIC_PASS_DUTY = 0.2;

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
  const duty = o.duty ?? PERIODIC_PASS_DUTY;
  if (!(duty > 0 && duty <= 1)) throw new RangeError(`duty must be in (0, 1], got ${duty}`);
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const stats: SliceStats = { items: 0, slices: 0, busyMs: 0, cancelled: false };
  let lastSliceMs = 0;
  for (let done = false; !done; ) {
    const rest = (lastSliceMs * (1 - duty)) / duty;
    if (rest > 0) await sleep(rest);
    else await new Promise<void>((resolve) => setImmediate(resolve));
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
          lastSliceMs = performance.now() - start;
          stats.busyMs += lastSliceMs;
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
