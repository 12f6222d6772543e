/**
 * Reading a Prometheus text exposition (`/metrics`) in a bench: samples, sums over label
 * subsets, and quantiles of a histogram over the interval between two scrapes (the way
 * `histogram_quantile(q, increase(...))` does it: linear interpolation inside the bucket).
 */

export interface PromSample {
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePromText(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    if (m[3]) for (const l of m[3].matchAll(LABEL)) labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const value = m[4] === '+Inf' ? Infinity : m[4] === '-Inf' ? -Infinity : Number(m[4]);
    out.push({ name: m[1], labels, value });
  }
  return out;
}

/** Whether a sample's labels include `match` (a value array matches any of its values). */
function matches(s: PromSample, match: Record<string, string | readonly string[]>): boolean {
  return Object.entries(match).every(([k, v]) => (typeof v === 'string' ? s.labels[k] === v : v.includes(s.labels[k] ?? '')));
}

/** Sum of the samples named `name` whose labels include `match` (see {@link matches}). */
export function sumOf(samples: readonly PromSample[], name: string, match: Record<string, string | readonly string[]> = {}): number {
  let sum = 0;
  for (const s of samples) if (s.name === name && matches(s, match)) sum += s.value;
  return sum;
}

/** Sums of `name` grouped by one label. */
export function sumBy(samples: readonly PromSample[], name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) if (s.name === name) out[s.labels[label] ?? ''] = (out[s.labels[label] ?? ''] ?? 0) + s.value;
  return out;
}

export interface HistogramDelta {
  /** Observations between the two scrapes. */
  count: number;
  /** Sum of the observed values between the two scrapes. */
  sum: number;
  /** Cumulative counts per upper bound (ascending, ending with +Inf). */
  buckets: Array<{ le: number; count: number }>;
}

/**
 * The observations of histogram `name` between scrapes `before` and `after`: the label sets
 * matching `match` (as {@link sumOf}), summed; all of them by default.
 */
export function histogramDelta(before: readonly PromSample[], after: readonly PromSample[], name: string, match: Record<string, string | readonly string[]> = {}): HistogramDelta {
  const bucketsOf = (s: readonly PromSample[]) => {
    const m = new Map<number, number>();
    for (const x of s) {
      if (x.name !== `${name}_bucket` || !matches(x, match)) continue;
      const le = x.labels.le === '+Inf' ? Infinity : Number(x.labels.le);
      m.set(le, (m.get(le) ?? 0) + x.value);
    }
    return m;
  };
  const a = bucketsOf(before);
  const b = bucketsOf(after);
  const buckets = [...b.keys()].sort((x, y) => x - y).map((le) => ({ le, count: (b.get(le) ?? 0) - (a.get(le) ?? 0) }));
  return {
    count: sumOf(after, `${name}_count`, match) - sumOf(before, `${name}_count`, match),
    sum: sumOf(after, `${name}_sum`, match) - sumOf(before, `${name}_sum`, match),
    buckets,
  };
}

/**
 * The q-quantile of a histogram delta, interpolated linearly inside its bucket (as Prometheus
 * does); in the +Inf bucket it is the largest finite bound (a floor, flagged by `open`).
 */
export function histogramQuantile(h: HistogramDelta, q: number): { value: number; lower: number; upper: number; open: boolean } | undefined {
  if (h.count <= 0) return undefined;
  const rank = q * h.count;
  let prevLe = 0;
  let prevCount = 0;
  for (const { le, count } of h.buckets) {
    if (count >= rank) {
      if (le === Infinity) return { value: prevLe, lower: prevLe, upper: Infinity, open: true };
      const inBucket = count - prevCount;
      const value = inBucket > 0 ? prevLe + ((le - prevLe) * (rank - prevCount)) / inBucket : le;
      return { value, lower: prevLe, upper: le, open: false };
    }
    prevLe = le;
    prevCount = count;
  }
  return undefined;
}

/** Fraction of the observations at or below bound `le` (exact when `le` is a bucket bound). */
export function fractionAtOrBelow(h: HistogramDelta, le: number): number | undefined {
  const b = h.buckets.find((x) => x.le === le);
  return b && h.count > 0 ? b.count / h.count : undefined;
}
