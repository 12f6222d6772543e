/**
 * The simulator process of the end-to-end bench: what `fleet-attach sim` runs (startSimulator
 * with the attacher and kubelets on), plus a churn switch. `fleet-attach sim --churn N` starts
 * churn as soon as the fleet is generated, so a cold-start convergence would race 1,000 pod
 * changes per second and never reach "every desired pair attached"; here churn starts when the
 * parent says so (after convergence): the same Churn actor `--churn` runs, started on the
 * running fleet's shared index (graceful deletions finished by the kubelets).
 *
 * Run by fork() with an IPC channel. Messages:
 *   parent → child  { type: 'churn', rate } | { type: 'churn-stop' } | { type: 'stats' }
 *                   | { type: 'pod-va', op, … } | { type: 'watch-burst', count, round }
 *                   | { type: 'watch-burst-lines', rv0, file } | { type: 'heap', file? }
 *   child → parent  { type: 'progress', done, total } | { type: 'ready', url, token, ca, population }
 *                   | { type: 'churn-started', indexMs } | { type: 'churn-stopped', stopped }
 *                   | { type: 'stats', stats, loop } | { type: 'pod-va', op, … } (the answer to
 *                   each pod-va command) | { type: 'watch-burst', … } | { type: 'watch-burst-lines', lines }
 *                   | { type: 'heap', count, stored } (the live heap, counted from a snapshot;
 *                   needs --expose-gc)
 * The pod-va commands drive new-pod-to-VolumeAttachment timing on the store's commits
 * (pod-va-commit-tracker.ts): start, begin and end the window, then the result and the pod
 * changes as watch lines, written to the file the parent names.
 * The watch-burst commands stage the watch-ingest measurement (watch-burst.ts).
 * The child exits when the parent goes away (IPC disconnect), on SIGTERM/SIGINT, or on error.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startSimulator } from '../../src/sim/server/index.js';
import { createGcRecorder, type GcPauseStats } from './gc-pauses.js';
import { countLiveHeap, type HeapCount } from './heap-count.js';
import { createCommitPodVa, type CommitPodVa } from './pod-va-commit-tracker.js';
import type { PodVaResult } from './pod-va-latency.js';
import { commitWatchBurst, writeBurstLines, type WatchBurstCommit } from './watch-burst.js';

export interface SimChildConfig {
  nodes: number;
  podsPerNode: number;
  seed: number;
  kubeconfigOut: string;
}

export type SimChildMessage =
  | { type: 'progress'; done: number; total: number }
  | { type: 'ready'; url: string; token: string; ca: string | undefined; population: Record<string, number> }
  | { type: 'churn-started'; indexMs: number }
  | { type: 'churn-stopped'; stopped: boolean }
  | ({ type: 'watch-burst' } & WatchBurstCommit)
  | { type: 'watch-burst-lines'; lines: number }
  | { type: 'stats'; stats: Record<string, Record<string, number>>; loop: SimLoopStats }
  | { type: 'heap'; count: HeapCount; stored: number }
  | { type: 'pod-va'; op: 'start' | 'begin' | 'end' | 'stop' }
  | { type: 'pod-va'; op: 'result'; result: PodVaResult; podLines: number };

/** The simulator's event loop since the previous `stats` command (or the start). */
export interface SimLoopStats {
  /** Delay of a timer behind the loop (monitorEventLoopDelay, 10 ms resolution), ms. */
  delay_p50_ms: number;
  delay_p99_ms: number;
  delay_max_ms: number;
  /** Event-loop utilisation: the share of the time the loop was not idle. */
  elu: number;
  /** The simulator's GC pauses over the same time. */
  gc: GcPauseStats;
  /** Its pauses of 50 ms or more, each with its start as epoch ms (to place it in the parent's windows). */
  long_gc_pauses: Array<{ at_epoch_ms: number; ms: number; kind: string }>;
}

export type SimChildCommand =
  | { type: 'churn'; rate: number }
  | { type: 'churn-stop' }
  | { type: 'watch-burst'; count: number; round: number }
  | { type: 'watch-burst-lines'; rv0: number; file: string }
  | { type: 'stats' }
  | { type: 'heap'; file?: string }
  | { type: 'pod-va'; op: 'start' | 'begin' | 'end' | 'stop' }
  | { type: 'pod-va'; op: 'result'; podLinesFile: string };

const send = (m: SimChildMessage) => process.send?.(m);

async function main(): Promise<void> {
  const cfg = JSON.parse(process.env.FA_SIM_CHILD ?? 'null') as SimChildConfig | null;
  if (!cfg) throw new Error('FA_SIM_CHILD (JSON config) is required');
  const sim = await startSimulator({
    kubeconfigOut: cfg.kubeconfigOut,
    fleet: { seed: cfg.seed, nodes: cfg.nodes, podsPerNode: cfg.podsPerNode, attacher: true, kubelet: true, churn: 0, nodeFailureRate: 0 },
    onProgress: (done, total) => send({ type: 'progress', done, total }),
  });
  const stop = async (code: number) => {
    await sim.stop();
    process.exit(code);
  };
  process.on('disconnect', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));
  // How long a request or a watch frame waits behind the simulator's own work (actors, fan-out).
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let elu0 = performance.eventLoopUtilization();
  const gc = createGcRecorder();
  let since = performance.now();
  const loopStats = (): SimLoopStats => {
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    const window = [[since, performance.now()]] as const;
    const out = {
      delay_p50_ms: ms(delay.percentile(50)),
      delay_p99_ms: ms(delay.percentile(99)),
      delay_max_ms: ms(delay.max),
      elu: Math.round(performance.eventLoopUtilization(elu0).utilization * 1000) / 1000,
      gc: gc.stats(window),
      long_gc_pauses: gc.longPauses(window, 50).map((p) => ({ at_epoch_ms: Math.round(performance.timeOrigin + p.start), ms: Math.round(p.duration * 10) / 10, kind: p.kind })),
    };
    delay.reset();
    elu0 = performance.eventLoopUtilization();
    since = window[0][1];
    return out;
  };
  let podVa: CommitPodVa | undefined;
  const podVaCommand = (m: Extract<SimChildCommand, { type: 'pod-va' }>): void => {
    if (m.op === 'start') podVa ??= createCommitPodVa(sim.store);
    if (!podVa) throw new Error(`pod-va ${m.op}: not started`);
    if (m.op === 'result') {
      send({ type: 'pod-va', op: 'result', result: podVa.result(), podLines: podVa.writePodLines(m.podLinesFile) });
      return;
    }
    if (m.op === 'begin') podVa.beginWindow();
    else if (m.op === 'end') podVa.endWindow();
    else if (m.op === 'stop') podVa.stop();
    send({ type: 'pod-va', op: m.op });
  };
  process.on('message', (m: SimChildCommand) => {
    if (m.type === 'pod-va') {
      podVaCommand(m);
    } else if (m.type === 'churn') {
      // The fleet's own Churn actor, on the actors' shared index, as `fleet-attach sim --churn` runs it.
      const t0 = performance.now();
      if (!sim.actors?.startChurn(m.rate)) throw new Error('churn: the fleet has no actors running, or churn already runs');
      send({ type: 'churn-started', indexMs: performance.now() - t0 });
    } else if (m.type === 'churn-stop') {
      send({ type: 'churn-stopped', stopped: sim.actors?.stopChurn() ?? false });
    } else if (m.type === 'watch-burst') {
      send({ type: 'watch-burst', ...commitWatchBurst(sim, m.count, m.round) });
    } else if (m.type === 'watch-burst-lines') {
      send({ type: 'watch-burst-lines', lines: writeBurstLines(sim, m.rv0, m.file) });
    } else if (m.type === 'heap') {
      void countLiveHeap(m.file).then((count) => send({ type: 'heap', count, stored: sim.store.stats().objects }));
    } else if (m.type === 'stats') {
      send({ type: 'stats', stats: sim.actors?.stats() ?? {}, loop: loopStats() });
    }
  });
  send({ type: 'ready', url: sim.url, token: sim.token, ca: sim.caPem, population: { ...(sim.population ?? {}) } as Record<string, number> });
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
