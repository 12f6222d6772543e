/**
 * Aggregate attach/detach throughput of N replicas on a write-bound setup: every replica's
 * requests are delayed by the simulator (a client fault) and each replica keeps few requests
 * on the wire (--kube-api-max-in-flight), so that API round trips, not the 2 cores, bound the
 * rate. A burst of ReadWriteOnce pod moves, each a detach and an attach; the rate is the
 * VolumeAttachment creates and deletions the replicas commit, from the burst to the last one.
 */
import { createPrng } from '../../../src/sim/actors/prng.js';
import { REPLICA_IDS, settled, startChaosSimulator, waitUntil, type FleetShape } from './chaos-run.js';
import { observe } from './observe.js';
import { createReplicaPool, type ReplicaTimings } from './replicas.js';
import { createWorkload } from './workload.js';

export interface ThroughputOptions {
  replicas: number;
  seed: number;
  fleet: FleetShape;
  buckets: number;
  timings: ReplicaTimings;
  moves: number;
  delayMs: number;
  maxInFlight: number;
  scratchDir: string;
  log: (line: string) => void;
}

export interface ThroughputResult {
  replicas: number;
  moves: number;
  /** VolumeAttachment creates + deletions committed by the replicas in the window. */
  operations: number;
  window_s: number | null;
  ops_per_s: number | null;
  converged: boolean;
  per_replica: Array<{ id: string; cpu_s: number; cpu_cores: number; rss_mb: number; peak_rss_mb: number }>;
  /** Replicas that exited during the run, with the end of their output. */
  unexpected_exits: Array<{ id: string; code: number | null | undefined; tail: string }>;
}

export async function runThroughput(o: ThroughputOptions): Promise<ThroughputResult> {
  const sim = await startChaosSimulator(o.seed, { ...o.fleet, nodeFailureRate: 0 });
  const obs = observe(sim, { buckets: o.buckets, isReplica: (u) => /^r\d+$/.test(u), maxWaitForUnmountMs: 360_000 });
  const exits: Array<{ id: string; code: number | null | undefined; tail: string }> = [];
  const pool = createReplicaPool({
    kubeconfigFor: (u) => sim.kubeconfigFor(u), ids: REPLICA_IDS, dir: o.scratchDir, buckets: o.buckets, timings: o.timings, extraArgs: ['--kube-api-max-in-flight', String(o.maxInFlight)],
    onUnexpectedExit(r) {
      exits.push({ id: r.id, code: r.exitCode, tail: r.child.output().slice(-600) });
      o.log(`  N=${o.replicas}: ${r.id} exited by itself (code ${r.exitCode})`);
    },
  });
  const workload = createWorkload({ store: sim.store, holders: obs.holders, prng: createPrng(o.seed).fork(`throughput-${o.replicas}`), rate: 1, mix: { move: 1, race: 0, recreate: 0 }, maxInFlight: o.moves });
  try {
    for (const id of REPLICA_IDS.slice(0, o.replicas)) sim.clientFaults.set({ user: id, action: { kind: 'delay', ms: o.delayMs } });
    for (let i = 0; i < o.replicas; i++) pool.start();
    const ok = await waitUntil('settled', () => settled(obs, pool, o.buckets) && obs.checker.convergence().converged, 120_000);
    if (!ok) o.log(`  N=${o.replicas}: not settled after 120 s (going on)`);
    const before = new Map(pool.live().map((r) => [r.id, r.sampler.last().cpuS]));
    const start = performance.now();
    await Promise.all(Array.from({ length: o.moves }, () => workload.run('move')));
    const converged = await waitUntil('converged', () => obs.checker.convergence().converged, 240_000, 250);
    const ops = obs.opTimes().filter((t) => t >= start);
    const last = ops.length > 0 ? Math.max(...ops) : undefined;
    const windowS = last !== undefined ? (last - start) / 1000 : null;
    const elapsed = (performance.now() - start) / 1000;
    const perReplica = pool.live().map((r) => {
      const s = r.sampler.last();
      const cpu = s.cpuS - (before.get(r.id) ?? 0);
      return { id: r.id, cpu_s: Math.round(cpu * 100) / 100, cpu_cores: Math.round((cpu / elapsed) * 1000) / 1000, rss_mb: Math.round(s.rssMb), peak_rss_mb: Math.round(s.peakRssMb) };
    });
    const result: ThroughputResult = {
      replicas: o.replicas, moves: workload.stats().move ?? 0, operations: ops.length,
      window_s: windowS === null ? null : Math.round(windowS * 100) / 100,
      ops_per_s: windowS ? Math.round((ops.length / windowS) * 10) / 10 : null,
      converged, per_replica: perReplica, unexpected_exits: exits,
    };
    o.log(`  N=${o.replicas}: ${result.operations} attach/detach writes in ${result.window_s} s = ${result.ops_per_s}/s${converged ? '' : ' (NOT converged)'}`);
    return result;
  } finally {
    await workload.stop();
    await pool.stopAll();
    obs.stop();
    await sim.stop();
  }
}
