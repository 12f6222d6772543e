/**
 * The steady-state phase of an end-to-end run: churn on, then `steadyS` seconds measured from
 * outside the controller — loop and plan time from the reconcile histograms between two
 * /metrics scrapes, new-pod-to-VolumeAttachment latency (PodVaTracker), API calls, CPU shares.
 */
import type { Child } from './children.js';
import type { ControllerProbe, ControllerSummary } from './controller-probe.js';
import type { E2eConfig } from './e2e-run.js';
import { apiCalls, seconds, sleep, summaryOf } from './e2e-phases.js';
import type { PodVaResult, PodVaSource } from './pod-va-tracker.js';
import { cpuPressure, type ProcSampler } from './proc-stats.js';
import { phaseBar } from './progress.js';
import { fractionAtOrBelow, histogramDelta, histogramQuantile, sumOf, type PromSample } from './prom-text.js';
import type { SimChildMessage } from './sim-child.js';
import { askSim } from './sim-ask.js';
import { round } from './stats.js';
import { nextMessage } from './children.js';

const WRITES = ['create', 'patch', 'update', 'delete'];
const LOOP = 'fleet_attach_reconcile_duration_seconds';
const PLAN = 'fleet_attach_plan_duration_seconds';
const PERIODIC = 'fleet_attach_periodic_pass_busy_seconds';
const ATTACH_START = 'fleet_attach_pod_to_attach_start_seconds';

type Stats = Extract<SimChildMessage, { type: 'stats' }>;

export async function steady(cfg: E2eConfig, probe: ControllerProbe, ctl: Child, ctlProc: ProcSampler, simProc: ProcSampler, sim: Child, trackers: readonly PodVaSource[]): Promise<Record<string, unknown>> {
  let simLoop: Stats['loop'] | undefined;
  let simActors: Stats['stats'] = {};
  const churnAt = async () => {
    const m: Stats = await askSim(sim, { type: 'stats' }, 'stats', 60_000);
    simLoop = m.loop;
    simActors = m.stats;
    return m.stats.churn ?? {};
  };
  const churnA = await churnAt();
  const actorsA = simActors;
  const mA: PromSample[] = await probe.metrics();
  const cpuA = ctlProc.last().cpuS;
  const simCpuA = simProc.last().cpuS;
  const benchCpuA = process.cpuUsage();
  const tA = performance.now();
  const epochA = Date.now();
  await Promise.all(trackers.map((t) => t.beginWindow()));
  const bar = phaseBar('steady', cfg.steadyS, 's');
  let s: ControllerSummary | undefined;
  while (seconds(tA) < cfg.steadyS) {
    await sleep(Math.min(1000, Math.max(0, cfg.steadyS * 1000 - (performance.now() - tA))));
    s = await summaryOf(probe, ctl, performance.now() + 120_000);
    bar.update(Math.min(cfg.steadyS, Math.floor(seconds(tA))), `loop p99 ${s.loop.pass.p99Ms.toFixed(1)} ms  desired ${s.pairs.desired}  attached ${s.pairs.attached}  pending ${s.operations.pending}  conflicts ${s.conflicts}`);
  }
  await Promise.all(trackers.map((t) => t.endWindow()));
  const pressure = cpuPressure() ?? null;
  const mB = await probe.metrics();
  const epochB = Date.now();
  const span = seconds(tA);
  const ctlGc = await controllerGc(ctl, epochA, epochB);
  const cpu = ctlProc.last().cpuS - cpuA;
  const simCpu = simProc.last().cpuS - simCpuA;
  const benchCpu = process.cpuUsage(benchCpuA);
  const churnB = await churnAt();
  await sleep(3000); // VolumeAttachments of the window's last pods
  bar.done();
  const loop = histogramDelta(mA, mB, LOOP);
  const plan = histogramDelta(mA, mB, PLAN);
  const attachStart = histogramDelta(mA, mB, ATTACH_START);
  const q = (x: number) => histogramQuantile(loop, x);
  const writes = sumOf(mB, 'fleet_attach_api_requests_total', { verb: WRITES }) - sumOf(mA, 'fleet_attach_api_requests_total', { verb: WRITES });
  const [pv, ...others] = await Promise.all(trackers.map((t) => t.result()));
  const changes = (c: Record<string, number>) => (c.podsDeleted ?? 0) + (c.podsCreated ?? 0);
  const { gc: simGc, long_gc_pauses: simLong, ...simLoopOnly } = simLoop ?? { gc: undefined, long_gc_pauses: [] };
  const windowEpochMs = performance.timeOrigin + tA;
  return {
    steady_s: round(span),
    cpu_pressure_steady: pressure,
    loop_p50_ms: round((q(0.5)?.value ?? NaN) * 1000, 2),
    loop_p99_ms: round((q(0.99)?.value ?? NaN) * 1000, 2),
    loop_p99_bucket_ms: q(0.99) ? [q(0.99)!.lower * 1000, q(0.99)!.upper * 1000] : null,
    // Beyond the histogram's last bound (2.5 s) the quantile is only known to exceed it.
    loop_p50_beyond_last_bucket: q(0.5)?.open ?? false,
    loop_p99_beyond_last_bucket: q(0.99)?.open ?? false,
    loop_le_20ms_fraction: round(fractionAtOrBelow(loop, 0.02), 4),
    loop_passes: loop.count,
    loop_mean_ms: round((loop.sum / loop.count) * 1000, 2),
    plan_p50_ms: round((histogramQuantile(plan, 0.5)?.value ?? NaN) * 1000, 2),
    plan_p99_ms: round((histogramQuantile(plan, 0.99)?.value ?? NaN) * 1000, 2),
    plan_window_p99_ms: s ? round(s.loop.plan.p99Ms, 2) : null,
    loop_window_p50_ms: s ? round(s.loop.pass.p50Ms, 2) : null,
    loop_window_p99_ms: s ? round(s.loop.pass.p99Ms, 2) : null,
    // Where the latency below was taken: the simulator's commits or the bench's watches.
    pod_va_source: trackers[0].kind,
    pod_to_va_p50_ms: round(pv.podToVaMs.p50, 1),
    pod_to_va_p99_ms: round(pv.podToVaMs.p99, 1),
    pod_to_va_max_ms: round(pv.podToVaMs.max, 1),
    // true: that percentile includes pods still without their VolumeAttachment, so it is a lower bound.
    pod_to_va_p50_at_least: pv.podToVaMs.p50AtLeast,
    pod_to_va_p99_at_least: pv.podToVaMs.p99AtLeast,
    // Where the tail is: the share of new pods over 200 ms that the three worst seconds hold
    // (near 1: a few stalls), and the whole window second by second.
    pod_to_va_tail: pv.tail,
    pod_to_attached_p50_ms: round(pv.podToAttachedMs.p50, 1),
    pod_to_attached_p99_ms: round(pv.podToAttachedMs.p99, 1),
    // The controller's own share of that wait, from its histogram: the pod's event adding the pair
    // to the desired state → the attach starting (the create then waits only for an API slot),
    // interpolated in its buckets as loop_p99_ms is; null when the controller has no such histogram.
    controller_pod_to_attach_start_p50_ms: attachStart.count ? round((histogramQuantile(attachStart, 0.5)?.value ?? NaN) * 1000, 1) : null,
    controller_pod_to_attach_start_p99_ms: attachStart.count ? round((histogramQuantile(attachStart, 0.99)?.value ?? NaN) * 1000, 1) : null,
    controller_pod_to_attach_start_count: attachStart.count,
    new_pods: pv.newPods,
    new_pod_volumes: pv.volumes,
    new_pod_volumes_with_va: pv.matched,
    rescheduled_pods: pv.otherPods,
    new_pods_deleted_before_va: pv.deletedBeforeVa,
    churn_changes_per_s: round((changes(churnB) - changes(churnA)) / span, 0),
    churn_stats: churnB,
    // Every simulator actor's counters over the measured minute (B − A), per second.
    steady_sim_actor_rates: actorRates(actorsA, simActors, span),
    steady_api_writes_per_s: round(writes / span, 0),
    steady_watch_events_per_s: round((sumOf(mB, 'fleet_attach_watch_events_total') - sumOf(mA, 'fleet_attach_watch_events_total')) / span, 0),
    steady_controller_cpu_share: round(cpu / span, 2),
    steady_sim_cpu_share: round(simCpu / span, 2),
    steady_bench_cpu_share: round((benchCpu.user + benchCpu.system) / 1e6 / span, 2),
    steady_api_calls: apiCalls(mA, mB, span),
    // Whose loop a request waits behind: the simulator's since churnA, the controller's since
    // the scrape mA (prom-client resets its event-loop-delay histogram at every scrape).
    steady_sim_loop: simLoop ? simLoopOnly : null,
    // The simulator's collections over the same minute, its long pauses placed in the window's
    // seconds (as pod_to_va_tail.worst_at_s), so a tail second can be matched to a pause.
    steady_sim_gc: simGc ? { ...simGc, long_pauses: simLong.map((p) => ({ at_s: round((p.at_epoch_ms - windowEpochMs) / 1000, 1), ms: p.ms, kind: p.kind })) } : null,
    steady_controller_loop: controllerLoop(mB),
    periodic_passes: periodicPasses(mB),
    steady_controller_gc: gcPauses(mA, mB),
    // Each process's longest major (mark-compact) collection in the minute, ms: the controller's
    // from its own gc entries (gc-probe.js, preloaded), the simulator's from its recorder.
    steady_controller_gc_pauses: ctlGc,
    controller_major_gc_max_ms: ctlGc?.major.max_ms ?? null,
    sim_major_gc_max_ms: simGc ? simGc.major.max_ms : null,
    // The pod and VolumeAttachment changes the timing source saw (its watches, or the commits).
    bench_pod_events: pv.podEvents,
    bench_va_events: pv.vaEvents,
    pod_to_va_timeline: pv.timeline,
    // The same window timed by the other sources asked for (`--pod-va-source commit,watch`).
    pod_va_other_sources: others.length ? Object.fromEntries(others.map((o, i) => [trackers[i + 1].kind, headline(o)])) : undefined,
  };
}

type KindPauses = Record<'major' | 'minor' | 'incremental' | 'other', { count: number; total_ms: number; max_ms: number }>;

/** The controller's pauses in the window, from the gc-probe it was started with; null without one. */
async function controllerGc(ctl: Child, from: number, to: number): Promise<KindPauses | null> {
  const id = Math.random();
  const reply = nextMessage<{ type: string; id: number; pauses: KindPauses }>(ctl, (m) => m?.type === 'gc-pauses' && m.id === id, 10_000);
  ctl.process.send({ type: 'gc-pauses', id, from, to });
  try {
    return (await reply).pauses;
  } catch {
    return null;
  }
}

/** A source's headline figures, for comparing sources over one window. */
function headline(r: PodVaResult): Record<string, unknown> {
  return {
    pod_to_va_p50_ms: round(r.podToVaMs.p50, 1),
    pod_to_va_p99_ms: round(r.podToVaMs.p99, 1),
    pod_to_va_max_ms: round(r.podToVaMs.max, 1),
    pod_to_attached_p50_ms: round(r.podToAttachedMs.p50, 1),
    pod_to_attached_p99_ms: round(r.podToAttachedMs.p99, 1),
    new_pod_volumes: r.volumes,
    new_pod_volumes_with_va: r.matched,
    new_pods_deleted_before_va: r.deletedBeforeVa,
  };
}

/** Each simulator actor's counters from `a` to `b` per second (gauges such as queue sizes come out as their change per second). */
function actorRates(a: Stats['stats'], b: Stats['stats'], span: number): Record<string, Record<string, number | null>> {
  const out: Record<string, Record<string, number | null>> = {};
  for (const [actor, counters] of Object.entries(b)) {
    out[actor] = {};
    for (const [k, v] of Object.entries(counters)) out[actor][k] = round((v - (a[actor]?.[k] ?? 0)) / span, 1);
  }
  return out;
}

/**
 * The controller's GC pauses between the two scrapes, per kind (prom-client's default
 * `nodejs_gc_duration_seconds`): count, total and how many lasted 100 ms or more (its bounds are
 * 1 ms, 10 ms, 100 ms, 1 s, 2 s, 5 s).
 */
function gcPauses(a: readonly PromSample[], b: readonly PromSample[]): Record<string, { count: number; total_ms: number | null; over_100ms: number }> {
  const out: Record<string, { count: number; total_ms: number | null; over_100ms: number }> = {};
  for (const kind of ['major', 'minor', 'incremental']) {
    const h = histogramDelta(a, b, 'nodejs_gc_duration_seconds', { kind });
    const upTo100 = h.buckets.find((x) => x.le === 0.1)?.count ?? h.count;
    out[kind] = { count: h.count, total_ms: round(h.sum * 1000, 0), over_100ms: h.count - upTo100 };
  }
  return out;
}

/** The controller's event-loop delay and utilisation from its default process metrics, ms. */
function controllerLoop(m: readonly PromSample[]): Record<string, number> {
  const ms = (name: string) => round(sumOf(m, name) * 1000, 2) ?? NaN;
  return { delay_p50_ms: ms('nodejs_eventloop_lag_p50_seconds'), delay_p99_ms: ms('nodejs_eventloop_lag_p99_seconds'), delay_max_ms: ms('nodejs_eventloop_lag_max_seconds') };
}

/**
 * The periodic passes completed since the controller started (cold start and churn): how many,
 * and what one held its thread for on average (the sum of its slices). Empty for a controller
 * without the metric.
 */
function periodicPasses(m: readonly PromSample[]): Record<string, { passes: number; busy_s_mean: number }> {
  const out: Record<string, { passes: number; busy_s_mean: number }> = {};
  for (const pass of ['verify', 'pods-removed', 'pods-listed']) {
    const n = sumOf(m, `${PERIODIC}_count`, { pass });
    if (n > 0) out[pass] = { passes: n, busy_s_mean: round(sumOf(m, `${PERIODIC}_sum`, { pass }) / n, 3) ?? 0 };
  }
  return out;
}
