/** Small statistics helpers for benches. */

/** Nearest-rank percentile of `values` (any order); undefined when empty. `q` in [0, 1]. */
export function percentile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
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
