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
 *   ingest    churn stopped, a burst of pod watch events the controller reads at its own pace
 *             (e2e-watch-ingest.ts), and JSON.parse of the same events as lines: the ingest
 *             figures. The sync's rates are shares of the same baseline.
 * Children are stopped on every path. A failure (controller crash, timeout of a phase) ends the
 * run with `failed` set and whatever was measured before it.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CONTROLLER_SEMI_SPACE_FLAG, forkTs, nextMessage, SEMI_SPACE_FLAG, spawnNode, type Child } from './children.js';
import { createControllerProbe, parseListedLine, type ControllerProbe, type ListedLine } from './controller-probe.js';
import { converge, syncFigures, requestCounts, seconds, verifyCluster, waitForUrl, watchEventCounts } from './e2e-phases.js';
import { steady } from './e2e-steady.js';
import { jsonParseRate } from './json-parse-rate.js';
import { measureWatchIngest } from './e2e-watch-ingest.js';
import { askSim } from './sim-ask.js';
import { NodeStatusCounter } from './node-status-counter.js';
import { RemotePodVa } from './pod-va-remote.js';
import { PodVaTracker, type PodVaSource } from './pod-va-tracker.js';
import { cpuPressure, rssByMapping, sampleProcess, type ProcSampler } from './proc-stats.js';
import { phaseBar, stopAllBars } from './progress.js';
import { sumBy, sumOf, type PromSample } from './prom-text.js';
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
  /** Write V8 CPU profiles of the controller here and of the simulator in `sim/` (`--cpu-prof`). */
  profileDir?: string;
  /** The controller's --kube-api-qps and --kube-api-burst (20,000: no client-side limit in practice). */
  kubeApiQps: number;
  /** The controller's --kube-api-max-in-flight (SIMULATOR_CLIENT_SIZING). */
  kubeApiMaxInFlight: number;
  /** The controller's --list-page-size (SIMULATOR_CLIENT_SIZING). */
  listPageSize: number;
  /** More `fleet-attach run` flags (experiments: `--workers 0`, `--max-api-backlog 1000`…; the in-flight bound has its own field, which the run records). */
  controllerArgs?: string[];
  /** Extra V8/Node flags for the controller process (e.g. `--trace-gc-nvp`; its output goes to the controller log). */
  controllerNodeArgs?: string[];
  /** Extra V8/Node flags for the simulator process (its output goes to the simulator log). */
  simNodeArgs?: string[];
  /**
   * Stop once the initial sync is done: the sync figures and their JSON.parse baseline only
   * (no convergence, no churn), for comparing list readers and pipelines in many short runs.
   */
  syncOnly?: boolean;
  /**
   * Where new-pod-to-VolumeAttachment latency is taken, the first one reported as the run's:
   * `commit` (the simulator's commits, in its process) or `watch` (the bench's own watches,
   * which load the machine under test more). Default `['commit']`.
   */
  podVaSources?: ReadonlyArray<'commit' | 'watch'>;
}

export type E2eRun = Record<string, unknown> & { nodes: number; pods: number };

const BIN = new URL('../../bin/fleet-attach.js', import.meta.url).pathname;
const GUARD = new URL('./exit-with-parent.js', import.meta.url).pathname;
const GC_PROBE = new URL('./gc-probe.js', import.meta.url).pathname;
const SIM_CHILD = new URL('./sim-child.ts', import.meta.url).pathname;
const WRITES = ['create', 'patch', 'update', 'delete'];

type Ready = Extract<SimChildMessage, { type: 'ready' }>;

export async function runE2e(cfg: E2eConfig): Promise<E2eRun> {
  const dir = mkdtempSync(join(tmpdir(), 'fa-e2e-bench-'));
  const expected = cfg.nodes * cfg.podsPerNode;
  const heapMb = cfg.nodes >= 50_000 ? 8192 : 4096;
  const out: E2eRun = { nodes: cfg.nodes, pods: expected, kube_api_qps: cfg.kubeApiQps, kube_api_max_in_flight: cfg.kubeApiMaxInFlight, list_page_size: cfg.listPageSize, controller_args: cfg.controllerArgs ?? [], loadavg_start: loadavg().map((l) => round(l, 2)) };
  let sim: Child | undefined;
  let ctl: Child | undefined;
  let kube: RawKube | undefined;
  let trackers: PodVaSource[] = [];
  let nodeStatus: NodeStatusCounter | undefined;
  let ctlProc: ProcSampler | undefined;
  const listed: ListedLine[] = [];
  let t0Epoch = 0;
  try {
    // ---- fleet ----
    const fleetBar = phaseBar('fleet', cfg.nodes, 'nodes');
    const tFleet = performance.now();
    const kubeconfig = join(dir, 'kubeconfig');
    const simProfile = cfg.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(cfg.profileDir, 'sim')}`] : [];
    // --expose-gc: the watch-ingest burst collects the simulator's heap before the burst is served (watch-burst.ts).
    sim = forkTs(SIM_CHILD, [`--max-old-space-size=${heapMb}`, SEMI_SPACE_FLAG, '--expose-gc', ...(cfg.simNodeArgs ?? []), ...simProfile], {
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
    const t0 = performance.now();
    t0Epoch = Date.now();
    const simCpu0 = simProc.last().cpuS;
    ctl = spawnNode(
      ['--import', GUARD, '--import', GC_PROBE, `--max-old-space-size=${heapMb}`, CONTROLLER_SEMI_SPACE_FLAG, ...(cfg.controllerNodeArgs ?? []), ...(cfg.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${cfg.profileDir}`] : [])],
      BIN,
      ['run', '--kubeconfig', kubeconfig, '--leader-elect=false', '--kube-api-qps', String(cfg.kubeApiQps), '--kube-api-burst', String(cfg.kubeApiQps), '--kube-api-max-in-flight', String(cfg.kubeApiMaxInFlight), '--list-page-size', String(cfg.listPageSize), '--listen', '127.0.0.1:0', ...(cfg.controllerArgs ?? [])],
      { LOG_LEVEL: 'info' },
    );
    ctl.onLine((l) => {
      const x = parseListedLine(l);
      if (x) listed.push(x);
    });
    ctlProc = sampleProcess(ctl.pid);
    const probe = createControllerProbe(await waitForUrl(ctl, 120_000));
    if (cfg.syncOnly) {
      await waitForSync(probe, ctl, listed, t0 + cfg.convergeTimeoutS * 1000);
      Object.assign(out, syncFigures(listed, t0Epoch));
      out.controller_cpu_s_sync = round(ctlProc.last().cpuS);
      out.sim_cpu_s_sync = round(simProc.last().cpuS - simCpu0);
      await ctl.stop(60_000);
      simProc.stop();
      Object.assign(out, parseBaseline(out, await podLines(kube, 50_000), 'pods listed after the sync, as watch lines'));
      out.loadavg_end = loadavg().map((l) => round(l, 2));
      return out;
    }
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
    Object.assign(out, syncFigures(listed, t0Epoch));
    const writes = sumOf(mConv, 'fleet_attach_api_requests_total', { verb: WRITES });
    out.api_writes_per_s = round(writes / convS, 0);
    out.api_requests_converge = requestCounts(mConv);
    out.watch_events_per_s_converge = round(sumOf(mConv, 'fleet_attach_watch_events_total') / convS, 0);
    out.watch_events_converge = watchEventCounts(mConv);
    out.controller_memory_mb_converge = { ...memoryBreakdown(mConv), by_mapping: rssByMapping(ctl.pid) ?? null };
    out.summary_at_convergence = { pairs: conv.last.pairs, operations: conv.last.operations, conflicts: conv.last.conflicts };
    if (out.converged) out.verify = await verifyCluster(kube, expected);

    // ---- steady state under churn ----
    const rawKube = kube;
    const simChild = sim;
    trackers = (cfg.podVaSources ?? ['commit']).map((k) => (k === 'watch' ? new PodVaTracker(rawKube) : new RemotePodVa(simChild, join(dir, 'pod-lines.jsonl'))));
    for (const t of trackers) await t.start();
    const churnStarted = await askSim(sim, { type: 'churn', rate: cfg.churn }, 'churn-started', 10 * 60_000);
    out.churn_index_ms = Math.round(churnStarted.indexMs);
    Object.assign(out, await steady(cfg, probe, ctl, ctlProc, simProc, sim, trackers));
    const steadyPodLines = await trackers[0].podLines();
    for (const t of trackers) t.stop();

    // ---- watch ingest (churn stops) ----
    let baselineSet = false;
    try {
      const ingest = await measureWatchIngest(probe, ctl, sim, expected, join(dir, 'burst-lines.jsonl'));
      Object.assign(out, ingest.figures);
      Object.assign(out, syncShares(out));
      baselineSet = out.json_parse_events_per_s !== null;
    } catch (err) {
      out.watch_ingest_error = err instanceof Error ? err.message.slice(0, 2000) : String(err);
    }

    // ---- stop ----
    out.peak_rss_mb = Math.round(ctlProc.last().peakRssMb);
    out.controller_cpu_s_total = round(ctlProc.last().cpuS);
    out.sim_peak_rss_mb = Math.round(simProc.last().peakRssMb);
    out.rss_timeline_mb = ctlProc.timeline().filter((_, i) => i % 5 === 0).map(([t, mb]) => [Math.round(t), Math.round(mb)]);
    out.controller_memory_timeline_mb = await memoryTimeline(ctl);
    const tStop = performance.now();
    const code = await ctl.stop(60_000);
    out.controller_exit = { code, signal: ctl.process.signalCode, stop_s: round(seconds(tStop)) };
    await sim.stop();
    simProc.stop();
    if (!baselineSet) Object.assign(out, parseBaseline(out, steadyPodLines, trackers[0].kind === 'watch' ? 'pod watch lines received in the steady phase' : 'pod changes committed in the steady phase, as watch lines'));
    if (cfg.profileDir) {
      const profiles = (d: string) => readdirSync(d).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(d, f));
      out.controller_cpu_profile = profiles(cfg.profileDir);
      out.sim_cpu_profile = profiles(join(cfg.profileDir, 'sim'));
    }
    out.loadavg_end = loadavg().map((l) => round(l, 2));
    return out;
  } catch (err) {
    // What was measured before the failure stays in the record.
    out.failed = err instanceof Error ? err.message.slice(0, 4000) : String(err);
    // The initial sync usually completed: its figures still hold.
    if (listed.length > 0 && out.sync_objects_per_s === undefined) Object.assign(out, syncFigures(listed, t0Epoch));
    if (ctlProc) Object.assign(out, { controller_cpu_s_at_failure: round(ctlProc.last().cpuS), peak_rss_mb_at_failure: Math.round(ctlProc.last().peakRssMb) });
    // No steady phase, so no pod watch lines: the baseline parses pods listed from the server instead.
    if (out.sync_objects_per_s && out.json_parse_events_per_s === undefined && kube && sim && sim.process.exitCode === null) {
      await ctl?.stop(5_000);
      const lines = await podLines(kube, 50_000).catch(() => []);
      Object.assign(out, parseBaseline(out, lines, 'pods listed after the failure, as watch lines'));
    }
    out.loadavg_end = loadavg().map((l) => round(l, 2));
    return out;
  } finally {
    stopAllBars();
    ctlProc?.stop();
    if (ctl) {
      out.controller_log = join(tmpdir(), `fa-e2e-${cfg.nodes}-controller.log`);
      writeFileSync(out.controller_log as string, ctl.output());
    }
    if (sim) {
      out.sim_log = join(tmpdir(), `fa-e2e-${cfg.nodes}-sim.log`);
      writeFileSync(out.sim_log as string, sim.output());
    }
    for (const t of trackers) t.stop();
    nodeStatus?.stop();
    kube?.close();
    await ctl?.stop(5_000);
    await sim?.stop(5_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Waits until every watch has synced and each resource's `listed` line has been read. */
async function waitForSync(probe: ControllerProbe, ctl: Child, listed: readonly ListedLine[], deadline: number): Promise<void> {
  for (;;) {
    const s = await probe.summary();
    const resources = new Set(listed.map((l) => l.resource)).size;
    if (s.watches.length > 0 && s.watches.every((w) => w.synced) && resources >= s.watches.length) return;
    if (performance.now() > deadline) throw new Error('the initial sync did not finish before the timeout');
    if (ctl.process.exitCode !== null) throw new Error(`controller exited (${ctl.process.exitCode}):\n${ctl.output().slice(-3000)}`);
    await sleep(100);
  }
}

/** The JSON.parse baseline over `lines` (no watch burst measured), and the sync's rates as shares of it. */
function parseBaseline(out: E2eRun, lines: readonly string[], source: string): Record<string, unknown> {
  const parse = jsonParseRate(lines);
  const base = {
    json_parse_events_per_s: parse ? Math.round(parse.eventsPerS) : null,
    json_parse_sample: parse ? { source, lines: parse.lines, mean_bytes: Math.round(parse.bytes / parse.lines), best_events_per_s: Math.round(parse.bestEventsPerS) } : null,
  };
  return { ...base, ...syncShares({ ...out, ...base }) };
}

/** The sync's rates as shares of the run's JSON.parse baseline. */
function syncShares(out: E2eRun): Record<string, unknown> {
  const parse = out.json_parse_events_per_s;
  const share = (v: unknown) => (typeof v === 'number' && typeof parse === 'number' && parse > 0 ? round(v / parse, 3) : null);
  return { sync_ratio: share(out.sync_objects_per_s), sync_pod_read_ratio: share(out.sync_pod_read_per_s) };
}

/** Up to `max` pods from the server, each as the watch line that would carry it. */
async function podLines(kube: RawKube, max: number): Promise<string[]> {
  const lines: string[] = [];
  let cont = '';
  do {
    const page = await kube.getJson<{ items?: unknown[]; metadata?: { continue?: string } }>(`/api/v1/pods?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
    for (const item of page.items ?? []) lines.push(`{"type":"ADDED","object":${JSON.stringify(item)}}`);
    cont = page.metadata?.continue ?? '';
  } while (cont && lines.length < max);
  return lines;
}

/** Where the controller's resident memory is at a point, from its process metrics (MB). */
function memoryBreakdown(m: readonly PromSample[]): Record<string, number | Record<string, number>> {
  const mb = (b: number) => Math.round(b / 2 ** 20);
  const spaces = sumBy(m, 'nodejs_heap_space_size_total_bytes', 'space');
  return {
    rss: mb(sumOf(m, 'process_resident_memory_bytes')),
    heap_total: mb(sumOf(m, 'nodejs_heap_size_total_bytes')),
    heap_used: mb(sumOf(m, 'nodejs_heap_size_used_bytes')),
    external: mb(sumOf(m, 'nodejs_external_memory_bytes')),
    heap_spaces: Object.fromEntries(Object.entries(spaces).map(([k, v]) => [k, mb(v)])),
  };
}

/** The controller's memory every 5 s from its start (gc-probe.js), or null when it does not answer. */
async function memoryTimeline(ctl: Child): Promise<{ columns: string[]; samples: number[][] } | null> {
  const id = Math.random();
  const reply = nextMessage<{ type: string; id: number; columns: string[]; samples: number[][] }>(ctl, (m) => m?.type === 'memory-timeline' && m.id === id, 10_000);
  ctl.process.send({ type: 'memory-timeline', id });
  try {
    const r = await reply;
    return { columns: r.columns, samples: r.samples };
  } catch {
    return null;
  }
}
