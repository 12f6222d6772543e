// Scale-out chaos run and bench: `npm run bench:scale-out` [-- --seed N --quick --out FILE
// --skip mutation,throughput | --throughput-only | --mutation-only | --chart-only].
//
// The simulator runs in this process (fleet, kubelets, CSI attacher, committed-write log); each
// controller replica is its own OS process (`fleet-attach run --sharding`, its own simulator
// user). An independent checker (bench/lib/scale-out/checker.ts) judges every committed change
// against I1–I6 (docs/scale-out.md, "Chaos run and bench"):
//   main run        ≥ 50 seeded faults (SIGKILL + replacement, SIGSTOP, black-hole/deny
//                   partitions, a paused partitioned "zombie", watch lag, scale up/down) under a
//                   workload aimed at the hazards, then a quiet period in which all converges;
//   mutation runs   the same seed with one guard switched off each (FLEET_ATTACH_UNSAFE_SHARD_GUARDS),
//                   each with the workload and faults that expose its absence: must show violations;
//   throughput      N = 1, 2, 3 replicas on a write-bound setup (every request delayed, few in flight).
// Takeover after SIGKILL and graceful hand-over are timed from the bucket Leases as committed.
// Results: bench/results/scale-out.json and bench/results/scale-out.svg; the write log of a
// violating run is kept under /tmp (its path is printed and recorded).
import './lib/scale-out/quiet-logs.js';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandLine } from './lib/args.js';
import { runMain } from './lib/children.js';
import { percentile } from './lib/stats.js';
import { runChaos, type ChaosRunOptions, type ChaosRunResult, type FleetShape } from './lib/scale-out/chaos-run.js';
import { faultSchedule, MAIN_MIX, type Fault } from './lib/scale-out/fault-schedule.js';
import { scaleOutChart } from './lib/scale-out/scale-out-chart.js';
import { runThroughput, type ThroughputResult } from './lib/scale-out/throughput-run.js';

const cli = commandLine('bench:scale-out', {
  seed: { type: 'string', default: '', arg: 'N', help: 'seed of the fleet, the workload and the faults (default: random, printed)' },
  quick: { type: 'boolean', help: 'a short smoke: few faults, N ≤ 2, no mutation runs' },
  skip: { type: 'string', default: '', arg: 'mutation,throughput', help: 'parts to leave out' },
  'throughput-only': { type: 'boolean', help: 'measure throughput only, replacing it (and the chart) in the existing results file' },
  'mutation-only': { type: 'boolean', help: 'run the mutation runs only, replacing them in the existing results file' },
  'chart-only': { type: 'boolean', help: 'redraw the chart from the existing results file, measure nothing' },
  out: { type: 'string', default: 'bench/results/scale-out.json', arg: 'FILE', help: 'results file (the chart goes beside it, .svg)' },
});

const TIMINGS = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500, graceMs: 1000 };
const BUCKETS = 64;
// Write-bound: every replica request delayed by the simulator, few on the wire per replica, so
// that the fleet's own pace (kubelets, the attacher's 10 workers) is not what is measured.
const THROUGHPUT_DELAY_MS = 50;
const THROUGHPUT_IN_FLIGHT = 2;
// The production Lease timings: a takeover is not what these runs measure, and with the test
// timings one failed renewal (a connection closed under the delayed traffic) past the 2 s renew
// deadline ended a replica mid-burst.
const THROUGHPUT_TIMINGS = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2000, graceMs: 5000 };
const STABLE_S = 10; // the controller's default stable time: no flag sets it
const quick = cli.values.quick;
const skip = new Set(cli.values.skip.split(',').filter(Boolean));
const seed = cli.values.seed ? cli.int('seed') : 1 + Math.floor(Math.random() * 1e6);
const log = (line: string) => console.log(line);
const THROUGHPUT_SETUP = { nodes: 400, pods_per_node: 2, moves: quick ? 100 : 200, request_delay_ms: THROUGHPUT_DELAY_MS, max_in_flight: THROUGHPUT_IN_FLIGHT, lease_timings_ms: THROUGHPUT_TIMINGS };

const FLEET: FleetShape = {
  nodes: quick ? 200 : 500, podsPerNode: 2,
  attachLatencyMs: 100, detachLatencyMs: 150, mountLatencyMs: 50, unmountLatencyMs: 50,
  nodeFailureRate: quick ? 0.05 : 0.03, outOfServiceFraction: 0.5, nodeRecoveryMs: 20_000,
};

const schedule = (mix: Partial<Record<Fault['kind'], number>>, initialReplicas: number) =>
  faultSchedule({ seed, mix, initialReplicas, minReplicas: 2, maxReplicas: 4, leaseDurationMs: TIMINGS.leaseDurationMs });

function common(label: string, scratch: string): Pick<ChaosRunOptions, 'label' | 'seed' | 'buckets' | 'timings' | 'scratchDir' | 'log'> {
  return { label, seed, buckets: BUCKETS, timings: TIMINGS, scratchDir: join(scratch, label), log };
}

/** Each guard's run: the workload and faults that its absence shows under. */
function mutationRuns(scratch: string): ChaosRunOptions[] {
  const base = { ...FLEET, nodeFailureRate: 0 };
  return [
    { ...common('mutation-volume-lock', scratch), guardsOff: ['volume-lock'], fleet: { ...base, detachLatencyMs: 2000 }, initialReplicas: 2, faults: [], workload: { rate: 3, mix: { race: 3, move: 2, recreate: 0 } }, convergeTimeoutMs: 0, stopOnViolation: true, tailMs: 90_000 },
    { ...common('mutation-status-cas', scratch), guardsOff: ['status-cas'], fleet: base, initialReplicas: 3, faults: schedule({ zombie: 4 }, 3), workload: { rate: 6, mix: { move: 3, race: 0, recreate: 1 } }, convergeTimeoutMs: 0, stopOnViolation: true, tailMs: 20_000 },
    // The Node resourceVersion test of the status write refuses these stale detaches first (the
    // kubelet's volumesInUse write changes the Node): both off, the live read is what is left.
    { ...common('mutation-live-in-use', scratch), guardsOff: ['live-in-use', 'status-version'], fleet: base, initialReplicas: 2, faults: [], lagAllMs: 1500, workload: { rate: 4, mix: { recreate: 4, move: 1, race: 0 } }, convergeTimeoutMs: 0, stopOnViolation: true, tailMs: 90_000 },
    { ...common('mutation-ownership', scratch), guardsOff: ['ownership'], fleet: base, initialReplicas: 2, faults: [], workload: { rate: 3, mix: { move: 2, recreate: 1, race: 0 } }, convergeTimeoutMs: 0, stopOnViolation: true, tailMs: 60_000 },
  ];
}

async function runMutations(scratch: string): Promise<ChaosRunResult[]> {
  const out: ChaosRunResult[] = [];
  for (const m of mutationRuns(scratch)) {
    log(`${m.label}:`);
    const r = await runChaos(m);
    log(`${m.label}: ${r.violations.length} violations (${Object.entries(r.violation_counts).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'})`);
    out.push(r);
  }
  return out;
}

/** A mutation run as the results file has it: `guard` is the guard it is about, `guards_off` all it switched off. */
const mutationResult = (m: ChaosRunResult) => ({
  guard: m.guards_off[0], guards_off: m.guards_off, violations: m.violations.slice(0, 10), violation_counts: m.violation_counts, faults: m.faults, lag_supported: m.lag_supported,
  refused_writes_by_replica: m.refused_writes_by_replica, unexpected_exits: m.unexpected_exits.length, write_log_file: m.write_log_file, duration_s: m.duration_s,
  ...(m.unexpected_exits.length ? { first_exit_tail: m.unexpected_exits[0]!.tail.slice(-600) } : {}),
});

const r2 = (v: number | undefined) => (v === undefined ? null : Math.round(v * 100) / 100);

async function measureThroughput(scratch: string): Promise<Record<string, ThroughputResult>> {
  const throughput: Record<string, ThroughputResult> = {};
  for (const n of quick ? [1, 2] : [1, 2, 3]) {
    throughput[String(n)] = await runThroughput({ replicas: n, seed, fleet: { ...FLEET, nodes: 400, detachLatencyMs: 100 }, buckets: BUCKETS, timings: THROUGHPUT_TIMINGS, moves: quick ? 100 : 200, delayMs: THROUGHPUT_DELAY_MS, maxInFlight: THROUGHPUT_IN_FLIGHT, scratchDir: join(scratch, `throughput-${n}`), log });
  }
  return throughput;
}

const outUrl = new URL(cli.values.out, `file://${process.cwd()}/`);
const svgUrl = new URL(outUrl.pathname.replace(/\.json$/, '') + '.svg', 'file://');
const chartOf = (throughput: Record<string, ThroughputResult>, claims: readonly number[], budget: number, date: string) => scaleOutChart({
  throughput: Object.values(throughput).map((t) => ({ replicas: t.replicas, ops_per_s: t.ops_per_s })),
  takeoversS: claims, budgetS: budget,
  subtitle: `write-bound: ${THROUGHPUT_DELAY_MS} ms per request, ${THROUGHPUT_IN_FLIGHT} in flight per replica; 2 cores shared by all; seed ${seed}, ${date.slice(0, 10)}`,
});

runMain(async () => {
  const t0 = performance.now();
  const scratch = mkdtempSync(join(tmpdir(), 'scale-out-'));
  if (cli.values['chart-only']) {
    const prev = JSON.parse(readFileSync(outUrl, 'utf8')) as { date: string; throughput_date?: string; takeover_budget_s: number; main_run: { takeovers: Array<{ kind: string; claimS: number | null }> }; throughput: Record<string, ThroughputResult> };
    const claims = prev.main_run.takeovers.filter((t) => t.kind === 'kill').flatMap((t) => (t.claimS === null ? [] : [t.claimS]));
    writeFileSync(svgUrl, chartOf(prev.throughput, claims, prev.takeover_budget_s, prev.throughput_date ?? prev.date));
    log(`wrote ${svgUrl.pathname}`);
    return;
  }
  if (cli.values['mutation-only']) {
    const prev = JSON.parse(readFileSync(outUrl, 'utf8')) as { seed: number };
    if (prev.seed !== seed) cli.fail(`--mutation-only: the results file is of seed ${prev.seed}; give --seed ${prev.seed}`);
    const mutations = await runMutations(scratch);
    writeFileSync(outUrl, JSON.stringify({ ...prev, mutation_runs: mutations.map(mutationResult), mutation_date: new Date().toISOString() }, null, 2) + '\n');
    log(`wrote ${outUrl.pathname} (mutation runs)`);
    return;
  }
  if (cli.values['throughput-only']) {
    const prev = JSON.parse(readFileSync(outUrl, 'utf8')) as { seed: number; takeover_budget_s: number; main_run: { takeovers: Array<{ kind: string; claimS: number | null }> }; throughput: unknown; throughput_date?: string };
    if (prev.seed !== seed) cli.fail(`--throughput-only: the results file is of seed ${prev.seed}; give --seed ${prev.seed}`);
    const throughput = await measureThroughput(scratch);
    const date = new Date().toISOString();
    writeFileSync(outUrl, JSON.stringify({ ...prev, throughput, throughput_setup: THROUGHPUT_SETUP, throughput_date: date }, null, 2) + '\n');
    const claims = prev.main_run.takeovers.filter((t) => t.kind === 'kill').flatMap((t) => (t.claimS === null ? [] : [t.claimS]));
    writeFileSync(svgUrl, chartOf(throughput, claims, prev.takeover_budget_s, date));
    log(`wrote ${outUrl.pathname} (throughput) and ${svgUrl.pathname}`);
    return;
  }
  log(`bench:scale-out seed ${seed}${quick ? ' (quick)' : ''}; scratch ${scratch}`);
  const mainFaults = schedule(quick ? { kill: 5, pause: 1, zombie: 1, partition: 1, lag: 1, 'scale-up': 1, 'scale-down': 1 } : MAIN_MIX, 3);
  log(`main run: ${mainFaults.length} faults over ~${Math.round((mainFaults.at(-1)?.atMs ?? 0) / 1000)} s, ${FLEET.nodes} nodes × ${FLEET.podsPerNode} pods, ${BUCKETS} buckets`);
  const main = await runChaos({
    ...common('main', scratch), guardsOff: [], fleet: FLEET, initialReplicas: 3, faults: mainFaults,
    workload: { rate: 3, mix: { move: 5, race: 1.5, recreate: 3.5 } }, convergeTimeoutMs: 120_000, tailMs: 5000,
  });
  log(`main run: ${main.violations.length} violations, ${main.faults} faults, ${main.duration_s} s`);

  const mutations = quick || skip.has('mutation') ? [] : await runMutations(scratch);

  const throughput = skip.has('throughput') ? {} : await measureThroughput(scratch);

  const kills = main.takeovers.filter((t) => t.kind === 'kill');
  const claims = kills.flatMap((t) => (t.claimS === null ? [] : [t.claimS]));
  const firstWrites = kills.flatMap((t) => (t.firstWriteS === null ? [] : [t.firstWriteS]));
  const handovers = main.takeovers.filter((t) => t.kind === 'scale-down').flatMap((t) => (t.claimS === null ? [] : [t.claimS]));
  const joins = main.joins.flatMap((j) => (j.handoverS === null ? [] : [j.handoverS]));
  const joinStarts = main.joins.flatMap((j) => (j.shareS === null ? [] : [j.shareS]));
  const budget = (TIMINGS.leaseDurationMs + TIMINGS.graceMs) / 1000 + 1;
  const date = new Date().toISOString();
  const results = {
    date,
    command: cli.command,
    seed,
    quick,
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '', node: process.version, loadavg_at_end: loadavg().map((l) => Math.round(l * 100) / 100) },
    fleet: FLEET,
    buckets: BUCKETS,
    lease_duration_s: TIMINGS.leaseDurationMs / 1000,
    renew_deadline_s: TIMINGS.renewDeadlineMs / 1000,
    retry_period_s: TIMINGS.retryPeriodMs / 1000,
    grace_s: TIMINGS.graceMs / 1000,
    stable_s: STABLE_S,
    faults: main.faults,
    violations: main.violations,
    violation_counts: main.violation_counts,
    checked: main.checked,
    forced_detaches: main.forced_detaches,
    refused_writes_by_replica: main.refused_writes_by_replica,
    convergence: main.convergence,
    takeover_kills: claims.length,
    takeover_p50_s: r2(percentile(claims, 0.5)),
    takeover_p99_s: r2(percentile(claims, 0.99)),
    takeover_max_s: r2(claims.length ? Math.max(...claims) : undefined),
    takeover_budget_s: budget,
    takeover_pass: claims.length >= 20 && (percentile(claims, 0.99) ?? Infinity) <= budget,
    first_write_after_kill_p50_s: r2(percentile(firstWrites, 0.5)),
    first_write_after_kill_p99_s: r2(percentile(firstWrites, 0.99)),
    handover_scale_down_s: { n: handovers.length, p50: r2(percentile(handovers, 0.5)), p99: r2(percentile(handovers, 0.99)), max: r2(handovers.length ? Math.max(...handovers) : undefined) },
    handover_scale_up_s: { n: joins.length, p50: r2(percentile(joins, 0.5)), p99: r2(percentile(joins, 0.99)), max: r2(joins.length ? Math.max(...joins) : undefined), note: 'a joining replica\'s first bucket → its whole rendezvous share (the others release, it claims)' },
    join_to_share_s: { n: joinStarts.length, p50: r2(percentile(joinStarts, 0.5)), p99: r2(percentile(joinStarts, 0.99)), note: `process start → its whole share: start-up, caches, and the controller's stable time (${STABLE_S} s, no flag sets it)` },
    throughput,
    throughput_setup: THROUGHPUT_SETUP,
    mutation_runs: mutations.map(mutationResult),
    main_run: {
      fault_log: main.fault_log, takeovers: main.takeovers, joins: main.joins, workload: main.workload, replicas_started: main.replicas_started,
      unexpected_exits: main.unexpected_exits.map((e) => ({ id: e.id, code: e.code, tail: e.tail.slice(-400) })), lag_supported: main.lag_supported, write_log_file: main.write_log_file, duration_s: main.duration_s,
    },
    notes: [
      `Two cores run the simulator, the fleet actors and every replica: CPU-bound scaling cannot show here; the throughput runs are write-bound (every replica request delayed ${THROUGHPUT_DELAY_MS} ms by the simulator, at most ${THROUGHPUT_IN_FLIGHT} requests in flight per replica (--kube-api-max-in-flight)), and CPU per replica is reported beside them.`,
      'I2 judges node status writes and VolumeAttachment creates/deletes by replicas against the bucket Lease holder at that resourceVersion; I3/I4 exempt forced detaches (out-of-service taint, NotReady past --max-wait-for-unmount) and count them.',
    ],
    wall_s: Math.round(performance.now() - t0) / 1000,
  };
  writeFileSync(outUrl, JSON.stringify(results, null, 2) + '\n');
  writeFileSync(svgUrl, chartOf(throughput, claims, budget, date));
  log(`wrote ${outUrl.pathname} and ${svgUrl.pathname}`);
  log(`violations ${main.violations.length}; takeover p50 ${results.takeover_p50_s} s p99 ${results.takeover_p99_s} s over ${claims.length} kills (budget ${budget} s); mutation runs: ${mutations.map((m) => `${m.guards_off[0]} ${m.violations.length}`).join(', ') || 'none'}; wall ${results.wall_s} s`);
});
