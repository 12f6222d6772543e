/**
 * Where in a measured window a latency tail comes from: the samples bucketed by when they
 * started (one bucket per second by default), each bucket with its count and percentiles. A p99
 * over a minute says how bad the tail is; the timeline says whether it is spread evenly (queueing)
 * or a few seconds of stall (a full collection, a periodic pass), which need different fixes.
 */
import { percentile } from './stats.js';

export interface LatencySample {
  /** Start of the timed interval (ms, any clock shared by the samples and `t0`). */
  t: number;
  /** Its latency, ms; for one still waiting, how long it has waited so far. */
  ms: number;
}

export interface TimelineBucket {
  /** Seconds from `t0` to the bucket's start. */
  at_s: number;
  n: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** Buckets of `bucketMs` from `t0`; samples before `t0` are left out, empty buckets are kept (n = 0). */
export function latencyTimeline(samples: readonly LatencySample[], t0: number, bucketMs = 1000): TimelineBucket[] {
  const buckets: number[][] = [];
  for (const s of samples) {
    if (s.t < t0) continue;
    const i = Math.floor((s.t - t0) / bucketMs);
    for (let k = buckets.length; k <= i; k++) buckets.push([]);
    buckets[i]!.push(s.ms);
  }
  return buckets.map((v, i) => ({
    at_s: (i * bucketMs) / 1000,
    n: v.length,
    p50_ms: Math.round(percentile(v, 0.5) ?? 0),
    p99_ms: Math.round(percentile(v, 0.99) ?? 0),
    max_ms: Math.round(v.length ? Math.max(...v) : 0),
  }));
}

export interface TailShare {
  /** Samples above `overMs`. */
  over: number;
  /** Of those, the share that fell in the `top` buckets with the most of them. */
  in_worst_buckets: number;
  /** Those buckets' starts (s from `t0`), worst first. */
  worst_at_s: number[];
}

/**
 * How concentrated the samples above `overMs` are: the share of them inside the `top` buckets
 * that hold the most. Near 1 with a small `top`: the tail is a few stalls; near `top`/buckets:
 * it is spread over the window.
 */
export function tailShare(samples: readonly LatencySample[], t0: number, overMs: number, top = 3, bucketMs = 1000): TailShare {
  const perBucket = new Map<number, number>();
  let over = 0;
  for (const s of samples) {
    if (s.t < t0 || s.ms <= overMs) continue;
    over++;
    const i = Math.floor((s.t - t0) / bucketMs);
    perBucket.set(i, (perBucket.get(i) ?? 0) + 1);
  }
  const worst = [...perBucket].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, top);
  const inWorst = worst.reduce((a, [, n]) => a + n, 0);
  return { over, in_worst_buckets: over ? Math.round((inWorst / over) * 100) / 100 : 0, worst_at_s: worst.map(([i]) => (i * bucketMs) / 1000) };
}
