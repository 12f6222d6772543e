/**
 * Convergence history: one sample a second for the last hour, and one per 30 s (the maximum of
 * each series over those 30 s) for the last 6 hours, in fixed typed-array rings; plus a ring of
 * annotations (forced detaches, out-of-service taints, controller start, leader changes).
 *
 * Served downsampled: a range is cut into `points` buckets of equal time and each series gives
 * the maximum of its samples in the bucket (peaks stay visible; an empty bucket is left out).
 * Memory: 3,600 + 720 samples of {@link SERIES} numbers, and at most {@link MAX_ANNOTATIONS}.
 */

export const SERIES = ['desired', 'attached', 'notConverged', 'conflicts', 'pending', 'backoff'] as const;
export type Series = (typeof SERIES)[number];
export type HistorySample = Readonly<Record<Series, number>> & { readonly t: number };

export type AnnotationKind = 'forced-detach' | 'out-of-service-added' | 'out-of-service-removed' | 'controller-start' | 'leader-change';

export interface Annotation {
  readonly t: number;
  readonly kind: AnnotationKind;
  readonly text: string;
}

export type HistoryRange = '15m' | '1h' | '6h';

export const RANGE_MS: Readonly<Record<HistoryRange, number>> = { '15m': 15 * 60_000, '1h': 3_600_000, '6h': 6 * 3_600_000 };

/** Columnar answer: `t[i]` with each series' value at i. */
export interface HistoryWindow {
  readonly range: HistoryRange;
  readonly stepMs: number;
  readonly t: number[];
  readonly series: Record<Series, number[]>;
  readonly annotations: Annotation[];
}

export interface History {
  record(sample: HistorySample): void;
  annotate(a: Annotation): void;
  /** The newest sample, or undefined before the first. */
  latest(): HistorySample | undefined;
  window(range: HistoryRange, points: number, now: number): HistoryWindow;
  annotations(since: number): Annotation[];
}

export const FINE_SAMPLES = 3600;
export const COARSE_SAMPLES = 720;
export const COARSE_EVERY = 30;
export const MAX_ANNOTATIONS = 1000;

export function createHistory(): History {
  return new RingHistory();
}

class Ring {
  readonly t: Float64Array;
  readonly values: Float64Array[];
  size = 0;
  head = 0;
  constructor(readonly capacity: number) {
    this.t = new Float64Array(capacity);
    this.values = SERIES.map(() => new Float64Array(capacity));
  }
  push(t: number, v: readonly number[]): void {
    this.t[this.head] = t;
    for (let s = 0; s < v.length; s++) this.values[s][this.head] = v[s];
    this.head = (this.head + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
  }
  /** Index of the i-th oldest sample. */
  at(i: number): number {
    return (this.head - this.size + i + this.capacity) % this.capacity;
  }
}

class RingHistory implements History {
  private readonly fine = new Ring(FINE_SAMPLES);
  private readonly coarse = new Ring(COARSE_SAMPLES);
  private readonly pendingMax = SERIES.map(() => -Infinity);
  private pendingCount = 0;
  private last: HistorySample | undefined;
  private readonly notes: Annotation[] = [];

  record(sample: HistorySample): void {
    const v = SERIES.map((s) => sample[s]);
    this.fine.push(sample.t, v);
    this.last = sample;
    for (let s = 0; s < v.length; s++) this.pendingMax[s] = Math.max(this.pendingMax[s], v[s]);
    if (++this.pendingCount >= COARSE_EVERY) {
      this.coarse.push(sample.t, this.pendingMax);
      this.pendingMax.fill(-Infinity);
      this.pendingCount = 0;
    }
  }

  annotate(a: Annotation): void {
    this.notes.push(a);
    if (this.notes.length > MAX_ANNOTATIONS) this.notes.shift();
  }

  latest(): HistorySample | undefined {
    return this.last;
  }

  annotations(since: number): Annotation[] {
    return this.notes.filter((a) => a.t >= since);
  }

  window(range: HistoryRange, points: number, now: number): HistoryWindow {
    const span = RANGE_MS[range];
    const from = now - span;
    // The fine ring covers an hour; 6 h reads the coarse ring.
    const ring = span > FINE_SAMPLES * 1000 ? this.coarse : this.fine;
    const n = Math.max(1, Math.floor(points));
    const stepMs = Math.max(1000, Math.ceil(span / n));
    const t: number[] = [];
    const series = Object.fromEntries(SERIES.map((s) => [s, [] as number[]])) as Record<Series, number[]>;
    let bucket = -1;
    for (let i = 0; i < ring.size; i++) {
      const k = ring.at(i);
      const ts = ring.t[k];
      if (ts <= from || ts > now) continue;
      const b = Math.floor((ts - from - 1) / stepMs);
      if (b !== bucket) {
        bucket = b;
        t.push(ts);
        SERIES.forEach((s, j) => series[s].push(ring.values[j][k]));
      } else {
        t[t.length - 1] = ts;
        SERIES.forEach((s, j) => {
          const arr = series[s];
          arr[arr.length - 1] = Math.max(arr[arr.length - 1], ring.values[j][k]);
        });
      }
    }
    return { range, stepMs, t, series, annotations: this.annotations(from) };
  }
}
