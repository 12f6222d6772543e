/**
 * The scale-out chart: two panels side by side in one SVG, aggregate attach/detach writes per
 * second against the replica count (write-bound setup), and the cumulative distribution of
 * takeover times after SIGKILL against the budget (lease duration + grace + 1 s).
 */
import { lineChart } from '../svg-chart.js';

export interface ScaleOutChartInput {
  throughput: ReadonlyArray<{ replicas: number; ops_per_s: number | null }>;
  takeoversS: readonly number[];
  budgetS: number;
  subtitle: string;
}

const PANEL_W = 760;

export function scaleOutChart(i: ScaleOutChartInput): string {
  const tp = lineChart({
    title: 'Attach/detach throughput by replicas',
    subtitle: i.subtitle,
    xLabel: 'replicas (N)',
    yLabel: 'VolumeAttachment creates + deletes / s',
    series: [{ name: 'aggregate', points: i.throughput.filter((t) => t.ops_per_s !== null).map((t) => [t.replicas, t.ops_per_s!] as const) }],
    xTicks: i.throughput.map((t) => t.replicas),
    xFormat: (x) => String(x),
  });
  const sorted = [...i.takeoversS].sort((a, b) => a - b);
  const cdf = sorted.map((s, k) => [s, Math.round(((k + 1) / sorted.length) * 1000) / 10] as const);
  const to = lineChart({
    title: `Takeover after SIGKILL (${sorted.length} kills)`,
    subtitle: 'kill → every bucket of the killed replica held by another (bucket Leases as committed)',
    xLabel: 'seconds',
    yLabel: '% of kills taken over',
    series: [{ name: 'CDF', points: cdf, pointLabel: () => '' }],
    targets: [{ label: `budget ${i.budgetS} s`, points: [[i.budgetS, 100]] }],
    xTicks: Array.from({ length: Math.floor(Math.max(i.budgetS, ...sorted, 1)) + 1 }, (_, k) => k),
    xFormat: (x) => String(x),
    yFormat: (y) => `${Math.round(y)}`,
  });
  const inner = (svg: string, x: number) => svg.replace('<svg ', `<svg x="${x}" y="0" `);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * PANEL_W}" height="440" viewBox="0 0 ${2 * PANEL_W} 440">`,
    inner(tp, 0),
    inner(to, PANEL_W),
    '</svg>',
    '',
  ].join('\n');
}
