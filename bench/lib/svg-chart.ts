/**
 * A small SVG chart writer for bench results: line charts over a numeric x axis (with target
 * lines and target points) and grouped bar charts. Output is a standalone SVG document with
 * no scripts, fonts or external references, so GitHub renders it and diffs stay readable.
 * @example writeFileSync('loop.svg', lineChart({ title: 'Loop', xLabel: 'nodes', yLabel: 'ms', series: [{ name: 'p99', points: [[1e4, 3], [5e4, 9]] }] }))
 */

export interface LineSeries {
  name: string;
  points: ReadonlyArray<readonly [number, number]>;
  color?: string;
  dashed?: boolean;
  /** Text beside a point (default: the y value). */
  pointLabel?: (x: number, y: number) => string;
}

export interface TargetLine {
  label: string;
  /** Horizontal line at this y, or target points (drawn as hollow diamonds). */
  y?: number;
  points?: ReadonlyArray<readonly [number, number]>;
}

export interface LineChartSpec {
  title: string;
  subtitle?: string;
  xLabel: string;
  yLabel: string;
  series: readonly LineSeries[];
  targets?: readonly TargetLine[];
  /** Tick positions on x (default: every x of the data). */
  xTicks?: readonly number[];
  xFormat?: (x: number) => string;
  yFormat?: (y: number) => string;
  /** Marks on the x axis for sizes without a value (e.g. a failed run), with a short text. */
  xNotes?: ReadonlyArray<{ x: number; text: string }>;
}

export interface BarChartSpec {
  title: string;
  subtitle?: string;
  yLabel: string;
  groups: readonly string[];
  series: ReadonlyArray<{ name: string; values: ReadonlyArray<number | null>; color?: string }>;
  /** Text above each group (e.g. a ratio). */
  groupNotes?: readonly string[];
  yFormat?: (y: number) => string;
}

const W = 760;
const H = 440;
const M = { left: 78, right: 24, top: 72, bottom: 64 };
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b'];
const TARGET = '#b22222';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const r1 = (v: number) => Math.round(v * 10) / 10;

/** Compact numbers: 1.2k, 3.4M; small values keep up to 3 significant digits. */
export function compact(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`;
  return `${+v.toPrecision(3)}`;
}

/** About `n` round tick values covering [0, max]. */
export function niceTicks(max: number, n = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((k) => k * mag).find((s) => s >= raw) ?? 10 * mag;
  const ticks: number[] = [];
  for (let t = 0; t <= max + step * 1e-9; t += step) ticks.push(+t.toPrecision(12));
  if (ticks[ticks.length - 1] < max) ticks.push(+(ticks[ticks.length - 1] + step).toPrecision(12));
  return ticks;
}

function frame(title: string, subtitle: string | undefined, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    `<text x="${M.left}" y="28" font-size="17" font-weight="bold" fill="#222">${esc(title)}</text>`,
    subtitle ? `<text x="${M.left}" y="48" font-size="12" fill="#555">${esc(subtitle)}</text>` : '',
    ...body,
    '</svg>',
    '',
  ].filter((l) => l !== '').join('\n');
}

function yAxis(ticks: number[], y: (v: number) => number, label: string, fmt: (v: number) => string): string[] {
  const out = ticks.map((t) => `<line x1="${M.left}" x2="${W - M.right}" y1="${r1(y(t))}" y2="${r1(y(t))}" stroke="#e4e4e4"/><text x="${M.left - 8}" y="${r1(y(t) + 4)}" text-anchor="end" fill="#444">${esc(fmt(t))}</text>`);
  const cy = (M.top + H - M.bottom) / 2;
  out.push(`<text transform="translate(20 ${cy}) rotate(-90)" text-anchor="middle" fill="#333">${esc(label)}</text>`);
  out.push(`<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${H - M.bottom}" stroke="#888"/><line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}" stroke="#888"/>`);
  return out;
}

function legend(items: ReadonlyArray<{ name: string; color: string; dashed?: boolean; marker?: 'diamond' | 'box' }>): string[] {
  const out: string[] = [];
  let x = M.left;
  const y = M.top - 14;
  for (const it of items) {
    if (it.marker === 'diamond') out.push(`<path d="M${x + 9} ${y - 6} l6 6 l-6 6 l-6 -6 z" fill="none" stroke="${it.color}" stroke-width="2"/>`);
    else if (it.marker === 'box') out.push(`<rect x="${x + 2}" y="${y - 6}" width="14" height="12" fill="${it.color}"/>`);
    else out.push(`<line x1="${x}" x2="${x + 18}" y1="${y}" y2="${y}" stroke="${it.color}" stroke-width="2.5"${it.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    out.push(`<text x="${x + 24}" y="${y + 4}" fill="#333">${esc(it.name)}</text>`);
    x += 24 + it.name.length * 6.6 + 18;
  }
  return out;
}

export function lineChart(s: LineChartSpec): string {
  const xs = s.series.flatMap((se) => se.points.map((p) => p[0]))
    .concat((s.targets ?? []).flatMap((t) => (t.points ?? []).map((p) => p[0])))
    .concat((s.xNotes ?? []).map((n) => n.x));
  const ys = s.series.flatMap((se) => se.points.map((p) => p[1])).concat((s.targets ?? []).flatMap((t) => [t.y ?? 0, ...(t.points ?? []).map((p) => p[1])]));
  const xMax = Math.max(1, ...xs);
  const yTicks = niceTicks(Math.max(...ys, 0) * 1.05);
  const yMax = yTicks[yTicks.length - 1];
  const x = (v: number) => M.left + 16 + ((W - M.left - M.right - 32) * v) / xMax;
  const y = (v: number) => H - M.bottom - ((H - M.top - M.bottom) * v) / yMax;
  const xf = s.xFormat ?? compact;
  const yf = s.yFormat ?? compact;
  const body = yAxis(yTicks, y, s.yLabel, yf);
  const xTicks = s.xTicks ?? [...new Set(xs)].sort((a, b) => a - b);
  for (const t of xTicks) body.push(`<line x1="${r1(x(t))}" x2="${r1(x(t))}" y1="${H - M.bottom}" y2="${H - M.bottom + 5}" stroke="#888"/><text x="${r1(x(t))}" y="${H - M.bottom + 19}" text-anchor="middle" fill="#444">${esc(xf(t))}</text>`);
  body.push(`<text x="${(M.left + W - M.right) / 2}" y="${H - 18}" text-anchor="middle" fill="#333">${esc(s.xLabel)}</text>`);
  const keys: Array<{ name: string; color: string; dashed?: boolean; marker?: 'diamond' }> = [];
  for (const t of s.targets ?? []) {
    if (t.y !== undefined) body.push(`<line x1="${M.left}" x2="${W - M.right}" y1="${r1(y(t.y))}" y2="${r1(y(t.y))}" stroke="${TARGET}" stroke-width="1.5" stroke-dasharray="6 4"/>`);
    for (const [px, py] of t.points ?? []) body.push(`<path d="M${r1(x(px))} ${r1(y(py) - 7)} l7 7 l-7 7 l-7 -7 z" fill="none" stroke="${TARGET}" stroke-width="2"/>`);
    keys.push({ name: t.label, color: TARGET, ...(t.y !== undefined ? { dashed: true } : { marker: 'diamond' as const }) });
  }
  s.series.forEach((se, i) => {
    const color = se.color ?? PALETTE[i % PALETTE.length];
    const pts = [...se.points].sort((a, b) => a[0] - b[0]);
    if (pts.length > 1) body.push(`<polyline fill="none" stroke="${color}" stroke-width="2.5"${se.dashed ? ' stroke-dasharray="6 4"' : ''} points="${pts.map(([px, py]) => `${r1(x(px))},${r1(y(py))}`).join(' ')}"/>`);
    for (const [px, py] of pts) {
      body.push(`<circle cx="${r1(x(px))}" cy="${r1(y(py))}" r="4" fill="${color}"/>`);
      body.push(`<text x="${r1(x(px) + 7)}" y="${r1(y(py) - 7)}" fill="${color}" font-size="11">${esc(se.pointLabel ? se.pointLabel(px, py) : yf(py))}</text>`);
    }
    keys.unshift({ name: se.name, color, ...(se.dashed ? { dashed: true } : {}) });
  });
  for (const n of s.xNotes ?? []) {
    const nx = r1(x(n.x));
    const ny = H - M.bottom;
    body.push(`<path d="M${nx - 6} ${ny - 16} l12 12 M${nx + 6} ${ny - 16} l-12 12" stroke="#555" stroke-width="2.5"/>`);
    body.push(`<text x="${nx}" y="${ny - 22}" text-anchor="middle" fill="#555" font-size="11">${esc(n.text)}</text>`);
  }
  body.push(...legend(keys));
  return frame(s.title, s.subtitle, body);
}

export function barChart(s: BarChartSpec): string {
  const values = s.series.flatMap((se) => se.values.filter((v): v is number => v !== null));
  const yTicks = niceTicks(Math.max(...values, 0) * 1.1);
  const yMax = yTicks[yTicks.length - 1];
  const y = (v: number) => H - M.bottom - ((H - M.top - M.bottom) * v) / yMax;
  const yf = s.yFormat ?? compact;
  const body = yAxis(yTicks, y, s.yLabel, yf);
  const plotW = W - M.left - M.right;
  const groupW = plotW / Math.max(1, s.groups.length);
  const barW = Math.min(64, (groupW * 0.7) / Math.max(1, s.series.length));
  s.groups.forEach((g, gi) => {
    const gx = M.left + groupW * gi + (groupW - barW * s.series.length) / 2;
    s.series.forEach((se, si) => {
      const v = se.values[gi];
      if (v === null || v === undefined) return;
      const color = se.color ?? PALETTE[si % PALETTE.length];
      const bx = gx + si * barW;
      body.push(`<rect x="${r1(bx + 2)}" y="${r1(y(v))}" width="${r1(barW - 4)}" height="${r1(H - M.bottom - y(v))}" fill="${color}"/>`);
      body.push(`<text x="${r1(bx + barW / 2)}" y="${r1(y(v) - 5)}" text-anchor="middle" fill="#333" font-size="11">${esc(yf(v))}</text>`);
    });
    const cx = M.left + groupW * (gi + 0.5);
    body.push(`<text x="${r1(cx)}" y="${H - M.bottom + 19}" text-anchor="middle" fill="#444">${esc(g)}</text>`);
    const note = s.groupNotes?.[gi];
    if (note) body.push(`<text x="${r1(cx)}" y="${H - M.bottom + 36}" text-anchor="middle" fill="#222" font-weight="bold">${esc(note)}</text>`);
  });
  body.push(...legend(s.series.map((se, i) => ({ name: se.name, color: se.color ?? PALETTE[i % PALETTE.length], marker: 'box' as const }))));
  return frame(s.title, s.subtitle, body);
}
