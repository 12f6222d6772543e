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

export async function runInSlices<T>(items: Iterator<T>, fn: (item: T) => void, o: SliceOptions): Promise<void> {
  const budget = o.budgetMs ?? 2;
  for (let done = false; !done; ) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (o.cancelled?.()) return;
    done = await new Promise<boolean>((resolve, reject) => {
      o.whenIdle(() => {
        try {
          const end = performance.now() + budget;
          // The clock is read every 64 items: a slice may overrun by that many items' cost.
          for (let i = 0; ; i++) {
            if ((i & 63) === 63 && performance.now() > end) return resolve(false);
            const next = items.next();
            if (next.done) return resolve(true);
            fn(next.value);
          }
        } catch (err) {
          reject(err);
        }
      });
    });
  }
}
