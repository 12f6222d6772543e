/**
 * DurationWindow: the last N samples of a duration (e.g. reconcile pass time) with last, p50
 * and p99. A fixed ring buffer: recording is O(1) and allocation-free. The first percentile read
 * after a change sorts the samples into a held scratch array (O(N log N), no allocation); further
 * reads until the next record are O(1), so a summary's four percentiles, or many summaries
 * between two passes, cost one sort.
 */
export interface DurationWindow {
  record(ms: number): void;
  /** Number of samples currently held (≤ capacity). */
  size(): number;
  last(): number;
  /** Nearest-rank percentile over the held samples; 0 when empty. `q` in [0, 1]. */
  percentile(q: number): number;
  reset(): void;
}

export function createDurationWindow(opts: { capacity?: number } = {}): DurationWindow {
  const capacity = opts.capacity ?? 1024;
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
  const buf = new Float64Array(capacity);
  const sorted = new Float64Array(capacity);
  let sortedValid = false;
  let n = 0;
  let next = 0;
  let lastValue = 0;
  return {
    record(ms) {
      buf[next] = ms;
      next = (next + 1) % capacity;
      if (n < capacity) n++;
      lastValue = ms;
      sortedValid = false;
    },
    size: () => n,
    last: () => lastValue,
    percentile(q) {
      if (n === 0) return 0;
      if (!sortedValid) {
        sorted.set(buf.subarray(0, n));
        sorted.subarray(0, n).sort();
        sortedValid = true;
      }
      const rank = Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1));
      return sorted[rank];
    },
    reset() {
      sortedValid = false;
      n = 0;
      next = 0;
      lastValue = 0;
    },
  };
}
