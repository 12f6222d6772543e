/**
 * The controller replicas of the scale-out bench: each a separate OS process
 * (`node bin/fleet-attach.js run --sharding …`) acting as its own simulator user, so that the
 * write log and the client faults tell them apart. Identities come from a pool (r1, r2, …):
 * a replica that dies or is replaced never comes back under the same id, as a restarted pod
 * gets a new name. Every process dies with the bench (children.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnNode, type Child } from '../children.js';
import { sampleProcess, type ProcSampler } from '../proc-stats.js';
import { UNSAFE_SHARD_GUARDS_ENV } from '../../../src/cli/controller-flags.js';

export interface Replica {
  readonly id: string;
  readonly child: Child;
  readonly pid: number;
  /** performance.now() at spawn. */
  readonly startedAt: number;
  readonly sampler: ProcSampler;
  /** Set once the process has exited (any cause). */
  exitedAt?: number;
  exitCode?: number | null;
  paused: boolean;
}

export interface ReplicaTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  graceMs: number;
}

export interface ReplicaPoolOptions {
  /** Kubeconfig YAML acting as a given user. */
  kubeconfigFor: (user: string) => string;
  /** Ids that may be used, in order (the simulator's users). */
  ids: readonly string[];
  /** Scratch directory for the kubeconfig files. */
  dir: string;
  buckets: number;
  timings: ReplicaTimings;
  /** Guards switched off (FLEET_ATTACH_UNSAFE_SHARD_GUARDS). */
  guardsOff?: readonly string[];
  /** More `run` flags. */
  extraArgs?: readonly string[];
  /** Called when a replica exits without the pool asking it to. */
  onUnexpectedExit?: (r: Replica) => void;
}

export interface ReplicaPool {
  start(): Replica;
  /** Running replicas (paused ones included), oldest first. */
  live(): Replica[];
  all(): Replica[];
  kill(r: Replica): void;
  pause(r: Replica): void;
  resume(r: Replica): void;
  /** SIGTERM and wait for the exit (SIGKILL after `graceMs`). */
  terminate(r: Replica, graceMs?: number): Promise<void>;
  stopAll(): Promise<void>;
}

const BIN = new URL('../../../bin/fleet-attach.js', import.meta.url).pathname;
const GUARD = new URL('../exit-with-parent.js', import.meta.url).pathname;
const ms = (v: number) => `${v}ms`;

export function createReplicaPool(o: ReplicaPoolOptions): ReplicaPool {
  mkdirSync(o.dir, { recursive: true });
  const replicas: Replica[] = [];
  const expected = new Set<Replica>();
  let next = 0;
  return {
    start() {
      const id = o.ids[next++];
      if (id === undefined) throw new Error(`no replica id left in the pool of ${o.ids.length}`);
      const kubeconfig = join(o.dir, `${id}.kubeconfig`);
      writeFileSync(kubeconfig, o.kubeconfigFor(id));
      const t = o.timings;
      const args = [
        'run', '--kubeconfig', kubeconfig, '--sharding', '--replica-id', id, '--shard-buckets', String(o.buckets),
        '--leader-elect-lease-duration', ms(t.leaseDurationMs), '--leader-elect-renew-deadline', ms(t.renewDeadlineMs),
        '--leader-elect-retry-period', ms(t.retryPeriodMs), '--shard-grace', ms(t.graceMs),
        '--listen', '127.0.0.1:0', '--workers', '1', '--kube-api-qps', '2000', '--kube-api-burst', '2000',
        // Left-over attach locks (a replica killed between a detach and the lock's release) are
        // cleared within the run; the hold stays above the longest partition (9 s).
        '--shard-lock-hold', '20s', '--shard-lock-sweep-period', '5s',
        ...(o.extraArgs ?? []),
      ];
      const env: NodeJS.ProcessEnv = { LOG_LEVEL: 'warn' };
      if (o.guardsOff && o.guardsOff.length > 0) env[UNSAFE_SHARD_GUARDS_ENV] = o.guardsOff.join(',');
      const child = spawnNode(['--import', GUARD, '--max-old-space-size=512'], BIN, args, env);
      const r: Replica = { id, child, pid: child.pid, startedAt: performance.now(), sampler: sampleProcess(child.pid, 2000), paused: false };
      replicas.push(r);
      void child.exited.then((code) => {
        r.exitedAt = performance.now();
        r.exitCode = code;
        if (!expected.has(r)) o.onUnexpectedExit?.(r);
      });
      return r;
    },
    live: () => replicas.filter((r) => r.exitedAt === undefined && !expected.has(r)),
    all: () => [...replicas],
    kill(r) {
      expected.add(r);
      r.child.process.kill('SIGKILL');
    },
    pause(r) {
      r.paused = true;
      r.child.process.kill('SIGSTOP');
    },
    resume(r) {
      r.paused = false;
      r.child.process.kill('SIGCONT');
    },
    async terminate(r, graceMs = 30_000) {
      expected.add(r);
      if (r.paused) this.resume(r);
      await r.child.stop(graceMs);
    },
    async stopAll() {
      await Promise.all(replicas.filter((r) => r.exitedAt === undefined).map((r) => this.terminate(r, 15_000)));
    },
  };
}
