/**
 * One end-to-end bench run at one fleet size: the simulator (bench/lib/sim-child.ts) and the
 * controller (`bin/fleet-attach.js run`) as separate child processes, measured from outside.
 *   fleet     the simulator generates nodes × podsPerNode pods (PVC + PV each), attacher and
 *             kubelets on, no churn;
 *   converge  the controller starts cold; done when every desired pair is attached and reported
 *             (its summary), then checked on the API server (VolumeAttachments attached, node
 *             status.volumesAttached);
 *   steady    churn of `churn` pod changes/s for `steadyS` seconds: loop time (the reconcile
 *             histogram between two /metrics scrapes), new-pod-to-VolumeAttachment latency
 *             (PodVaTracker), API writes/s, CPU;
 *   parse     JSON.parse over the pod watch lines the bench received, the ingest baseline.
 * Children are stopped on every path. A failure (controller crash, timeout of a phase) ends the
 * run with `failed` set and whatever was measured before it.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { forkTs, nextMessage, spawnNode, type Child } from './children.js';
import { createControllerProbe, listeningUrl, parseListedLine, type ControllerProbe, type ControllerSummary, type ListedLine } from './controller-probe.js';
import { jsonParseRate } from './json-parse-rate.js';
import { NodeStatusCounter } from './node-status-counter.js';
import { PodVaTracker } from './pod-va-tracker.js';
import { cpuPressure, sampleProcess, type ProcSampler } from './proc-stats.js';
import { phaseBar, stopAllBars } from './progress.js';
import { fractionAtOrBelow, histogramDelta, histogramQuantile, sumOf, type PromSample } from './prom-text.js';
import { createRawKube, type RawKube } from './raw-kube.js';
import type { SimChildMessage } from './sim-child.js';
import { round } from './stats.js';

export interface E2eConfig {
  nodes: number;
  podsPerNode: number;
  /** Pod changes per second in the steady phase. */
  churn: number;
  steadyS: number;
  convergeTimeoutS: number;
  seed: number;
  /** Write a V8 CPU profile of the controller here (`--cpu-prof`). */
  profileDir?: string;
  /** The controller's --kube-api-qps and --kube-api-burst (20,000: no client-side limit in practice). */
  kubeApiQps: number;
}

export type E2eRun = Record<string, unknown> & { nodes: number; pods: number };

const BIN = new URL('../../bin/fleet-attach.js', import.meta.url).pathname;
const GUARD = new URL('./exit-with-parent.js', import.meta.url).pathname;
const SIM_CHILD = new URL('./sim-child.ts', import.meta.url).pathname;
const WRITES = ['create', 'patch', 'update', 'delete'];
const LOOP = 'fleet_attach_reconcile_duration_seconds';
const PLAN = 'fleet_attach_plan_duration_seconds';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (fromMs: number, toMs = performance.now()) => (toMs - fromMs) / 1000;

type Ready = Extract<SimChildMessage, { type: 'ready' }>;
type Stats = Extract<SimChildMessage, { type: 'stats' }>;

export async function runE2e(cfg: E2eConfig): Promise<E2eRun> {
  const dir = mkdtempSync(join(tmpdir(), 'fa-e2e-bench-'));
  const expected = cfg.nodes * cfg.podsPerNode;
  const heapMb = cfg.nodes >= 50_000 ? 8192 : 4096;
  const out: E2eRun = { nodes: cfg.nodes, pods: expected, kube_api_qps: cfg.kubeApiQps, loadavg_start: loadavg().map((l) => round(l, 2)) };
  let sim: Child | undefined;
  let ctl: Child | undefined;
  let kube: RawKube | undefined;
  let tracker: PodVaTracker | undefined;
  let nodeStatus: NodeStatusCounter | undefined;
  try {
    // ---- fleet ----
    const fleetBar = phaseBar('fleet', cfg.nodes, 'nodes');
    const tFleet = performance.now();
    const kubeconfig = join(dir, 'kubeconfig');
    sim = forkTs(SIM_CHILD, [`--max-old-space-size=${heapMb}`], {
      FA_SIM_CHILD: JSON.stringify({ nodes: cfg.nodes, podsPerNode: cfg.podsPerNode, seed: cfg.seed, kubeconfigOut: kubeconfig }),
      LOG_LEVEL: 'warn',
    });
    sim.process.on('message', (m: SimChildMessage) => m.type === 'progress' && fleetBar.update(m.done));
    const ready = await nextMessage<SimChildMessage>(sim, (m) => m.type === 'ready', 40 * 60_000) as Ready;
    out.sim_generate_s = round(seconds(tFleet));
    fleetBar.done(`${out.sim_generate_s} s`);
    const simProc = sampleProcess(sim.pid);
    kube = createRawKube(ready);
    nodeStatus = new NodeStatusCounter(kube);
    await nodeStatus.start();

    // ---- converge (cold start) ----
    const listed: ListedLine[] = [];
    const t0 = performance.now();
    const t0Epoch = Date.now();
    const simCpu0 = simProc.last().cpuS;
    ctl = spawnNode(
      ['--import', GUARD, `--max-old-space-size=${heapMb}`, ...(cfg.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${cfg.profileDir}`] : [])],
      BIN,
      ['run', '--kubeconfig', kubeconfig, '--leader-elect=false', '--kube-api-qps', String(cfg.kubeApiQps), '--kube-api-burst', String(cfg.kubeApiQps), '--listen', '127.0.0.1:0'],
      { LOG_LEVEL: 'info' },
    );
    ctl.onLine((l) => {
      const x = parseListedLine(l);
      if (x) listed.push(x);
    });
    const ctlProc = sampleProcess(ctl.pid);
    const probe = createControllerProbe(await waitForUrl(ctl, 120_000));
    const benchCpu0 = process.cpuUsage();
    const conv = await converge(probe, ctl, nodeStatus, expected, t0 + cfg.convergeTimeoutS * 1000);
    nodeStatus.stop();
    const benchCpu = process.cpuUsage(benchCpu0);
    const mConv = await probe.metrics();
    out.cpu_pressure_converge = cpuPressure() ?? null;
    const convSample = ctlProc.last();
    out.converged = conv.convergedAt !== undefined;
    out.converge_timeout_s = cfg.convergeTimeoutS;
    out.converge_s = conv.convergedAt === undefined ? null : round(seconds(t0, conv.convergedAt));
    out.converge_summary_s = conv.summaryAt === undefined ? null : round(seconds(t0, conv.summaryAt));
    out.bench_cpu_s_converge = round((benchCpu.user + benchCpu.system) / 1e6);
    out.controller_cpu_s = round(convSample.cpuS);
    out.peak_rss_mb_converge = Math.round(convSample.peakRssMb);
    out.sim_cpu_s_converge = round(simProc.last().cpuS - simCpu0);
    const convS = seconds(t0, conv.convergedAt ?? performance.now());
    Object.assign(out, ingestFigures(listed, t0Epoch));
    const writes = sumOf(mConv, 'fleet_attach_api_requests_total', { verb: WRITES });
    out.api_writes_per_s = round(writes / convS, 0);
    out.api_requests_converge = requestCounts(mConv);
    out.watch_events_per_s_converge = round(sumOf(mConv, 'fleet_attach_watch_events_total') / convS, 0);
    out.summary_at_convergence = { pairs: conv.last.pairs, operations: conv.last.operations, conflicts: conv.last.conflicts };
    if (out.converged) out.verify = await verifyCluster(kube, expected);

    // ---- steady state under churn ----
    tracker = new PodVaTracker(kube);
    await tracker.start();
    sim.process.send({ type: 'churn', rate: cfg.churn });
    const churnStarted = await nextMessage<SimChildMessage>(sim, (m) => m.type === 'churn-started', 10 * 60_000);
    out.churn_index_ms = churnStarted.type === 'churn-started' ? Math.round(churnStarted.indexMs) : null;
    Object.assign(out, await steady(cfg, probe, ctl, ctlProc, simProc, sim, tracker));

    // ---- stop; JSON.parse baseline ----
    out.peak_rss_mb = Math.round(ctlProc.last().peakRssMb);
    out.controller_cpu_s_total = round(ctlProc.last().cpuS);
    out.sim_peak_rss_mb = Math.round(simProc.last().peakRssMb);
    out.rss_timeline_mb = ctlProc.timeline().filter((_, i) => i % 5 === 0).map(([t, mb]) => [Math.round(t), Math.round(mb)]);
    tracker.stop();
    const tStop = performance.now();
    const code = await ctl.stop(60_000);
    out.controller_exit = { code, signal: ctl.process.signalCode, stop_s: round(seconds(tStop)) };
    await sim.stop();
    simProc.stop();
    ctlProc.stop();
    const parse = jsonParseRate(tracker.podLines);
    out.json_parse_events_per_s = parse ? Math.round(parse.eventsPerS) : null;
    out.json_parse_sample = parse ? { lines: parse.lines, mean_bytes: Math.round(parse.bytes / parse.lines), best_events_per_s: Math.round(parse.bestEventsPerS) } : null;
    const ingest = out.ingest_events_per_s as number | null;
    out.ingest_ratio = ingest && parse ? round(ingest / parse.eventsPerS, 3) : null;
    const ingestCpu = out.ingest_cpu_events_per_s as number | null;
    out.ingest_cpu_ratio = ingestCpu && parse ? round(ingestCpu / parse.eventsPerS, 3) : null;
    if (cfg.profileDir) out.controller_cpu_profile = readdirSync(cfg.profileDir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(cfg.profileDir!, f));
    out.loadavg_end = loadavg().map((l) => round(l, 2));
    return out;
  } catch (err) {
    // What was measured before the failure stays in the record.
    out.failed = err instanceof Error ? err.message.slice(0, 4000) : String(err);
    out.loadavg_end = loadavg().map((l) => round(l, 2));
    return out;
  } finally {
    stopAllBars();
    if (ctl) {
      out.controller_log = join(tmpdir(), `fa-e2e-${cfg.nodes}-controller.log`);
      writeFileSync(out.controller_log as string, ctl.output());
    }
    tracker?.stop();
    nodeStatus?.stop();
    kube?.close();
    await ctl?.stop(5_000);
    await sim?.stop(5_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function waitForUrl(ctl: Child, timeoutMs: number): Promise<string> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const url = listeningUrl(ctl.output());
    if (url) return url;
    if (ctl.process.exitCode !== null) throw new Error(`controller exited (${ctl.process.exitCode}):\n${ctl.output().slice(-3000)}`);
    if (performance.now() > end) throw new Error(`controller did not listen within ${timeoutMs} ms:\n${ctl.output().slice(-3000)}`);
    await sleep(100);
  }
}

/**
 * The summary. A failed or timed-out request (a controller whose event loop is stuck answers
 * nothing) is retried until `deadline`; a controller that exited, or no answer by the deadline,
 * throws with the controller's log tail.
 */
async function summaryOf(probe: ControllerProbe, ctl: Child, deadline: number): Promise<ControllerSummary> {
  for (;;) {
    try {
      return await probe.summary();
    } catch (err) {
      const { exitCode, signalCode } = ctl.process;
      if (exitCode !== null || signalCode !== null || performance.now() > deadline) {
        const why = exitCode !== null || signalCode !== null ? `controller exited (code ${exitCode}, signal ${signalCode})` : 'controller not answering its summary by the deadline';
        throw new Error(`${why}: ${err instanceof Error ? err.message : String(err)}\n${ctl.output().slice(-4000)}`);
      }
      await sleep(1000);
    }
  }
}

/**
 * Polls until every desired pair is attached and reported: the controller's summary says so and
 * the Nodes on the API server list every volume in status.volumesAttached. Or the deadline.
 */
async function converge(probe: ControllerProbe, ctl: Child, nodes: NodeStatusCounter, expected: number, deadline: number): Promise<{ convergedAt?: number; summaryAt?: number; last: ControllerSummary }> {
  const bar = phaseBar('converge', expected, 'pairs');
  let summaryAt: number | undefined;
  for (;;) {
    const s = await summaryOf(probe, ctl, deadline);
    const now = performance.now();
    const synced = s.watches.filter((w) => w.synced).length;
    const p = s.pairs;
    const inStatus = nodes.total();
    bar.update(Math.min(p.attached, inStatus), `watches synced ${synced}/${s.watches.length}  desired ${p.desired}  attached ${p.attached}  in node status ${inStatus}  pending ${s.operations.pending}`);
    if (summaryAt === undefined && p.desired === expected && p.attached === expected && p.reportedAsAttached === expected) summaryAt = now;
    if (summaryAt !== undefined && inStatus === expected) {
      bar.done('converged');
      return { convergedAt: now, summaryAt, last: s };
    }
    if (now > deadline) {
      bar.done('TIMED OUT');
      return { ...(summaryAt !== undefined ? { summaryAt } : {}), last: s };
    }
    if (ctl.process.exitCode !== null) throw new Error(`controller exited (${ctl.process.exitCode}):\n${ctl.output().slice(-3000)}`);
    await sleep(200);
  }
}

/**
 * Initial-sync ingest from the reflectors' `listed` lines (first list of each resource):
 * objects per second end to end (over the window in which the seven lists ran concurrently:
 * server, transfer, parse, projection); the controller's own processing rate of pods (pods per
 * second of its JSON.parse + projection time, comparable to JSON.parse alone on the same pod
 * objects); and the pods list in detail.
 */
function ingestFigures(listed: readonly ListedLine[], t0Epoch: number): Record<string, unknown> {
  const first = new Map<string, ListedLine>();
  for (const l of listed) if (!first.has(l.resource)) first.set(l.resource, l);
  const all = [...first.values()];
  if (all.length === 0) return { ingest_events_per_s: null };
  const start = Math.min(...all.map((l) => l.time - l.totalMs));
  const end = Math.max(...all.map((l) => l.time));
  const items = all.reduce((n, l) => n + l.items, 0);
  const pods = first.get('pods');
  return {
    sync_s: round((end - t0Epoch) / 1000),
    ingest_objects: items,
    ingest_events_per_s: Math.round(items / ((end - start) / 1000)),
    ingest_cpu_events_per_s: pods ? Math.round(pods.items / ((pods.parseMs + pods.projectMs) / 1000)) : null,
    pods_list: pods ? {
      items: pods.items, mb: round(pods.bytes / 2 ** 20), total_ms: Math.round(pods.totalMs), fetch_ms: Math.round(pods.fetchMs),
      parse_ms: Math.round(pods.parseMs), project_ms: Math.round(pods.projectMs), items_per_s: Math.round(pods.items / (pods.totalMs / 1000)),
    } : null,
  };
}

/** Cluster-side check: attached VolumeAttachments and node status entries. */
async function verifyCluster(kube: RawKube, expected: number): Promise<Record<string, unknown>> {
  const bar = phaseBar('verify', expected * 2, 'objects');
  let attached = 0;
  let vas = 0;
  await kube.listAll('/apis/storage.k8s.io/v1/volumeattachments', (o) => {
    vas++;
    if ((o as { status?: { attached?: boolean } }).status?.attached === true) attached++;
    if (vas % 5000 === 0) bar.update(vas);
  });
  let listedInStatus = 0;
  await kube.listAll('/api/v1/nodes', (o) => {
    listedInStatus += (o as { status?: { volumesAttached?: unknown[] } }).status?.volumesAttached?.length ?? 0;
  });
  const ok = attached === expected && listedInStatus === expected;
  bar.update(expected * 2, ok ? 'ok' : 'MISMATCH');
  bar.done();
  return { ok, volume_attachments: vas, attached, in_node_status: listedInStatus };
}

async function steady(cfg: E2eConfig, probe: ControllerProbe, ctl: Child, ctlProc: ProcSampler, simProc: ProcSampler, sim: Child, tracker: PodVaTracker): Promise<Record<string, unknown>> {
  const churnAt = async () => {
    sim.process.send({ type: 'stats' });
    return (await nextMessage<SimChildMessage>(sim, (m) => m.type === 'stats', 60_000) as Stats).stats.churn ?? {};
  };
  const churnA = await churnAt();
  const mA: PromSample[] = await probe.metrics();
  const cpuA = ctlProc.last().cpuS;
  const simCpuA = simProc.last().cpuS;
  const benchCpuA = process.cpuUsage();
  const tA = performance.now();
  tracker.beginWindow();
  const bar = phaseBar('steady', cfg.steadyS, 's');
  let s: ControllerSummary | undefined;
  while (seconds(tA) < cfg.steadyS) {
    await sleep(Math.min(1000, Math.max(0, cfg.steadyS * 1000 - (performance.now() - tA))));
    s = await summaryOf(probe, ctl, performance.now() + 120_000);
    bar.update(Math.min(cfg.steadyS, Math.floor(seconds(tA))), `loop p99 ${s.loop.pass.p99Ms.toFixed(1)} ms  desired ${s.pairs.desired}  attached ${s.pairs.attached}  pending ${s.operations.pending}  conflicts ${s.conflicts}`);
  }
  tracker.endWindow();
  const pressure = cpuPressure() ?? null;
  const mB = await probe.metrics();
  const span = seconds(tA);
  const cpu = ctlProc.last().cpuS - cpuA;
  const simCpu = simProc.last().cpuS - simCpuA;
  const benchCpu = process.cpuUsage(benchCpuA);
  const churnB = await churnAt();
  await sleep(3000); // VolumeAttachments of the window's last pods
  bar.done();
  const loop = histogramDelta(mA, mB, LOOP);
  const plan = histogramDelta(mA, mB, PLAN);
  const q = (x: number) => histogramQuantile(loop, x);
  const writes = sumOf(mB, 'fleet_attach_api_requests_total', { verb: WRITES }) - sumOf(mA, 'fleet_attach_api_requests_total', { verb: WRITES });
  const pv = tracker.result();
  const changes = (c: Record<string, number>) => (c.podsDeleted ?? 0) + (c.podsCreated ?? 0);
  return {
    steady_s: round(span),
    cpu_pressure_steady: pressure,
    loop_p50_ms: round((q(0.5)?.value ?? NaN) * 1000, 2),
    loop_p99_ms: round((q(0.99)?.value ?? NaN) * 1000, 2),
    loop_p99_bucket_ms: q(0.99) ? [q(0.99)!.lower * 1000, q(0.99)!.upper * 1000] : null,
    loop_le_20ms_fraction: round(fractionAtOrBelow(loop, 0.02), 4),
    loop_passes: loop.count,
    loop_mean_ms: round((loop.sum / loop.count) * 1000, 2),
    plan_p50_ms: round((histogramQuantile(plan, 0.5)?.value ?? NaN) * 1000, 2),
    plan_p99_ms: round((histogramQuantile(plan, 0.99)?.value ?? NaN) * 1000, 2),
    plan_window_p99_ms: s ? round(s.loop.plan.p99Ms, 2) : null,
    loop_window_p50_ms: s ? round(s.loop.pass.p50Ms, 2) : null,
    loop_window_p99_ms: s ? round(s.loop.pass.p99Ms, 2) : null,
    pod_to_va_p50_ms: round(pv.podToVaMs.p50, 1),
    pod_to_va_p99_ms: round(pv.podToVaMs.p99, 1),
    pod_to_va_max_ms: round(pv.podToVaMs.max, 1),
    pod_to_attached_p50_ms: round(pv.podToAttachedMs.p50, 1),
    pod_to_attached_p99_ms: round(pv.podToAttachedMs.p99, 1),
    new_pods: pv.newPods,
    new_pod_volumes: pv.volumes,
    new_pod_volumes_with_va: pv.matched,
    rescheduled_pods: pv.otherPods,
    churn_changes_per_s: round((changes(churnB) - changes(churnA)) / span, 0),
    churn_stats: churnB,
    steady_api_writes_per_s: round(writes / span, 0),
    steady_watch_events_per_s: round((sumOf(mB, 'fleet_attach_watch_events_total') - sumOf(mA, 'fleet_attach_watch_events_total')) / span, 0),
    steady_controller_cpu_share: round(cpu / span, 2),
    steady_sim_cpu_share: round(simCpu / span, 2),
    steady_bench_cpu_share: round((benchCpu.user + benchCpu.system) / 1e6 / span, 2),
    steady_api_calls: apiCalls(mA, mB, span),
    bench_pod_events: pv.podEvents,
    bench_va_events: pv.vaEvents,
  };
}

/** API requests by `verb resource code` (the client's counter). */
function requestCounts(m: readonly PromSample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of m) {
    if (x.name !== 'fleet_attach_api_requests_total' || x.value === 0) continue;
    const key = `${x.labels.verb} ${x.labels.resource} ${x.labels.code}`;
    out[key] = (out[key] ?? 0) + x.value;
  }
  return out;
}

/** Per verb and resource between two scrapes: calls/s and mean duration (ms). */
function apiCalls(a: readonly PromSample[], b: readonly PromSample[], span: number): Record<string, { per_s: number; mean_ms: number | null }> {
  const name = 'fleet_attach_api_request_duration_seconds';
  const out: Record<string, { per_s: number; mean_ms: number | null }> = {};
  const keys = new Set(b.filter((x) => x.name === `${name}_count`).map((x) => `${x.labels.verb} ${x.labels.resource}`));
  for (const key of keys) {
    const [verb, resource] = key.split(' ');
    const d = (suffix: string) => sumOf(b, `${name}_${suffix}`, { verb, resource }) - sumOf(a, `${name}_${suffix}`, { verb, resource });
    const n = d('count');
    if (n > 0) out[key] = { per_s: round(n / span, 0) ?? 0, mean_ms: round((d('sum') / n) * 1000, 1) };
  }
  return out;
}
