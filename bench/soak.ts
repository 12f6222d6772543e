/**
 * `npm run soak -- --minutes N [--nodes 5000] [--pods-per-node 10] [--faults SPEC] [--seed S] [--out FILE]`
 *
 * The controller under faults, restarts and churn, judged by the invariant checker:
 *  1. the simulator in-process (attacher, kubelets, fault front and injector, faults off) and the
 *     invariant checker on its store;
 *  2. `fleet-attach run` as a child process (bin/fleet-attach.js, the built dist/), leader
 *     election off; wait until every desired pair is attached and reported;
 *  3. N minutes of every fault kind plus churn, the controller SIGKILLed and restarted at random
 *     times (at least twice);
 *  4. faults and churn stop; wait for convergence (every desired pair attached and reported,
 *     nothing stray), bounded by `--converge-timeout` (default 3m);
 *  5. writes the report (default bench/results/soak.json): minutes, nodes, faults per kind,
 *     restarts, operations (VolumeAttachment creations / deletion requests), violations,
 *     reconverge_s, RSS of the controller at the start and end of the fault phase (and of this
 *     process, which holds the simulator, as sim_rss_*).
 * `runSoak` is also what test/soak/soak.test.ts runs, smaller.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInvariantChecker, type Violation } from '../src/invariants/index.js';
import { createPrng } from '../src/sim/actors/index.js';
import { FAULT_KINDS, createFaultInjector, formatFaultSpec, parseFaultSpec, type FaultKind } from '../src/sim/faults/index.js';
import { startSimulator } from '../src/sim/server/index.js';
import { commandLine } from './lib/args.js';

export interface SoakOptions {
  /** Length of the fault phase. */
  minutes: number;
  nodes: number;
  podsPerNode: number;
  /** Fault spec for the fault phase (default: {@link defaultSoakFaults} for the fleet size). */
  faults?: string;
  /** Controller SIGKILL + restart count (at least 2). */
  restarts?: number;
  seed?: number;
  /** The controller's --max-wait-for-unmount, also the checker's (default 30 s). */
  maxWaitForUnmountMs?: number;
  /** Bound on reconvergence after faults stop; (e) violations beyond it (default 180 s). */
  convergeTimeoutMs?: number;
  /**
   * The controller's --dsw-list-pods-period and --dsw-populator-period (default 30s): upstream
   * re-processes pods on PVC events only (C8), so a pod whose PV arrives after it (separate
   * watches, reordered by drops and latency) waits for this full pass (every 3m upstream).
   */
  dswPeriod?: string;
  /** Initial convergence bound (default 10 min). */
  startTimeoutMs?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface SoakReport {
  minutes: number;
  nodes: number;
  pods_per_node: number;
  fault_spec: string;
  faults: Record<FaultKind, number>;
  churn: Record<string, number>;
  restarts: number;
  controller_crashes: number;
  operations: { attaches: number; detaches: number };
  violations: Violation[];
  violation_counts: Record<string, number>;
  initial_converge_s: number;
  reconverge_s: number | null;
  final: { desired: number; attached: number; pending: string[]; strayAttachments: number; strayReports: number };
  /** Controller RSS when the fault phase starts and when the soak ends (a later incarnation after restarts). */
  rss_start_mb: number | null;
  rss_end_mb: number | null;
  /** Every 15 s: seconds into the fault phase, controller pid and RSS, this process's RSS (the simulator). */
  rss_samples: Array<{ t_s: number; pid: number | undefined; controller_mb: number | null; sim_mb: number }>;
  sim_rss_start_mb: number;
  sim_rss_end_mb: number;
  watch_cut_offs: number;
  load_avg_1m: number;
  duration_s: number;
}

/**
 * Every fault kind, at rates scaled to the fleet. Per-request fractions shrink as lists grow:
 * one failed page fails a whole list (as client-go's reflector), so a list of 100 pages meets
 * ~0.2 / page-fraction faults per attempt.
 */
export function defaultSoakFaults(nodes: number, podsPerNode: number): string {
  const pages = Math.max(1, Math.ceil((nodes * podsPerNode) / 500));
  const request = round(Math.min(0.02, 0.2 / pages));
  const flap = Math.max(0.2, nodes / 1000);
  const del = Math.max(0.05, nodes / 50_000);
  const churn = Math.max(5, nodes / 250);
  return [
    'drop-watch=20s', `gone=${request}`, `error500=${request}:committed=0.5`, `error429=${request}:retry-after=1`, 'conflict-node-status=0.05',
    'latency=1ms..10ms', 'attach-fail=0.05', 'detach-fail=0.02', 'slow-detach=5s:p=0.2', `flap=${round(flap)}:down=3s`,
    `delete-node=${round(del)}:gc=2s:rejoin=15s`, `churn=${round(churn)}`,
  ].join(',');
}

const BIN = new URL('../bin/fleet-attach.js', import.meta.url).pathname;
const round = (x: number) => Math.round(x * 1000) / 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const log = o.log ?? (() => {});
  const t0 = Date.now();
  const seed = o.seed ?? 1;
  const prng = createPrng(seed).fork('soak');
  const maxWait = o.maxWaitForUnmountMs ?? 30_000;
  const faultSpec = formatFaultSpec(parseFaultSpec(o.faults ?? defaultSoakFaults(o.nodes, o.podsPerNode)));
  execFileSync(process.execPath, [new URL('../scripts/ensure-build.js', import.meta.url).pathname], { stdio: 'inherit' });

  const dir = mkdtempSync(join(tmpdir(), 'fa-soak-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const injector = createFaultInjector({ spec: 'none', seed });
  log(`generating ${o.nodes} nodes × ${o.podsPerNode} pods`);
  const sim = await startSimulator({ fleet: { nodes: o.nodes, podsPerNode: o.podsPerNode, seed }, faultInjection: injector, kubeconfigOut: kubeconfig });
  const checker = createInvariantChecker({ store: sim.store, maxWaitForUnmountMs: maxWait, convergenceBoundMs: o.convergeTimeoutMs ?? 180_000 });
  const controllerArgs = ['run', '--kubeconfig', kubeconfig, '--listen', '127.0.0.1:0', '--leader-elect=false', '--workers', '1',
    '--kube-api-qps', '5000', '--kube-api-burst', '5000', '--max-wait-for-unmount', `${maxWait}ms`,
    '--dsw-list-pods-period', o.dswPeriod ?? '30s', '--dsw-populator-period', o.dswPeriod ?? '30s'];
  const spawnedAt = Date.now();
  let ctl = startChild(controllerArgs);
  let crashes = 0;
  let expectingExit = false;
  const watchCrash = (c: Child) => void c.exited.then((code) => {
    if (expectingExit || c !== ctl) return;
    crashes++;
    log(`controller exited by itself (code ${code}); restarting\n${c.tail()}`);
    ctl = startChild(controllerArgs);
    watchCrash(ctl);
  });
  watchCrash(ctl);

  try {
    const startBound = Date.now() + (o.startTimeoutMs ?? 600_000);
    for (;;) {
      const c = checker.convergence();
      if (c.converged) break;
      if (Date.now() > startBound) throw new Error(`initial convergence not reached: ${JSON.stringify(c)}\n${ctl.tail()}`);
      await sleep(1000);
    }
    const initialConvergeS = (Date.now() - spawnedAt) / 1000;
    log(`converged at start after ${initialConvergeS.toFixed(1)} s; faults on: ${faultSpec}`);
    const rssStart = rssMb(ctl.pid);
    const simRssStart = mb(process.memoryUsage().rss);

    // Fault phase, with restarts at random times at least 10 s apart.
    const phaseMs = o.minutes * 60_000;
    const restarts = Math.max(2, o.restarts ?? Math.max(2, Math.round(o.minutes / 2)));
    const killAt = restartTimes(phaseMs, restarts, prng.float.bind(prng));
    injector.set(faultSpec);
    const phaseStart = Date.now();
    let done = 0;
    let lastLog = 0;
    const samples: SoakReport['rss_samples'] = [];
    while (Date.now() - phaseStart < phaseMs) {
      const elapsed = Date.now() - phaseStart;
      if (done < killAt.length && elapsed >= killAt[done]) {
        expectingExit = true;
        ctl.child.kill('SIGKILL');
        await ctl.exited;
        await sleep(prng.float() * 2000);
        ctl = startChild(controllerArgs);
        expectingExit = false;
        watchCrash(ctl);
        done++;
        log(`restart ${done}/${killAt.length} at ${(elapsed / 1000).toFixed(0)} s`);
      }
      if (Date.now() - lastLog > 15_000) {
        lastLog = Date.now();
        samples.push({ t_s: Math.round(elapsed / 1000), pid: ctl.pid, controller_mb: rssMb(ctl.pid), sim_mb: mb(process.memoryUsage().rss) });
        const c = checker.convergence();
        log(`${(elapsed / 1000).toFixed(0)} s: ${c.attached}/${c.desired} attached, stray ${c.strayAttachments}/${c.strayReports}, violations ${checker.violations().length}, controller rss ${rssMb(ctl.pid) ?? '?'} MB`);
      }
      await sleep(200);
    }

    injector.set('none');
    const stopped = Date.now();
    checker.faultsStopped(stopped);
    log('faults off; waiting for convergence');
    let reconvergeS: number | null = null;
    const bound = stopped + (o.convergeTimeoutMs ?? 180_000) + 5000;
    let final = checker.convergence();
    let lastWaitLog = Date.now();
    while (Date.now() < bound) {
      final = checker.convergence();
      if (final.converged) {
        reconvergeS = (Date.now() - stopped) / 1000;
        break;
      }
      if (Date.now() - lastWaitLog > 15_000) {
        lastWaitLog = Date.now();
        log(`waiting: ${final.attached}/${final.desired} attached, stray ${final.strayAttachments}/${final.strayReports}, pending e.g. ${final.pending.slice(0, 3).join('; ')}`);
      }
      await sleep(500);
    }
    log(reconvergeS === null ? `not converged: ${JSON.stringify(final)}\n${ctl.tail()}` : `reconverged in ${reconvergeS.toFixed(1)} s`);
    const report: SoakReport = {
      minutes: o.minutes,
      nodes: o.nodes,
      pods_per_node: o.podsPerNode,
      fault_spec: faultSpec,
      faults: injector.counts(),
      churn: pick(sim.actors?.stats().churn ?? {}, ['podsCreated', 'podsDeleted', 'podsRescheduled']),
      restarts: done,
      controller_crashes: crashes,
      operations: checker.operations(),
      violations: [...checker.violations()],
      violation_counts: checker.counts(),
      initial_converge_s: round(initialConvergeS),
      reconverge_s: reconvergeS === null ? null : round(reconvergeS),
      final: { desired: final.desired, attached: final.attached, pending: final.pending, strayAttachments: final.strayAttachments, strayReports: final.strayReports },
      rss_start_mb: rssStart,
      rss_end_mb: rssMb(ctl.pid),
      rss_samples: samples,
      sim_rss_start_mb: simRssStart,
      sim_rss_end_mb: mb(process.memoryUsage().rss),
      watch_cut_offs: sim.server.watchCutOffs(),
      load_avg_1m: round(loadavg()[0]),
      duration_s: round((Date.now() - t0) / 1000),
    };
    return report;
  } finally {
    expectingExit = true;
    await ctl.stop();
    checker.stop();
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `count` kill times in (5%, 90%) of the phase, sorted, at least 10 s apart where the phase allows. */
function restartTimes(phaseMs: number, count: number, random: () => number): number[] {
  const lo = phaseMs * 0.05;
  const span = phaseMs * 0.85;
  const gap = Math.min(10_000, span / (2 * count));
  const out: number[] = [];
  for (let tries = 0; out.length < count && tries < 1000; tries++) {
    const t = lo + random() * span;
    if (out.every((x) => Math.abs(x - t) >= gap)) out.push(t);
  }
  return out.sort((a, b) => a - b);
}

interface Child {
  child: ChildProcess;
  pid: number | undefined;
  exited: Promise<number | null>;
  /** The last lines of its output. */
  tail(): string;
  stop(): Promise<void>;
}

function startChild(args: string[]): Child {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, LOG_LEVEL: process.env.SOAK_LOG_LEVEL ?? 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    pid: child.pid,
    exited,
    tail: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** Resident set size of a process, MiB (Linux /proc; null elsewhere or when gone). */
function rssMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

function pick(o: Record<string, number>, keys: string[]): Record<string, number> {
  return Object.fromEntries(keys.map((k) => [k, o[k] ?? 0]));
}

/** The command line of `npm run soak` (bench/lib/args.ts). */
function soakArgs(): SoakOptions & { out: string } {
  const cli = commandLine('soak', {
    minutes: { type: 'string', default: '10', help: 'length of the fault phase' },
    nodes: { type: 'string', default: '5000', help: 'fleet size' },
    'pods-per-node': { type: 'string', default: '10', help: 'pods per node' },
    faults: { type: 'string', arg: 'SPEC', help: 'fault spec of the fault phase (default: sized to the fleet)' },
    restarts: { type: 'string', arg: 'N', help: 'controller SIGKILLs and restarts (at least 2)' },
    seed: { type: 'string', arg: 'S', help: 'random seed' },
    'max-wait-for-unmount': { type: 'string', arg: 'SECONDS', help: "the controller's and the checker's (default 30)" },
    'converge-timeout': { type: 'string', arg: 'SECONDS', help: 'bound on reconvergence after the faults (default 180)' },
    out: { type: 'string', default: new URL('results/soak.json', import.meta.url).pathname, arg: 'FILE', help: 'report file' },
  });
  const v = cli.values;
  const o: SoakOptions & { out: string } = { minutes: cli.num('minutes'), nodes: cli.int('nodes'), podsPerNode: cli.int('pods-per-node'), out: v.out };
  if (v.faults !== undefined) {
    try {
      parseFaultSpec(v.faults);
    } catch (err) {
      cli.fail(`--faults: ${(err as Error).message}`);
    }
    o.faults = v.faults;
  }
  if (v.restarts !== undefined) o.restarts = cli.num('restarts');
  if (v.seed !== undefined) o.seed = cli.num('seed');
  if (v['max-wait-for-unmount'] !== undefined) o.maxWaitForUnmountMs = cli.num('max-wait-for-unmount') * 1000;
  if (v['converge-timeout'] !== undefined) o.convergeTimeoutMs = cli.num('converge-timeout') * 1000;
  return o;
}

if (process.argv[1] && new URL(import.meta.url).pathname === process.argv[1]) {
  const opts = soakArgs();
  const start = new Date().toISOString();
  runSoak({ ...opts, log: (l) => console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${l}`) }).then(
    (report) => {
      mkdirSync(dirname(opts.out), { recursive: true });
      writeFileSync(opts.out, `${JSON.stringify({ started_at: start, ...report }, null, 2)}\n`);
      console.log(JSON.stringify({ ...report, violations: report.violations.slice(0, 5) }, null, 2));
      const kinds = FAULT_KINDS.filter((k) => report.faults[k] > 0).length;
      console.error(`wrote ${opts.out}: ${report.violations.length} violations, ${report.restarts} restarts, ${kinds}/${FAULT_KINDS.length} fault kinds injected, reconverge ${report.reconverge_s ?? 'never'} s`);
      process.exit(report.violations.length === 0 && report.reconverge_s !== null ? 0 : 1);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
