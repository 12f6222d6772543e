// End-to-end benchmark (issue 6): `npm run bench:e2e` [-- --nodes 10000,50000 --pods-per-node 10
// --churn 1000 --steady 60 --timeout 900 --profile DIR --kube-api-qps 20000
// --kube-api-max-in-flight 256 --list-page-size 5000 --out FILE
// --controller-args "--workers 0 …" --controller-node-args "--trace-gc-nvp" --sim-node-args "--trace-gc"
// --sync-only (the initial sync alone; needs --out) --pod-va-source commit|watch|commit,watch], or
// `-- --charts-only` to redraw the charts from bench/results/e2e.json.
//
// For each fleet size, from cold start, with the simulator and the controller as separate child
// processes of this one (see bench/lib/e2e-run.ts for the phases): time to full convergence,
// controller CPU seconds and peak RSS, initial-sync rate, API writes/s; then `--steady`
// seconds of churn at `--churn` pod changes/s: loop p50/p99, new-pod-to-VolumeAttachment
// p50/p99 (from the simulator's commits by default, `--pod-va-source watch` for the bench's own
// watches); then churn stops and the watch ingest is measured (a burst of pod events the
// controller reads at its own pace, bench/lib/e2e-watch-ingest.ts) beside the raw JSON.parse
// rate of the same events as watch lines.
//
// Results: bench/results/e2e.json (runs of other sizes already there are kept; a size measured
// again replaces its run) and bench/results/{loop-time,convergence-time,ingest-vs-json-parse}.svg.
// `node scripts/bench-table.js` then regenerates the README table.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { writeE2eCharts, type ChartRun } from './lib/e2e-charts.js';
import { runE2e, type E2eRun } from './lib/e2e-run.js';
import { SIMULATOR_CLIENT_SIZING } from '../src/sim/server/client-sizing.js';
import type { GcPauseStats } from './lib/gc-pauses.js';

const args = process.argv.slice(2);
const arg = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : dflt;
};
const num = (name: string, dflt: number) => {
  const v = Number(arg(name, String(dflt)));
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a non-negative number`);
  return v;
};

const SIZES = arg('nodes', '10000,50000,100000').split(',').map((s) => {
  const n = Number(s);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--nodes: not a positive integer: ${s}`);
  return n;
});
const PODS_PER_NODE = num('pods-per-node', 10);
const CHURN = num('churn', 1000);
const STEADY_S = num('steady', 60);
const TIMEOUT_S = num('timeout', 900);
const PROFILE_DIR = arg('profile', '');
const CONTROLLER_ARGS = arg('controller-args', '').split(/\s+/).filter(Boolean);
// Flags the bench sets and records itself: repeated in --controller-args, the later one would
// win unrecorded.
const OWN_FLAGS: Record<string, string> = { '--kube-api-qps': '--kube-api-qps', '--kube-api-burst': '--kube-api-qps', '--kube-api-max-in-flight': '--kube-api-max-in-flight', '--list-page-size': '--list-page-size', '--kubeconfig': '', '--leader-elect': '', '--listen': '' };
for (const a of CONTROLLER_ARGS) {
  const flag = a.split('=')[0];
  if (flag in OWN_FLAGS) throw new Error(`--controller-args: ${flag} is set by the bench${OWN_FLAGS[flag] ? `; pass ${OWN_FLAGS[flag]} to the bench instead` : ''}`);
}
const CONTROLLER_NODE_ARGS = arg('controller-node-args', '').split(/\s+/).filter(Boolean);
const SIM_NODE_ARGS = arg('sim-node-args', '').split(/\s+/).filter(Boolean);
// The initial sync alone (its rates and their JSON.parse baseline): an experiment, so never the published results.
const SYNC_ONLY = args.includes('--sync-only');
// The controller's client limits default to the simulator's sizing (client-sizing.ts says why).
const QPS = num('kube-api-qps', SIMULATOR_CLIENT_SIZING.kubeApiQps);
const MAX_IN_FLIGHT = num('kube-api-max-in-flight', SIMULATOR_CLIENT_SIZING.kubeApiMaxInFlight);
const LIST_PAGE_SIZE = num('list-page-size', SIMULATOR_CLIENT_SIZING.listPageSize);
// Where new-pod latency is taken; several (`commit,watch`) time one window both ways, the first reported as the run's.
const POD_VA_SOURCES = arg('pod-va-source', 'commit').split(',').map((s) => {
  if (s !== 'commit' && s !== 'watch') {
    console.error(`--pod-va-source: expected commit, watch or both comma-separated, got ${JSON.stringify(s)}`);
    process.exit(2);
  }
  return s;
});

const resultsDir = new URL('results/', import.meta.url);
// `--out FILE` keeps an experiment (other qps, churn…) out of the published results and charts.
const OUT = arg('out', '');
if (SYNC_ONLY && !OUT) throw new Error('--sync-only measures part of a run: give --out FILE');
const resultsFile = OUT ? new URL(OUT, `file://${process.cwd()}/`) : new URL('e2e.json', resultsDir);
mkdirSync(resultsDir, { recursive: true });

function previousRuns(): E2eRun[] {
  if (!existsSync(resultsFile)) return [];
  try {
    const prev = JSON.parse(readFileSync(resultsFile, 'utf8')) as { runs?: E2eRun[] };
    return Array.isArray(prev.runs) ? prev.runs : [];
  } catch {
    return [];
  }
}

/** The commit measured, and whether the controller's sources differed from it (a shared working tree). */
function revision(): { commit: string; sources_modified: boolean } | null {
  try {
    const git = (...a: string[]) => execFileSync('git', a, { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8' }).trim();
    return { commit: git('rev-parse', '--short', 'HEAD'), sources_modified: git('status', '--porcelain', '--', 'src', 'assembly', 'bin') !== '' };
  } catch {
    return null;
  }
}

const fmt = (v: unknown) => (v === null || v === undefined ? '—' : String(v));

function save(runs: E2eRun[]): void {
  const out = {
    bench: 'e2e',
    command: 'npm run bench:e2e',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '', node: process.version, loadavg_at_end: loadavg().map((l) => Math.round(l * 100) / 100) },
    config: { pods_per_node: PODS_PER_NODE, churn_per_s: CHURN, steady_s: STEADY_S, kube_api_qps: QPS, kube_api_max_in_flight: MAX_IN_FLIGHT, list_page_size: LIST_PAGE_SIZE, processes: 'simulator (bench/lib/sim-child.ts) and controller (bin/fleet-attach.js run) as child processes' },
    targets: { converge_s_at_50k: 120, converge_s_at_100k_stretch: 240, loop_p99_ms_at_50k: 20, pod_to_va_p99_ms: 200, ingest_ratio_min: 0.7 },
    runs,
  };
  writeFileSync(resultsFile, `${JSON.stringify(out, null, 2)}\n`);
  if (OUT) return console.log(`wrote ${OUT}`);
  const charts = writeE2eCharts(resultsDir, runs as unknown as ChartRun[], `2 cores, simulator + controller + bench on one machine; churn ${CHURN}/s; ${new Date().toISOString().slice(0, 10)}`);
  console.log(`wrote bench/results/e2e.json and ${charts.map((c) => `bench/results/${c}`).join(', ')}`);
}

if (args.includes('--charts-only')) {
  // Redraws the charts from the results already there (after a chart change), measuring nothing.
  const prev = JSON.parse(readFileSync(resultsFile, 'utf8')) as { date?: string; config?: { churn_per_s?: number }; runs: E2eRun[] };
  const charts = writeE2eCharts(resultsDir, prev.runs as unknown as ChartRun[], `2 cores, simulator + controller + bench on one machine; churn ${prev.config?.churn_per_s ?? CHURN}/s; ${(prev.date ?? '').slice(0, 10)}`);
  console.log(`wrote ${charts.map((c) => `bench/results/${c}`).join(', ')}`);
  process.exit(0);
}

const runs = previousRuns().filter((r) => !SIZES.includes(r.nodes));
for (const nodes of SIZES) {
  console.log(`\n== ${nodes} nodes × ${PODS_PER_NODE} pods ==`);
  const dir = PROFILE_DIR ? `${PROFILE_DIR}/${nodes}` : undefined;
  if (dir) mkdirSync(dir, { recursive: true });
  // Read before the run: the processes load the code as it is at their start, and the tree may
  // move on while a long size runs. The controller runs dist/, so it is brought up to date with
  // the tree first (the npm script builds it only once, before the first size).
  execFileSync(process.execPath, [new URL('../scripts/ensure-build.js', import.meta.url).pathname], { stdio: 'inherit' });
  const rev = revision();
  let run: E2eRun;
  try {
    run = await runE2e({ nodes, podsPerNode: PODS_PER_NODE, churn: CHURN, steadyS: STEADY_S, convergeTimeoutS: TIMEOUT_S, seed: 1, kubeApiQps: QPS, kubeApiMaxInFlight: MAX_IN_FLIGHT, listPageSize: LIST_PAGE_SIZE, controllerArgs: CONTROLLER_ARGS, controllerNodeArgs: CONTROLLER_NODE_ARGS, simNodeArgs: SIM_NODE_ARGS, syncOnly: SYNC_ONLY, podVaSources: POD_VA_SOURCES, ...(dir ? { profileDir: dir } : {}) });
  } catch (err) {
    console.error(`run at ${nodes} nodes failed: ${err instanceof Error ? err.message : String(err)}`);
    run = { nodes, pods: nodes * PODS_PER_NODE, failed: err instanceof Error ? err.message.slice(0, 2000) : String(err) };
  }
  run.date = new Date().toISOString();
  run.revision = rev;
  runs.push(run);
  runs.sort((a, b) => a.nodes - b.nodes);
  save(runs); // after every size, so a later failure keeps what was measured
  const keys = ['converge_s', 'controller_cpu_s', 'peak_rss_mb', 'ingest_events_per_s', 'json_parse_events_per_s', 'ingest_ratio', 'sync_objects_per_s', 'sync_ratio', 'api_writes_per_s', 'loop_p50_ms', 'loop_p99_ms', 'pod_to_va_p50_ms', 'pod_to_va_p99_ms'];
  console.log(keys.map((k) => `${k}=${fmt(run[k])}`).join('  '));
  const tail = run.pod_to_va_tail as { over: number; in_worst_buckets: number; worst_at_s: number[] } | undefined;
  const gc = run.steady_controller_gc as Record<string, { count: number; total_ms: number | null; over_100ms: number }> | undefined;
  if (tail && gc) {
    console.log(`  tail: ${tail.over} new-pod volumes over 200 ms, ${Math.round(tail.in_worst_buckets * 100)}% of them in the 3 worst seconds (at ${tail.worst_at_s.join(', ')} s); controller GC in the window: ${gc.major.count} full (${gc.major.total_ms} ms), ${gc.minor.count} scavenges (${gc.minor.total_ms} ms), pauses ≥ 100 ms: ${gc.major.over_100ms + gc.minor.over_100ms + gc.incremental.over_100ms}`);
  }
  const simGc = run.steady_sim_gc as (GcPauseStats & { long_pauses: Array<{ at_s: number; ms: number; kind: string }> }) | null | undefined;
  if (simGc) {
    const long = simGc.long_pauses.map((p) => `${p.kind} ${Math.round(p.ms)} ms at ${p.at_s} s`).join(', ');
    console.log(`  simulator GC in the window: ${simGc.major.count} full (${simGc.major.total_ms} ms), ${simGc.minor.count} scavenges (${simGc.minor.total_ms} ms); pauses ≥ 50 ms: ${long || 'none'}`);
  }
}
