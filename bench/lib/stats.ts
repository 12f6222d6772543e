/** Small statistics helpers for benches. */

/** Nearest-rank percentile of `values` (any order); undefined when empty. `q` in [0, 1]. */
export function percentile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/**
 * Percentile of waits some of which had not ended when observation stopped (`waiting`: the time
 * waited so far, a lower bound of each). Exact when the answer lies among the ended waits below
 * every unfinished one; otherwise a lower bound, flagged `atLeast`.
 */
export function censoredPercentile(done: readonly number[], waiting: readonly number[], q: number): { value: number | undefined; atLeast: boolean } {
  const n = done.length + waiting.length;
  if (n === 0) return { value: undefined, atLeast: false };
  const rank = Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1));
  const sorted = Float64Array.from(done).sort();
  const minWaiting = waiting.length ? Math.min(...waiting) : Infinity;
  if (rank < sorted.length && sorted[rank] <= minWaiting) return { value: sorted[rank], atLeast: false };
  const all = Float64Array.from([...done, ...waiting]).sort();
  return { value: all[rank], atLeast: true };
}

export function median(values: readonly number[]): number | undefined {
  return percentile(values, 0.5);
}

/** Rounds to `digits` decimals; null stays null (JSON results keep "not measured" visible). */
export function round(v: number | undefined | null, digits = 1): number | null {
  if (v === undefined || v === null || !Number.isFinite(v)) return null;
  const k = 10 ** digits;
  return Math.round(v * k) / k;
}
