// End-to-end benchmark: `npm run bench:e2e` [-- --nodes 10000,50000 --pods-per-node 10
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
import { commandLine } from './lib/args.js';
import { writeE2eCharts, type ChartRun } from './lib/e2e-charts.js';
import { runE2e, type E2eRun } from './lib/e2e-run.js';
import { SIMULATOR_CLIENT_SIZING } from '../src/sim/server/client-sizing.js';
import type { GcPauseStats } from './lib/gc-pauses.js';

const cli = commandLine('bench:e2e', {
  nodes: { type: 'string', default: '10000,50000,100000', arg: 'N,N…', help: 'fleet sizes, one run each' },
  'pods-per-node': { type: 'string', default: '10', arg: 'N', help: 'pods (each with its PVC and PV) per node' },
  churn: { type: 'string', default: '1000', arg: 'PER_S', help: 'pod changes/s in the steady phase' },
  steady: { type: 'string', default: '60', arg: 'S', help: 'seconds of churn' },
  timeout: { type: 'string', default: '900', arg: 'S', help: 'convergence timeout' },
  profile: { type: 'string', arg: 'DIR', help: 'V8 CPU profiles of the controller and the simulator' },
  'kube-api-qps': { type: 'string', default: String(SIMULATOR_CLIENT_SIZING.kubeApiQps), arg: 'N', help: "the controller's --kube-api-qps and burst" },
  'kube-api-max-in-flight': { type: 'string', default: String(SIMULATOR_CLIENT_SIZING.kubeApiMaxInFlight), arg: 'N', help: "the controller's --kube-api-max-in-flight" },
  'list-page-size': { type: 'string', default: String(SIMULATOR_CLIENT_SIZING.listPageSize), arg: 'N', help: "the controller's --list-page-size" },
  'controller-args': { type: 'string', default: '', arg: '"ARGS"', help: 'more `fleet-attach run` flags' },
  'controller-node-args': { type: 'string', default: '', arg: '"ARGS"', help: 'Node/V8 flags of the controller process' },
  'sim-node-args': { type: 'string', default: '', arg: '"ARGS"', help: 'Node/V8 flags of the simulator process' },
  'sync-only': { type: 'boolean', help: 'the initial sync alone (needs --out)' },
  'pod-va-source': { type: 'string', default: 'commit', arg: 'commit|watch|commit,watch', help: 'where new-pod latency is taken' },
  out: { type: 'string', arg: 'FILE', help: 'results file; keeps an experiment out of bench/results/e2e.json and the charts' },
  'charts-only': { type: 'boolean', help: 'redraw the charts from bench/results/e2e.json, measure nothing' },
});
const arg = (name: 'profile' | 'out') => cli.values[name] ?? '';
const words = (name: 'controller-args' | 'controller-node-args' | 'sim-node-args') => cli.values[name].split(/\s+/).filter(Boolean);

const SIZES = cli.ints('nodes');
const PODS_PER_NODE = cli.int('pods-per-node');
const CHURN = cli.num('churn');
const STEADY_S = cli.num('steady');
const TIMEOUT_S = cli.num('timeout');
const PROFILE_DIR = arg('profile');
const CONTROLLER_ARGS = words('controller-args');
// Flags the bench sets and records itself: repeated in --controller-args, the later one would
// win unrecorded.
const OWN_FLAGS: Record<string, string> = { '--kube-api-qps': '--kube-api-qps', '--kube-api-burst': '--kube-api-qps', '--kube-api-max-in-flight': '--kube-api-max-in-flight', '--list-page-size': '--list-page-size', '--kubeconfig': '', '--leader-elect': '', '--listen': '' };
for (const a of CONTROLLER_ARGS) {
  const flag = a.split('=')[0];
  if (flag in OWN_FLAGS) cli.fail(`--controller-args: ${flag} is set by the bench${OWN_FLAGS[flag] ? `; pass ${OWN_FLAGS[flag]} to the bench instead` : ''}`);
}
const CONTROLLER_NODE_ARGS = words('controller-node-args');
const SIM_NODE_ARGS = words('sim-node-args');
// The initial sync alone (its rates and their JSON.parse baseline): an experiment, so never the published results.
const SYNC_ONLY = cli.values['sync-only'];
// The controller's client limits default to the simulator's sizing (client-sizing.ts says why).
const QPS = cli.num('kube-api-qps');
const MAX_IN_FLIGHT = cli.num('kube-api-max-in-flight');
const LIST_PAGE_SIZE = cli.int('list-page-size');
// Where new-pod latency is taken; several (`commit,watch`) time one window both ways, the first reported as the run's.
const POD_VA_SOURCES = cli.values['pod-va-source'].split(',').map((s) => {
  if (s !== 'commit' && s !== 'watch') cli.fail(`--pod-va-source: expected commit, watch or both comma-separated, got ${JSON.stringify(s)}`);
  return s as 'commit' | 'watch';
});

const resultsDir = new URL('results/', import.meta.url);
// `--out FILE` keeps an experiment (other qps, churn…) out of the published results and charts.
const OUT = arg('out');
if (SYNC_ONLY && !OUT) cli.fail('--sync-only measures part of a run: give --out FILE');
const resultsFile = OUT ? new URL(OUT, `file://${process.cwd()}/`) : new URL('e2e.json', resultsDir);
mkdirSync(resultsDir, { recursive: true });

function previousRuns(): E2eRun[] {
  if (!existsSync(resultsFile)) return [];
  try {
    const prev = JSON.parse(readFileSync(resultsFile, 'utf8')) as { runs?: E2eRun[] };
    // Runs recorded the measured commit once; results carry no commit ids now.
    return Array.isArray(prev.runs) ? prev.runs.map(({ revision: _r, ...run }) => run as E2eRun) : [];
  } catch {
    return [];
  }
}

/** Whether the controller's sources differed from the checked-out commit (a shared working tree); null without git. */
function sourcesModified(): boolean | null {
  try {
    return execFileSync('git', ['status', '--porcelain', '--', 'src', 'assembly', 'bin'], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8' }).trim() !== '';
  } catch {
    return null;
  }
}

const fmt = (v: unknown) => (v === null || v === undefined ? '—' : String(v));

function save(runs: E2eRun[]): void {
  const out = {
    bench: 'e2e',
    command: cli.command,
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

if (cli.values['charts-only']) {
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
  const modified = sourcesModified();
  let run: E2eRun;
  try {
    run = await runE2e({ nodes, podsPerNode: PODS_PER_NODE, churn: CHURN, steadyS: STEADY_S, convergeTimeoutS: TIMEOUT_S, seed: 1, kubeApiQps: QPS, kubeApiMaxInFlight: MAX_IN_FLIGHT, listPageSize: LIST_PAGE_SIZE, controllerArgs: CONTROLLER_ARGS, controllerNodeArgs: CONTROLLER_NODE_ARGS, simNodeArgs: SIM_NODE_ARGS, syncOnly: SYNC_ONLY, podVaSources: POD_VA_SOURCES, ...(dir ? { profileDir: dir } : {}) });
  } catch (err) {
    console.error(`run at ${nodes} nodes failed: ${err instanceof Error ? err.message : String(err)}`);
    run = { nodes, pods: nodes * PODS_PER_NODE, failed: err instanceof Error ? err.message.slice(0, 2000) : String(err) };
  }
  run.date = new Date().toISOString();
  run.command = `npm run bench:e2e -- --nodes ${nodes}`;
  run.sources_modified = modified;
  runs.push(run);
  runs.sort((a, b) => a.nodes - b.nodes);
  save(runs); // after every size, so a later failure keeps what was measured
  const keys = ['converge_s', 'controller_cpu_s', 'peak_rss_mb', 'ingest_events_per_s', 'json_parse_events_per_s', 'ingest_ratio', 'sync_objects_per_s', 'sync_ratio', 'api_writes_per_s', 'loop_p50_ms', 'loop_p99_ms', 'pod_to_va_p50_ms', 'pod_to_va_p99_ms', 'controller_pod_to_attach_start_p99_ms', 'controller_major_gc_max_ms', 'sim_major_gc_max_ms'];
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
