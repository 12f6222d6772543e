/**
 * The chaos run's fault schedule: a pure function of the seed. Each fault names a victim by
 * its index among the replicas alive at that moment (taken modulo their count at run time), so
 * the same seed replays the same faults against the same replica positions.
 *
 * Kinds: `kill` (SIGKILL, then a replacement under a new id), `pause` (SIGSTOP for
 * `durationMs`, then SIGCONT), `zombie` (its requests held by the simulator and the process
 * paused for about `durationMs`: the held writes are served after its buckets were taken over,
 * while the process still sleeps; then SIGCONT), `partition` (the victim's requests black-holed or denied for
 * `durationMs`), `lag` (the victim's watch frames arrive `lagMs` late for `durationMs`),
 * `scale-up` (one more replica), `scale-down` (SIGTERM: graceful release). The replica count
 * stays within [minReplicas, maxReplicas]: a scale-up at the maximum becomes a scale-down and
 * the reverse, so the schedule itself keeps track of the count.
 */
import { createPrng } from '../../../src/sim/actors/prng.js';

export type FaultKind = 'kill' | 'pause' | 'zombie' | 'partition' | 'lag' | 'scale-up' | 'scale-down';

export interface Fault {
  /** Position in the schedule, from 0. */
  index: number;
  /** Ms after the start of the faults. */
  atMs: number;
  kind: FaultKind;
  /** Index among the live replicas (modulo their count). */
  victim: number;
  /** pause, partition, lag: how long. */
  durationMs?: number;
  partition?: 'blackhole' | 'deny';
  lagMs?: number;
  /** Replicas alive after this fault. */
  replicasAfter: number;
}

export interface FaultScheduleOptions {
  seed: number;
  /** How many of each kind (scale-up and scale-down may swap to keep the count in bounds). */
  mix: Partial<Record<FaultKind, number>>;
  initialReplicas: number;
  minReplicas: number;
  maxReplicas: number;
  leaseDurationMs: number;
}

/** The main run's mix: 50 faults, 24 of them kills. */
export const MAIN_MIX: Readonly<Record<FaultKind, number>> = Object.freeze({ kill: 24, pause: 4, zombie: 3, partition: 5, lag: 4, 'scale-up': 5, 'scale-down': 5 });

export function faultSchedule(o: FaultScheduleOptions): Fault[] {
  const prng = createPrng(o.seed).fork('scale-out-faults');
  const bag: FaultKind[] = [];
  for (const [kind, n] of Object.entries(o.mix) as Array<[FaultKind, number]>) for (let i = 0; i < n; i++) bag.push(kind);
  // Fisher–Yates with the seeded stream.
  for (let i = bag.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [bag[i], bag[j]] = [bag[j]!, bag[i]!];
  }
  const out: Fault[] = [];
  let at = 0;
  let replicas = o.initialReplicas;
  const lease = o.leaseDurationMs;
  for (const [index, drawn] of bag.entries()) {
    let kind = drawn;
    if (kind === 'scale-up' && replicas >= o.maxReplicas) kind = 'scale-down';
    else if (kind === 'scale-down' && replicas <= o.minReplicas) kind = 'scale-up';
    if (kind === 'scale-up') replicas++;
    if (kind === 'scale-down') replicas--;
    const victim = prng.int(1 << 16);
    const f: Fault = { index, atMs: at, kind, victim, replicasAfter: replicas };
    // Faults that last take 2–3 lease durations; the next one starts once it is lifted and the
    // buckets had a moment to settle, so one victim at a time is impaired.
    if (kind === 'pause' || kind === 'zombie' || kind === 'partition' || kind === 'lag') {
      f.durationMs = Math.round(2 * lease + prng.float() * lease);
      if (kind === 'partition') f.partition = prng.chance(0.5) ? 'blackhole' : 'deny';
      if (kind === 'lag') f.lagMs = 500 + prng.int(1500);
    }
    out.push(f);
    at += (f.durationMs ?? 0) + Math.round(1.2 * lease + prng.float() * 0.8 * lease);
  }
  return out;
}

/** A one-line description for logs and the results file. */
export function describeFault(f: Fault): string {
  const extra = f.kind === 'partition' ? ` ${f.partition}` : f.kind === 'lag' ? ` ${f.lagMs} ms` : '';
  return `#${f.index} t+${(f.atMs / 1000).toFixed(1)}s ${f.kind}${extra}${f.durationMs ? ` for ${(f.durationMs / 1000).toFixed(1)}s` : ''}`;
}
