/**
 * The end-to-end bench's charts, from the runs in bench/results/e2e.json: loop time and
 * convergence time against fleet size (with the targets), and controller ingest (the watch
 * burst, and the initial sync) against the raw JSON.parse rate of the same pod events.
 */
import { writeFileSync } from 'node:fs';
import { barChart, compact, lineChart } from './svg-chart.js';

export interface ChartRun {
  nodes: number;
  converge_s: number | null;
  loop_p50_ms: number | null;
  loop_p99_ms: number | null;
  /** The watch burst's events/s; in older rows (no `watch_ingest`), the sync's objects/s (see `rates`). */
  ingest_events_per_s: number | null;
  ingest_cpu_events_per_s?: number | null;
  watch_ingest?: unknown;
  sync_objects_per_s?: number | null;
  sync_pod_read_per_s?: number | null;
  loop_p50_beyond_last_bucket?: boolean;
  loop_p99_beyond_last_bucket?: boolean;
  failed?: string;
  json_parse_events_per_s: number | null;
}

const pts = (runs: readonly ChartRun[], f: (r: ChartRun) => number | null | undefined) =>
  runs.flatMap((r) => {
    const y = f(r);
    return typeof y === 'number' && Number.isFinite(y) ? [[r.nodes, y] as const] : [];
  });
const num = (v: number | null | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
/** A row's rates under the current names, whichever names it was recorded with. */
const rates = (r: ChartRun) =>
  r.watch_ingest === undefined && r.sync_objects_per_s === undefined
    ? { watch: null, sync: num(r.ingest_events_per_s), pods: num(r.ingest_cpu_events_per_s) }
    : { watch: num(r.ingest_events_per_s), sync: num(r.sync_objects_per_s), pods: num(r.sync_pod_read_per_s) };

/** Writes loop-time.svg, convergence-time.svg and ingest-vs-json-parse.svg into `dir` (a file URL); returns their names. */
export function writeE2eCharts(dir: URL, runs: readonly ChartRun[], subtitle: string): string[] {
  const sorted = [...runs].filter((r) => typeof r.nodes === 'number').sort((a, b) => a.nodes - b.nodes);
  const failed = sorted.filter((r) => r.failed).map((r) => ({ x: r.nodes, text: 'failed' }));
  const beyond = (key: 'loop_p50_beyond_last_bucket' | 'loop_p99_beyond_last_bucket') => (x: number, y: number) =>
    `${sorted.find((r) => r.nodes === x)?.[key] ? '> ' : ''}${+y.toPrecision(3)}`;
  const files: Array<[string, string]> = [
    ['loop-time.svg', lineChart({
      title: 'Reconcile loop time under churn vs fleet size',
      subtitle,
      xLabel: 'nodes (10 pods each)',
      yLabel: 'loop pass time (ms)',
      series: [
        { name: 'p99', points: pts(sorted, (r) => r.loop_p99_ms), pointLabel: beyond('loop_p99_beyond_last_bucket') },
        { name: 'p50', points: pts(sorted, (r) => r.loop_p50_ms), dashed: true, color: '#2ca02c', pointLabel: beyond('loop_p50_beyond_last_bucket') },
      ],
      targets: [{ label: 'target p99 ≤ 20 ms (at 50k)', y: 20 }],
      xNotes: failed,
      yFormat: (v) => `${+v.toPrecision(3)}`,
    })],
    ['convergence-time.svg', lineChart({
      title: 'Cold-start convergence time vs fleet size',
      subtitle,
      xLabel: 'nodes (10 pods each)',
      yLabel: 'seconds to every pair attached and reported',
      series: [{ name: 'converge', points: pts(sorted, (r) => r.converge_s) }],
      targets: [{ label: 'targets (120 s at 50k, stretch 240 s at 100k)', points: [[50_000, 120], [100_000, 240]] }],
      xNotes: failed.map((f) => ({ ...f, text: 'did not converge' })),
      yFormat: (v) => `${+v.toPrecision(3)}`,
    })],
    ['ingest-vs-json-parse.svg', barChart({
      title: 'Controller ingest vs raw JSON.parse of the same pod events',
      subtitle,
      yLabel: 'objects per second',
      groups: sorted.map((r) => `${compact(r.nodes)} nodes${r.failed ? ' (failed)' : ''}`),
      series: [
        { name: 'watch ingest: pod events from a burst', values: sorted.map((r) => rates(r).watch) },
        { name: 'initial sync, end to end (objects/s)', values: sorted.map((r) => rates(r).sync), color: '#ff7f0e' },
        { name: 'sync: pod pages read by the main thread (pods/s)', values: sorted.map((r) => rates(r).pods), color: '#2ca02c' },
        { name: 'JSON.parse alone', values: sorted.map((r) => num(r.json_parse_events_per_s)), color: '#7f7f7f' },
      ],
      groupNotes: sorted.map((r) => {
        const w = rates(r).watch;
        return w && r.json_parse_events_per_s ? `watch ${Math.round((100 * w) / r.json_parse_events_per_s)}% (target ≥ 70%)` : '';
      }),
    })],
  ];
  for (const [name, svg] of files) writeFileSync(new URL(name, dir), svg);
  return files.map(([name]) => name);
}
