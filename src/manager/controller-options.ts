/**
 * Options of the controller, with upstream defaults (docs/upstream-rules.md §2). The `run` command
 * maps its flags onto these; tests shorten the timers.
 */
import type { LoadKubeConfigOptions } from '../kube/kube-config.js';
import type { ControllerMetrics } from '../metrics/controller-metrics.js';
import type { RequestHook } from '../kube/request-hook.js';

/**
 * The sharding guards a test may switch off:
 * - 'volume-lock': no PV attach lock for ReadWriteOnce volumes;
 * - 'status-cas': node status written as a plain merge patch, not a compare-and-swap;
 * - 'status-version': the node status compare-and-swap tests the list only, not the Node's resourceVersion;
 * - 'live-in-use': no live read of the Node's volumesInUse before a detach (the cached one stays);
 * - 'ownership': the replica acts on every node, whoever holds its bucket (membership liveness stays).
 */
export const SHARD_GUARDS = ['volume-lock', 'status-cas', 'status-version', 'live-in-use', 'ownership'] as const;
export type ShardGuard = (typeof SHARD_GUARDS)[number];

export interface ControllerOptions {
  kubeconfig: LoadKubeConfigOptions;
  loopPeriodMs: number;
  /** A new desired pod brings the next pass forward, this long after the last at the earliest; 0: fixed period (reconciler.ts Wake-ups). */
  loopWakeMinGapMs: number;
  maxWaitForUnmountMs: number;
  disableForceDetachOnTimeout: boolean;
  reconcileSyncPeriodMs: number;
  disableReconcileSync: boolean;
  dswPopulatorPeriodMs: number;
  dswListPodsPeriodMs: number;
  csiTimeoutMs: number;
  kubeApiQps: number;
  kubeApiBurst: number;
  /** Controller requests on the wire at once (in-flight-limiter.ts). */
  kubeApiMaxInFlight: number;
  /** Hot calls over HTTP/2 where the server offers it (FleetKubeConfig.http2). */
  kubeApiHttp2: boolean;
  /** Objects per page of the reflectors' lists (`limit`). */
  listPageSize: number;
  /** How list pages are read (list-page.ts): sieved on the main thread, sieved in the plan workers, parsed whole in the workers, or parsed whole in place. */
  listReader: 'sieve' | 'worker-sieve' | 'worker' | 'inline';
  /** Admission of the reconciler (reconciler.ts): operation starts per pass, and the API backlog that pauses them. */
  maxOperationStartsPerPass: number;
  maxApiBacklog: number;
  /** Plan worker threads; 0 = main thread. */
  workers: number;
  /** With workers, smaller plans still run on the main thread (planner.ts inlineBelowPairs). */
  inlinePlanBelowPairs: number;
  kernelBuild?: 'debug' | 'release';
  leaderElect: boolean;
  leaderElectNamespace: string;
  leaderElectName: string;
  leaderElectLeaseDurationMs: number;
  leaderElectRenewDeadlineMs: number;
  leaderElectRetryPeriodMs: number;
  identity?: string;
  /** Several active replicas, each acting on the node buckets it holds (shard-roles.ts); no leader election then. */
  sharding: boolean;
  shardBuckets: number;
  /** Wait beyond the lease duration before a silent replica is fenced. */
  shardGraceMs: number;
  /** How long a replica must be seen renewing before it is given buckets (tests shorten it). */
  shardStableMs?: number;
  /**
   * Tests only: sharding guards switched off, to show that the tests catch their absence
   * ({@link SHARD_GUARDS}; the `run` command reads them from FLEET_ATTACH_UNSAFE_SHARD_GUARDS).
   */
  unsafeShardGuardsOff?: ReadonlyArray<ShardGuard>;
  /** Period of the attach lock sweep (lock-sweep.ts), which also runs after each bucket adoption; default 30 s. */
  shardLockSweepMs?: number;
  /**
   * How long a lock must have looked left over, without a break, before it is cleared; default
   * 120 s, beyond the client's and the server's request timeouts (lock-sweep.ts).
   */
  shardLockSweepHoldMs?: number;
  /** H6 (newer upstream text) or H3. */
  waitingForDetachText: boolean;
  perNodeVolumeMetric: boolean;
  /** Reflector watchdog and bookmark period (tests shorten them). */
  watchdogMs?: number;
  bookmarkIntervalMs?: number;
  /** Share a registry (tests) instead of creating one. */
  metrics?: ControllerMetrics;
  /** Also told of every API request: the client's reads and writes, and the reflectors' lists and watches (tests). */
  onRequest?: RequestHook;
}

export const DEFAULT_CONTROLLER_OPTIONS: Omit<ControllerOptions, 'kubeconfig'> = {
  loopPeriodMs: 100,
  loopWakeMinGapMs: 20,
  maxWaitForUnmountMs: 6 * 60_000,
  disableForceDetachOnTimeout: false,
  reconcileSyncPeriodMs: 60_000,
  disableReconcileSync: false,
  dswPopulatorPeriodMs: 60_000,
  dswListPodsPeriodMs: 3 * 60_000,
  csiTimeoutMs: 2 * 60_000,
  kubeApiQps: 20,
  kubeApiBurst: 30,
  kubeApiMaxInFlight: 96,
  kubeApiHttp2: true,
  listPageSize: 500,
  listReader: 'worker-sieve',
  maxOperationStartsPerPass: 5000,
  maxApiBacklog: 500,
  workers: 1,
  inlinePlanBelowPairs: 4_000_000,
  leaderElect: true,
  leaderElectNamespace: 'kube-system',
  leaderElectName: 'fleet-attach',
  leaderElectLeaseDurationMs: 15_000,
  leaderElectRenewDeadlineMs: 10_000,
  leaderElectRetryPeriodMs: 2_000,
  sharding: false,
  shardBuckets: 1024,
  shardGraceMs: 5_000,
  shardLockSweepMs: 30_000,
  shardLockSweepHoldMs: 120_000,
  waitingForDetachText: true,
  perNodeVolumeMetric: false,
};
