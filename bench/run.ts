/**
 * The bench harness: `npm run bench` (the quick tier) and `npm run bench:full`.
 *
 *   node --import tsx bench/run.ts [--tier quick|full] [--only NAME,NAME…] [--list] [--report-only]
 *
 * Runs each bench of the tier as a child process, one after the other, its output passed
 * through; a bench that fails (or outlives its time limit) is recorded and the next one runs.
 * Then it writes bench/results/run.json (what ran, how long, what failed), the SVG charts of the
 * results (bench/lib/summary-charts.ts; the end-to-end bench draws its own) and
 * bench/results/summary.md (scripts/bench-table.js --summary, the code that also writes the
 * README's table). Exits 1 if any bench failed.
 *
 * quick (≤ 15 minutes on a 2-core machine): the plan kernel at 1k and 10k nodes (fewer plans),
 * list reading (20k pods, 3 rounds), the simulator at 10k, the API calls, the inspection API at
 * 10k (shorter sweeps, paced minute and loop windows), end to end at 10k (the full churn minute). full: every bench at its default sizes: the kernel up to
 * 100k, the simulator at 10k and 100k, the controller's heap, the inspection API at 10k and 100k
 * and its allocation per request, the dashboard's budgets at 100k, end to end at 10k, 50k and 100k, and the peer comparison with
 * upstream kube-controller-manager (simulator at 10k and 50k, real kube-apiserver at 1k).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { commandLine } from './lib/args.js';
import { writeSummaryCharts } from './lib/summary-charts.js';

interface Step {
  name: string;
  /** The npm script a user runs for the same measurement (with `args`). */
  script: string;
  /** The bench file under bench/, run with `node --import tsx`; none: `node scripts/ensure-build.js`. */
  file?: string;
  args: string[];
  /** Killed (SIGTERM, then SIGKILL) and failed after this long. */
  limitS: number;
}

const bench = (name: string, script: string, file: string, args: string[], limitS: number): Step => ({ name, script, file, args, limitS });
const BUILD: Step = { name: 'build', script: 'build', args: [], limitS: 600 };

const TIERS: Record<'quick' | 'full', Step[]> = {
  quick: [
    BUILD,
    bench('kernel', 'bench:kernel', 'kernel.bench.ts', ['--sizes', '1000,10000', '--quick'], 600),
    bench('list-read', 'bench:list-read', 'list-read.bench.ts', ['--pods', '20000', '--rounds', '3'], 600),
    bench('sim', 'bench:sim', 'sim.bench.ts', ['--nodes', '10000'], 600),
    bench('api', 'bench:api', 'api-writes.bench.ts', [], 600),
    bench('http', 'bench:http', 'http.bench.ts', ['--nodes', '10000', '--duration', '3', '--reps', '2', '--paced', '20', '--window', '5', '--rounds', '3', '--settle', '10'], 1200),
    bench('e2e', 'bench:e2e', 'e2e.bench.ts', ['--nodes', '10000'], 1200),
  ],
  full: [
    BUILD,
    bench('kernel', 'bench:kernel', 'kernel.bench.ts', [], 3600),
    bench('list-read', 'bench:list-read', 'list-read.bench.ts', [], 1200),
    bench('sim', 'bench:sim', 'sim.bench.ts', [], 3600),
    bench('api', 'bench:api', 'api-writes.bench.ts', [], 1200),
    bench('heap', 'bench:heap', 'heap.bench.ts', [], 3600),
    bench('http', 'bench:http', 'http.bench.ts', [], 3 * 3600),
    bench('http-alloc', 'bench:http', 'http.bench.ts', ['--alloc'], 1200),
    bench('dashboard', 'bench:dashboard', 'dashboard.bench.ts', [], 2 * 3600),
    bench('e2e', 'bench:e2e', 'e2e.bench.ts', [], 4 * 3600),
    bench('peer', 'bench:peer', 'peer.bench.ts', [], 8 * 3600),
  ],
};

const cli = commandLine('bench', {
  tier: { type: 'string', default: 'quick', arg: 'quick|full', help: 'which benches at which sizes' },
  only: { type: 'string', arg: 'NAME,NAME…', help: "run only these steps of the tier (see --list); the summary still covers every result" },
  list: { type: 'boolean', help: 'print the steps of the tier and exit' },
  'report-only': { type: 'boolean', help: 'run nothing: redraw the charts and rewrite summary.md from the results there' },
});
if (cli.values.tier !== 'quick' && cli.values.tier !== 'full') cli.fail(`--tier: quick or full, got ${JSON.stringify(cli.values.tier)}`);
const tier = cli.values.tier as 'quick' | 'full';
let steps = TIERS[tier];
if (cli.values.only !== undefined) {
  const only = cli.values.only.split(',');
  for (const n of only) if (!steps.some((s) => s.name === n)) cli.fail(`--only: no step ${n} in the ${tier} tier (${steps.map((s) => s.name).join(', ')})`);
  steps = steps.filter((s) => only.includes(s.name));
}

const root = fileURLToPath(new URL('..', import.meta.url));
const quote = (a: string) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a}'`);
const npmCommand = (s: Step) => (s.file ? `npm run ${s.script}${s.args.length ? ` -- ${s.args.map(quote).join(' ')}` : ''}` : 'node scripts/ensure-build.js');
const argv = (s: Step) => (s.file ? ['--import', 'tsx', `bench/${s.file}`, ...s.args] : ['scripts/ensure-build.js']);

if (cli.values.list) {
  for (const s of steps) console.log(`${s.name.padEnd(11)} ${npmCommand(s)}   (limit ${s.limitS / 60} min)`);
  process.exit(0);
}

const clock = (s: number) => `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;

interface StepResult { name: string; command: string; status: 'ok' | 'failed' | 'timed out'; exit_code: number | null; signal: string | null; seconds: number }

let current: ChildProcess | undefined;
let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    stopping = true;
    console.error(`\nbench: ${sig}, stopping the running bench`);
    current?.kill('SIGTERM');
    setTimeout(() => current?.kill('SIGKILL'), 20_000).unref();
  });
}

function runStep(s: Step): Promise<Omit<StepResult, 'name' | 'command'>> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, argv(s), { cwd: root, stdio: 'inherit' });
    current = child;
    let timedOut = false;
    const limit = setTimeout(() => {
      timedOut = true;
      console.error(`\nbench: ${s.name} is past its limit of ${clock(s.limitS)}: stopping it`);
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
    }, s.limitS * 1000);
    const done = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(limit);
      current = undefined;
      const seconds = Math.round((performance.now() - t0) / 100) / 10;
      resolve({ status: timedOut ? 'timed out' : code === 0 ? 'ok' : 'failed', exit_code: code, signal, seconds });
    };
    child.on('exit', done);
    child.on('error', (err) => {
      console.error(`bench: ${s.name}: ${err.message}`);
      done(null, null);
    });
  });
}

if (cli.values['report-only']) steps = [];
const startedAt = new Date();
const loadStart = loadavg().map((l) => Math.round(l * 10) / 10);
const t0 = performance.now();
const results: StepResult[] = [];
console.log(`bench: ${tier} tier, ${steps.length} steps: ${steps.map((s) => s.name).join(', ')}`);
for (const [i, s] of steps.entries()) {
  if (stopping) break;
  const elapsed = (performance.now() - t0) / 1000;
  console.log(`\n━━ [${i + 1}/${steps.length}] ${s.name}: ${npmCommand(s)}  (${clock(elapsed)} into the run, load average ${loadavg()[0]!.toFixed(1)})`);
  const r = await runStep(s);
  results.push({ name: s.name, command: npmCommand(s), ...r });
  console.log(`━━ ${s.name}: ${r.status}${r.status === 'ok' ? '' : ` (exit ${r.exit_code ?? r.signal})`} in ${clock(r.seconds)}`);
}
const wallS = Math.round((performance.now() - t0) / 100) / 10;

const resultsDir = new URL('results/', import.meta.url);
mkdirSync(resultsDir, { recursive: true });
const run = {
  tier,
  command: cli.values.only === undefined ? (tier === 'quick' ? 'npm run bench' : 'npm run bench:full') : cli.command,
  started_at: startedAt.toISOString(),
  wall_s: wallS,
  // The machine is shared: how busy it was says how far the figures are from a quiet one's.
  loadavg_start: loadStart,
  loadavg_end: loadavg().map((l) => Math.round(l * 10) / 10),
  steps: results,
};
if (!cli.values['report-only']) writeFileSync(new URL('run.json', resultsDir), `${JSON.stringify(run, null, 2)}\n`);

let failed = results.filter((r) => r.status !== 'ok').map((r) => r.name);
try {
  const charts = writeSummaryCharts(resultsDir);
  console.log(`\nwrote ${charts.map((c) => `bench/results/${c}`).join(', ')}`);
} catch (err) {
  console.error(`bench: the charts failed: ${err instanceof Error ? err.stack : String(err)}`);
  failed = [...failed, 'charts'];
}
// The summary comes from the code that writes the README's table (plain JS, run as npm runs it).
const table = spawnSync(process.execPath, ['scripts/bench-table.js', '--summary'], { cwd: root, stdio: 'inherit' });
if (table.status !== 0) failed = [...failed, 'summary'];
console.log(`\n${'step'.padEnd(11)} ${'status'.padEnd(10)} time`);
for (const r of results) console.log(`${r.name.padEnd(11)} ${r.status.padEnd(10)} ${clock(r.seconds)}`);
console.log(`${'total'.padEnd(11)} ${''.padEnd(10)} ${clock(wallS)}`);
if (failed.length) {
  console.error(`\nbench: failed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
