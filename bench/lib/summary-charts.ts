/**
 * The charts of bench/results/summary.md other than the end-to-end bench's own
 * (bench/lib/e2e-charts.ts): drawn by bench/run.ts from the results files there, each skipped
 * when its file is missing or has no figures.
 *
 *   kernel-plan-time.svg   plan time against fleet size (WASM on the main thread, the pool, the read floor)
 *   list-read.svg          ms per 100k pods of each way to read a list page, for both pod shapes
 *   api-calls.svg          client and server CPU per hot API call, per path
 *   http-endpoints.svg     inspection API req/s per endpoint, per fleet size
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { barChart, compact, lineChart } from './svg-chart.js';

type Json = Record<string, any>;

function load(dir: URL, name: string): Json | undefined {
  const url = new URL(`${name}.json`, dir);
  if (!existsSync(url)) return undefined;
  try {
    return JSON.parse(readFileSync(url, 'utf8')) as Json;
  } catch {
    return undefined;
  }
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const ms = (v: number) => `${+v.toPrecision(3)}`;

function kernelChart(k: Json | undefined): string | undefined {
  const sizes = (k?.sizes ?? []) as Json[];
  if (sizes.length === 0) return undefined;
  const pts = (key: string) => sizes.flatMap((s) => (num(s[key]) === null ? [] : [[s.nodes as number, s[key] as number] as const]));
  return lineChart({
    title: 'Plan time vs fleet size (10 volumes per node, 1% of pairs differing)',
    subtitle: `p50 of ${sizes.map((s) => s.runs).join(' / ')} plans; 2 cores; bench/results/kernel.json`,
    xLabel: 'nodes',
    yLabel: 'plan time p50 (ms)',
    series: [
      { name: 'WASM, main thread', points: pts('wasm_p50_ms') },
      { name: `worker pool (${sizes[0]?.pool_workers ?? '?'} workers)`, points: pts('pool_p50_ms'), color: '#ff7f0e' },
      { name: 'sequential read of the packed state (floor)', points: pts('floor_p50_ms'), dashed: true, color: '#7f7f7f' },
    ],
    yFormat: ms,
  });
}

function listReadChart(l: Json | undefined): string | undefined {
  if (!l?.sim || !l?.production) return undefined;
  const readers: Array<[string, string]> = [['inline', 'whole JSON.parse'], ['sieve', 'sieve + JSON.parse'], ['worker_sieve_side', 'worker side (sieved)'], ['main_side', 'main thread side']];
  return barChart({
    title: 'Reading list pages: ms per 100k pods, one thread',
    subtitle: `${compact(l.pods)} pods in pages of ${compact(l.page_size)}, medians of ${l.rounds} rounds; bench/results/list-read.json`,
    yLabel: 'ms per 100k pods',
    groups: readers.map(([, label]) => label),
    series: [
      { name: `simulator pods (${l.sim.bytes_per_pod} B)`, values: readers.map(([r]) => num(l.sim.ms_per_100k_pods?.[r])) },
      { name: `production-shaped pods (${l.production.bytes_per_pod} B)`, values: readers.map(([r]) => num(l.production.ms_per_100k_pods?.[r])), color: '#ff7f0e' },
    ],
    yFormat: (v) => `${Math.round(v)}`,
  });
}

function apiChart(a: Json | undefined): string | undefined {
  if (!a?.raw) return undefined;
  const paths: Array<[string, string]> = [['generated', 'generated client, HTTP/1.1'], ['raw_h1', 'raw, HTTP/1.1'], ['raw', 'raw, HTTP/2 (default)']];
  return barChart({
    title: 'CPU per hot API call (create VA, patch node status, get node, delete VA)',
    subtitle: `${a.config?.concurrency ?? '?'} calls at a time against the simulator in another process; bench/results/api-writes.json`,
    yLabel: 'CPU µs per call',
    groups: paths.map(([, label]) => label),
    series: [
      { name: 'client (this process)', values: paths.map(([p]) => num(a[p]?.cpu_us_per_call)) },
      { name: 'server (simulator)', values: paths.map(([p]) => num(a[p]?.server_cpu_us_per_call)), color: '#7f7f7f' },
    ],
    groupNotes: paths.map(([p]) => (num(a[p]?.calls_per_s) === null ? '' : `${compact(a[p].calls_per_s)} calls/s`)),
    yFormat: (v) => `${Math.round(v)}`,
  });
}

function httpChart(h: Json | undefined): string | undefined {
  const endpoints = ((h?.endpoints ?? []) as Json[]).filter((e) => !String(e.name).includes('paced'));
  if (endpoints.length === 0) return undefined;
  const sizes = [...new Set(endpoints.map((e) => e.nodes as number))].sort((a, b) => a - b);
  const names = [...new Set(endpoints.map((e) => e.name as string))];
  const short: Record<string, string> = { 'bare fastify route': 'bare', 'bare route, node-sized body': 'bare, sized', '/healthz': 'healthz', '/api/v1/nodes/{name}': 'node', '/api/v1/volumes/{uniqueName}': 'volume', '/api/v1/summary': 'summary', '/metrics': 'metrics' };
  return barChart({
    title: 'Inspection API: requests/s per endpoint (controller under churn, same process)',
    subtitle: 'bare: a constant answer; bare, sized: a node-sized constant answer; 2 cores shared with the simulator; bench/results/http.json',
    yLabel: 'requests per second',
    groups: names.map((n) => short[n] ?? n),
    series: sizes.map((n) => ({ name: `${compact(n)} nodes`, values: names.map((name) => num(endpoints.find((e) => e.nodes === n && e.name === name)?.req_per_s)) })),
  });
}

/** Writes the charts whose results exist into `dir` (a file URL); returns their names. */
export function writeSummaryCharts(dir: URL): string[] {
  const charts: Array<[string, string | undefined]> = [
    ['kernel-plan-time.svg', kernelChart(load(dir, 'kernel'))],
    ['list-read.svg', listReadChart(load(dir, 'list-read'))],
    ['api-calls.svg', apiChart(load(dir, 'api-writes'))],
    ['http-endpoints.svg', httpChart(load(dir, 'http'))],
  ];
  const written: string[] = [];
  for (const [name, svg] of charts) {
    if (svg === undefined) continue;
    writeFileSync(new URL(name, dir), svg);
    written.push(name);
  }
  return written;
}
