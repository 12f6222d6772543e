/**
 * One chaos run: the simulator in this process (fleet, kubelets, CSI attacher, write log),
 * controller replicas as child processes, the workload, the faults of a schedule one after
 * another, then (main runs) a quiet period in which the fleet must converge (I6). Everything the
 * checker sees comes from the simulator's store and write log.
 */
import { writeFileSync } from 'node:fs';
import { assignTargets } from '../../../src/sharding/index.js';
import { startSimulator, type Simulator } from '../../../src/sim/server/index.js';
import { parseClientFaultRule } from '../../../src/sim/server/client-faults.js';
import type { ClientFaultAction } from '../../../src/sim/server/index.js';
import { createPrng } from '../../../src/sim/actors/prng.js';
import type { CheckerViolation, ConvergenceStatus, Invariant } from './checker.js';
import { describeFault, type Fault } from './fault-schedule.js';
import { observe, type Observation } from './observe.js';
import { createReplicaPool, type Replica, type ReplicaPool, type ReplicaTimings } from './replicas.js';
import type { JoinRecord, TakeoverRecord } from './takeover-timer.js';
import { createWorkload, type WorkKind } from './workload.js';

export interface FleetShape {
  nodes: number;
  podsPerNode: number;
  attachLatencyMs: number;
  detachLatencyMs: number;
  mountLatencyMs: number;
  unmountLatencyMs: number;
  nodeFailureRate: number;
  outOfServiceFraction: number;
  nodeRecoveryMs: number;
}

export interface ChaosRunOptions {
  label: string;
  seed: number;
  fleet: FleetShape;
  buckets: number;
  timings: ReplicaTimings;
  initialReplicas: number;
  faults: readonly Fault[];
  guardsOff: readonly string[];
  workload: { rate: number; mix: Record<WorkKind, number> };
  /** Watch lag of every replica for the whole run (live-in-use mutation), ms. */
  lagAllMs?: number;
  /** Main runs: wait this long at most for I6 after the faults. 0: no I6 (mutation runs). */
  convergeTimeoutMs: number;
  /** Mutation runs: stop as soon as the checker has a violation. */
  stopOnViolation?: boolean;
  /** Mutation runs: workload time after the last fault (ms). */
  tailMs?: number;
  scratchDir: string;
  log: (line: string) => void;
}

export interface ChaosRunResult {
  label: string;
  guards_off: string[];
  seed: number;
  faults: number;
  fault_log: string[];
  /** Whether watch lag was a real `lag` client fault (false: a request delay stood in for it). */
  lag_supported: boolean;
  violations: CheckerViolation[];
  violation_counts: Record<Invariant, number>;
  checked: { replicaWrites: number; deletions: number; creates: number };
  forced_detaches: number;
  refused_writes_by_replica: Record<string, Record<string, number>>;
  takeovers: TakeoverRecord[];
  joins: JoinRecord[];
  convergence?: ConvergenceStatus & { seconds: number | null };
  workload: Record<string, number>;
  replicas_started: number;
  unexpected_exits: Array<{ id: string; code: number | null | undefined; tail: string }>;
  write_log_file?: string;
  duration_s: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const REPLICA_IDS = Array.from({ length: 80 }, (_, i) => `r${i + 1}`);

/** True when the simulator knows the `lag` client fault. */
export function lagSupported(): boolean {
  try {
    parseClientFaultRule({ user: 'x', action: { kind: 'lag', ms: 1 } });
    return true;
  } catch {
    return false;
  }
}

export async function startChaosSimulator(seed: number, f: FleetShape): Promise<Simulator> {
  return startSimulator({
    fleet: { seed, nodes: f.nodes, podsPerNode: f.podsPerNode, rwxFraction: 0.1, attachLatencyMs: f.attachLatencyMs, detachLatencyMs: f.detachLatencyMs, mountLatencyMs: f.mountLatencyMs, unmountLatencyMs: f.unmountLatencyMs, nodeFailureRate: f.nodeFailureRate, outOfServiceFraction: f.outOfServiceFraction, nodeRecoveryMs: f.nodeRecoveryMs },
    bookmarkIntervalMs: 1000,
    users: REPLICA_IDS.map((name) => ({ name, token: `token-${name}-${seed}` })),
    writeLog: { capacity: 3_000_000 },
  });
}

export async function waitUntil(what: string, pred: () => boolean, timeoutMs: number, stepMs = 200): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  while (performance.now() < end) {
    if (pred()) return true;
    await sleep(stepMs);
  }
  void what;
  return pred();
}

/** Every bucket held, each replica of `pool` holding its rendezvous share. */
export function settled(obs: Observation, pool: ReplicaPool, buckets: number): boolean {
  const ids = pool.live().map((r) => r.id);
  if (ids.length === 0) return false;
  const targets = assignTargets(ids, buckets);
  return targets.every((id, b) => obs.holders.holder(b) === id);
}

export async function runChaos(o: ChaosRunOptions): Promise<ChaosRunResult> {
  const t0 = performance.now();
  const sim = await startChaosSimulator(o.seed, o.fleet);
  const isReplica = (u: string) => /^r\d+$/.test(u);
  const obs = observe(sim, { buckets: o.buckets, isReplica, maxWaitForUnmountMs: 360_000 });
  const lag = lagSupported();
  const unexpected: ChaosRunResult['unexpected_exits'] = [];
  let faulting = true;
  // Without the simulator's `lag`, a request delay stands in, kept below the renew deadline.
  const lagAction = (ms: number): ClientFaultAction => (lag ? ({ kind: 'lag', ms } as unknown as ClientFaultAction) : { kind: 'delay', ms: Math.min(ms, 300) });
  let pool: ReplicaPool;
  let joining = false;
  const startReplica = (): Replica => {
    const r = pool.start();
    if (o.lagAllMs) sim.clientFaults.set({ user: r.id, action: lagAction(o.lagAllMs) });
    if (!joining) return r;
    // Its share among the replicas alive now (those that will still be there when it is stable).
    const ids = pool.live().map((x) => x.id);
    const targets = assignTargets(ids, o.buckets);
    obs.timer.joined(r.id, targets.flatMap((id, b) => (id === r.id ? [b] : [])), performance.now());
    return r;
  };
  pool = createReplicaPool({
    kubeconfigFor: (u) => sim.kubeconfigFor(u), ids: REPLICA_IDS, dir: o.scratchDir, buckets: o.buckets, timings: o.timings, guardsOff: o.guardsOff,
    onUnexpectedExit(r) {
      unexpected.push({ id: r.id, code: r.exitCode, tail: r.child.output().slice(-1500) });
      o.log(`  ${r.id} exited by itself (code ${r.exitCode})${faulting ? '; a replacement starts' : ''}`);
      if (faulting) replaceLater(r.id);
    },
  });
  const faultLog: string[] = [];
  const workload = createWorkload({ store: sim.store, holders: obs.holders, prng: createPrng(o.seed).fork(`workload-${o.label}`), rate: o.workload.rate, mix: o.workload.mix });
  let convergence: ChaosRunResult['convergence'];
  try {
    for (let i = 0; i < o.initialReplicas; i++) startReplica();
    joining = true;
    const ok = await waitUntil('buckets shared', () => settled(obs, pool, o.buckets) && obs.checker.convergence().converged, 120_000);
    o.log(`  ${o.label}: ${pool.live().length} replicas ${ok ? 'share the buckets, fleet converged' : 'NOT settled after 120 s (going on)'} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    workload.start();
    // Each fault waits its gap after the previous one, then (but for a scale-up) until every
    // bucket is held by a live replica and two replicas hold some: a takeover is then always
    // possible and timed on its own.
    let prevAt = 0;
    for (const f of o.faults) {
      if (o.stopOnViolation && obs.checker.violations().length > 0) break;
      await sleep(Math.max(0, f.atMs - prevAt));
      prevAt = f.atMs;
      if (f.kind !== 'scale-up') await waitUntil('two holders', () => ready(), 30_000);
      faultLog.push(await applyFault(f));
    }
    if (o.tailMs) {
      const end = performance.now() + o.tailMs;
      while (performance.now() < end && !(o.stopOnViolation && obs.checker.violations().length > 0)) await sleep(250);
    }
    faulting = false;
    await workload.stop();
    sim.clientFaults.clear();
    for (const r of pool.live()) if (r.paused) pool.resume(r);
    if (o.convergeTimeoutMs > 0) {
      // Faults stopped: keep the replica count, settle the races, then everything must converge.
      while (pool.live().length < o.initialReplicas) startReplica();
      workload.resolveConflicts();
      const qt = performance.now();
      const done = await waitUntil('convergence', () => obs.checker.convergence().converged, o.convergeTimeoutMs, 500);
      const c = obs.checker.convergence();
      convergence = { ...c, seconds: done ? Math.round(performance.now() - qt) / 1000 : null };
      if (!done) obs.checker.record({ invariant: 'I6', rv: sim.store.resourceVersion(), node: c.pending[0]?.split(' on ')[1] ?? '', volume: c.pending[0]?.split(' on ')[0] ?? '', writer: '', detail: `not converged ${o.convergeTimeoutMs / 1000} s after the faults stopped: ${c.attached}/${c.desired} attached, ${c.strayAttachments} stray VolumeAttachments, ${c.strayReports} stray volumesAttached entries; pending ${c.pending.join('; ')}` });
      o.log(`  ${o.label}: ${done ? `converged ${convergence.seconds} s after the faults stopped` : 'NOT converged'} (${c.attached}/${c.desired})`);
    }
  } finally {
    faulting = false;
    await workload.stop();
    await pool.stopAll();
    obs.stop();
  }
  const violations = [...obs.checker.violations()];
  let writeLogFile: string | undefined;
  if (violations.length > 0 && sim.writeLog) {
    writeLogFile = `/tmp/scale-out-${o.label}-seed${o.seed}-write-log.jsonl`;
    writeFileSync(writeLogFile, sim.writeLog.since(0).map((r) => JSON.stringify(r)).join('\n') + '\n');
    o.log(`  ${o.label}: write log of the violating run in ${writeLogFile}`);
  }
  const refusals = Object.fromEntries(Object.entries(sim.writeLog?.refusals() ?? {}).filter(([u]) => isReplica(u)));
  await sim.stop();
  return {
    label: o.label, guards_off: [...o.guardsOff], seed: o.seed, faults: faultLog.length, fault_log: faultLog, lag_supported: lag,
    violations, violation_counts: obs.checker.counts(), checked: obs.checker.checked(), forced_detaches: obs.checker.forcedDetaches(),
    refused_writes_by_replica: refusals, takeovers: obs.timer.takeovers(), joins: obs.timer.joins(), convergence,
    workload: workload.stats(), replicas_started: pool.all().length, unexpected_exits: unexpected, write_log_file: writeLogFile,
    duration_s: Math.round(performance.now() - t0) / 1000,
  };

  function ready(): boolean {
    const live = pool.live().filter((r) => !r.paused);
    const ids = new Set(live.map((r) => r.id));
    for (let b = 0; b < o.buckets; b++) if (!ids.has(obs.holders.holder(b))) return false;
    return live.filter((r) => obs.holders.heldBy(r.id).length > 0).length >= 2;
  }

  /** A replacement for `victim`, once its buckets are held by others (or after 10 s): a new pod starts later than the old one dies. */
  function replaceLater(victim: string): void {
    void waitUntil('taken over', () => obs.holders.heldBy(victim).length === 0, 10_000).then(() => {
      if (faulting) startReplica();
    });
  }

  /**
   * A zombie with a node status write on the wire: a pod moved onto one of the victim's nodes;
   * the moment its VolumeAttachment there is attached, every request the victim sends from then
   * on is held by the simulator for longer than a takeover (its watch still delivers), and
   * 300 ms later the victim is paused, its status write adding the volume held. Its buckets are
   * taken over, the new owner writes that node's list, and another pod moved there changes it
   * again; then the held requests are served while the victim still sleeps (the status
   * compare-and-swap must refuse them), and then it runs again (and finds itself fenced).
   */
  async function zombie(v: Replica, durationMs: number): Promise<string> {
    const nodes = sim.store.list('nodes').map((n) => n.metadata.name).filter((n) => obs.holders.holderOf(n) === v.id);
    const node = nodes[createPrng(o.seed).fork(`zombie-${v.id}`).int(Math.max(1, nodes.length))];
    const holdMs = durationMs + 2000;
    let armed = node !== undefined;
    let isolatedAt = 0;
    const isolate = () => {
      if (!armed) return;
      armed = false;
      isolatedAt = performance.now();
      sim.clientFaults.set({ user: v.id, action: { kind: 'delay', ms: holdMs } });
      setTimeout(() => pool.pause(v), 300);
    };
    const off = sim.store.subscribe((ev) => {
      if (!armed || ev.resource !== 'volumeattachments' || ev.type !== 'MODIFIED') return;
      const va = ev.view() as { spec?: { nodeName?: string }; status?: { attached?: boolean } };
      if (va.spec?.nodeName === node && va.status?.attached === true) isolate();
    });
    const t = performance.now();
    if (node !== undefined) void workload.moveOnto(node);
    await waitUntil('attached', () => !armed, 10_000, 20);
    off();
    isolate();
    await sleep(300);
    await waitUntil('taken over', () => obs.holders.heldBy(v.id).length === 0, durationMs, 100);
    if (node !== undefined) void workload.moveOnto(node);
    await sleep(Math.max(500, isolatedAt + holdMs + 500 - performance.now()));
    sim.clientFaults.clear({ user: v.id });
    await sleep(500);
    pool.resume(v);
    return ` on ${node ?? '(no node)'}, isolated ${Math.round(isolatedAt - t)} ms after the move`;
  }

  /** The victim: among the live replicas holding buckets (else all live), by the fault's index. */
  function victimOf(f: Fault): Replica | undefined {
    const live = pool.live().filter((r) => !r.paused);
    const holding = live.filter((r) => obs.holders.heldBy(r.id).length > 0);
    const from = holding.length > 0 ? holding : live;
    return from.length > 0 ? from[f.victim % from.length] : undefined;
  }

  async function applyFault(f: Fault): Promise<string> {
    const now = performance.now();
    let text = describeFault(f);
    if (f.kind === 'scale-up') {
      const r = startReplica();
      text += ` → ${r.id}`;
    } else {
      const v = victimOf(f);
      if (!v) return `${text}: no victim`;
      text += ` → ${v.id} (${obs.holders.heldBy(v.id).length} buckets)`;
      switch (f.kind) {
        case 'kill':
          obs.timer.begin('kill', v.id, obs.holders.heldBy(v.id), now);
          pool.kill(v);
          replaceLater(v.id);
          break;
        case 'scale-down':
          obs.timer.begin('scale-down', v.id, obs.holders.heldBy(v.id), now);
          void pool.terminate(v);
          break;
        case 'pause':
          pool.pause(v);
          setTimeout(() => pool.resume(v), f.durationMs);
          break;
        case 'zombie':
          text += await zombie(v, f.durationMs ?? 3 * o.timings.leaseDurationMs);
          break;
        case 'partition':
          sim.clientFaults.set({ user: v.id, action: f.partition === 'deny' ? { kind: 'deny', code: 503 } : { kind: 'blackhole' } });
          setTimeout(() => sim.clientFaults.clear({ user: v.id }), f.durationMs);
          break;
        case 'lag':
          sim.clientFaults.set({ user: v.id, action: lagAction(f.lagMs ?? 1000) });
          setTimeout(() => {
            if (o.lagAllMs) sim.clientFaults.set({ user: v.id, action: lagAction(o.lagAllMs) });
            else sim.clientFaults.clear({ user: v.id });
          }, f.durationMs);
          break;
        default:
      }
    }
    o.log(`  ${text}`);
    return text;
  }
}
