/**
 * Flags of `fleet-attach run` (and, for the controller half, `demo`). Upstream names and defaults
 * where kube-controller-manager has the setting (docs/upstream-rules.md §2, P1); upstream's fixed timers
 * become flags with the upstream value as default.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fleetError } from '../errors/index.js';
import type { FlagSpecs, ParsedFlags } from './flags.js';
import { SHARD_GUARDS, type ControllerOptions, type ShardGuard } from '../manager/controller-options.js';

export const CONTROLLER_FLAGS = {
  kubeconfig: { kind: 'string', default: '', help: 'kubeconfig file (else $KUBECONFIG, else in-cluster)', upstream: '--kubeconfig' },
  'loop-period': { kind: 'duration', default: 100, min: 1, help: 'reconciler loop period (sliding)', upstream: 'fixed 100ms' },
  'loop-wake-min-gap': { kind: 'duration', default: 20, min: 0, help: 'a new desired pod starts the next pass early, at least this long (and 9× the last pass) after the previous one, and so does the API backlog emptying after a pass it cut short (this long only); 0: only every --loop-period', upstream: 'none (fixed period)' },
  'max-wait-for-unmount': { kind: 'duration', default: 360_000, min: 0, max: 2 ** 30, help: 'force-detach timer for mounted volumes on unhealthy nodes', upstream: 'fixed 6m' },
  'attach-detach-reconcile-sync-period': { kind: 'duration', default: 60_000, min: 1000, help: 'period of the verification that attached volumes are still attached', upstream: '--attach-detach-reconcile-sync-period' },
  'disable-attach-detach-reconcile-sync': { kind: 'bool', default: false, help: 'disable that verification', upstream: '--disable-attach-detach-reconcile-sync' },
  'disable-force-detach-on-timeout': { kind: 'bool', default: false, help: 'never force-detach mounted volumes after the timer (out-of-service still detaches)', upstream: '--disable-force-detach-on-timeout' },
  'dsw-populator-period': { kind: 'duration', default: 60_000, min: 1, help: 'desired-state removal pass period', upstream: 'fixed 1m' },
  'dsw-list-pods-period': { kind: 'duration', default: 180_000, min: 1, help: 'desired-state full pod pass period', upstream: 'fixed 3m' },
  'csi-timeout': { kind: 'duration', default: 120_000, min: 1, help: 'wait for the external attacher per attach/detach', upstream: 'fixed 2m' },
  'kube-api-qps': { kind: 'float', default: 20, min: 0.1, help: "client-side rate limit of the controller's API calls (lists, watches and leases are not limited)", upstream: '--kube-api-qps' },
  'kube-api-burst': { kind: 'int', default: 30, min: 1, help: 'burst of that rate limit', upstream: '--kube-api-burst' },
  'kube-api-http2': { kind: 'bool', default: true, help: 'hot API calls (VolumeAttachment writes, Node reads and status patches, Event writes) over one HTTP/2 connection when the server offers it; false: HTTP/1.1 on an undici keep-alive pool', upstream: 'client-go: HTTP/2 unless DISABLE_HTTP2' },
  'kube-api-max-in-flight': { kind: 'int', default: 96, min: 1, max: 4096, help: 'controller API requests on the wire at once (node status writes and VolumeAttachment deletes first); the rest wait without their timeout running' },
  'list-page-size': { kind: 'int', default: 500, min: 1, max: 100_000, help: 'objects per page of the initial lists and relists (limit/continue)', upstream: "client-go's pager: 500" },
  'list-reader': { kind: 'enum', default: 'worker-sieve', values: ['sieve', 'worker-sieve', 'worker', 'inline'], help: 'how list pages are read: worker-sieve (cut down in WebAssembly to the fields the controller reads, then parsed, in the plan workers; with --workers 0 on the main thread), sieve (the same on the main thread), worker (parsed whole in the plan workers), inline (parsed whole on the main thread)' },
  'max-operation-starts-per-pass': { kind: 'int', default: 5000, min: 1, help: 'attach/detach operations one reconcile pass may start; the rest wait for a later pass' },
  'max-api-backlog': { kind: 'int', default: 500, min: 0, help: 'start no operation while more API requests than this wait for a slot' },
  workers: { kind: 'int', default: Math.min(64, Math.max(1, availableParallelism() - 1)), min: 0, max: 64, help: 'plan worker threads at most (0 = main thread); a worker starts with a task and exits after 30 s without one' },
  'inline-plan-below-pairs': { kind: 'int', default: 4_000_000, min: 0, help: 'plans over fewer (volume, node) pair slots run on the main thread even with workers (0: always in the pool)' },
  'heap-growth': { kind: 'int', default: 50, min: 0, max: 400, help: "how far the JavaScript heap may grow between full collections, in percent of what the last one kept (0: V8's own heuristics, which let it reach about 4× that); the fleet's state is held outside the heap, so full collections are short" },
  'leader-elect': { kind: 'bool', default: true, help: 'leader election on a coordination.k8s.io Lease', upstream: '--leader-elect' },
  'leader-elect-resource-namespace': { kind: 'string', default: 'kube-system', help: 'namespace of the Lease', upstream: '--leader-elect-resource-namespace' },
  'leader-elect-resource-name': { kind: 'string', default: 'fleet-attach', help: 'name of the Lease', upstream: '--leader-elect-resource-name' },
  'leader-elect-lease-duration': { kind: 'duration', default: 15_000, min: 1, help: 'lease duration', upstream: '--leader-elect-lease-duration' },
  'leader-elect-renew-deadline': { kind: 'duration', default: 10_000, min: 1, help: 'renew deadline', upstream: '--leader-elect-renew-deadline' },
  'leader-elect-retry-period': { kind: 'duration', default: 2_000, min: 1, help: 'retry period', upstream: '--leader-elect-retry-period' },
  sharding: { kind: 'bool', default: false, help: 'several active replicas instead of one leader: each acts on the nodes of the buckets it holds through Leases (docs/scale-out.md); takes the --leader-elect-* timings and namespace, and replaces --leader-elect' },
  'shard-buckets': { kind: 'int', default: 1024, min: 1, max: 1 << 20, help: 'node buckets shared out between the replicas (the same on every replica)' },
  'shard-grace': { kind: 'duration', default: 5_000, min: 0, help: 'wait beyond the lease duration before a silent replica is fenced and its buckets taken' },
  'shard-lock-sweep-period': { kind: 'duration', default: 30_000, min: 100, help: 'period of the sweep that clears attach locks left over by a replica that died between a detach and the lock\'s release (also run after each bucket adoption)' },
  'shard-lock-hold': { kind: 'duration', default: 120_000, min: 0, help: 'a lock is left over once nothing has needed it for this long without a break; must exceed the longest time a sent write may take to commit (the request timeouts: 30s client, 60s server)' },
  'replica-id': { kind: 'string', default: '', help: "this replica's identity in the Leases, a DNS label, new at every start: an identity once fenced never acts again (default: host name and a random suffix)" },
  listen: { kind: 'string', default: '127.0.0.1:8080', help: 'inspection API and /metrics address (port 0 picks one)' },
  'http-token': { kind: 'string', default: '', help: 'bearer token every path but /healthz and /readyz then requires (on loopback too); required off loopback' },
  'http-token-file': { kind: 'string', default: '', help: 'file holding the bearer token (e.g. a mounted Secret); one of the two token flags; a blank token or one with whitespace is refused (exit 2)' },
  'per-node-volume-metric': { kind: 'bool', default: false, help: 'export storage_count_attachable_volumes_in_use (one series per node)' },
  'multi-attach-event-text': { kind: 'enum', default: 'waiting-for-detach', values: ['waiting-for-detach', 'multi-attach-error'], help: 'Multi-Attach event wording: current upstream (H6) or older releases (H3)' },
} as const satisfies FlagSpecs;

export type ControllerFlags = ParsedFlags<typeof CONTROLLER_FLAGS>;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Maps parsed flags to controller options; validates cross-flag rules, naming the flags. */
export function controllerOptionsFromFlags(f: Omit<ControllerFlags, 'kubeconfig'>): Omit<ControllerOptions, 'kubeconfig'> & { httpToken?: string } {
  const lease = f['leader-elect-lease-duration'];
  const renew = f['leader-elect-renew-deadline'];
  const retry = f['leader-elect-retry-period'];
  if (!(lease > renew && renew > 1.2 * retry)) {
    throw fleetError('FA_ERR_FLAG_INVALID', 'invalid leader election timing: need --leader-elect-lease-duration > --leader-elect-renew-deadline > 1.2 × --leader-elect-retry-period');
  }
  if (f['leader-elect']) {
    // As client-go's leader election config validation: a lease needs a name and a namespace
    // (the API refuses the create, and the replica would wait as a standby forever, ready).
    for (const flag of ['leader-elect-resource-namespace', 'leader-elect-resource-name'] as const) {
      if (f[flag].trim() === '') throw fleetError('FA_ERR_FLAG_INVALID', `--${flag} must not be empty with --leader-elect`);
    }
  }
  const httpToken = tokenFromFlags(f['http-token'], f['http-token-file']);
  const replicaId = f['replica-id'].trim();
  if (replicaId !== '' && !DNS_LABEL.test(replicaId)) throw fleetError('FA_ERR_FLAG_INVALID', `--replica-id: ${JSON.stringify(replicaId)} is not a DNS label (lower-case letters, digits and '-', at most 63)`);
  return {
    loopPeriodMs: f['loop-period'],
    loopWakeMinGapMs: f['loop-wake-min-gap'],
    maxWaitForUnmountMs: f['max-wait-for-unmount'],
    disableForceDetachOnTimeout: f['disable-force-detach-on-timeout'],
    reconcileSyncPeriodMs: f['attach-detach-reconcile-sync-period'],
    disableReconcileSync: f['disable-attach-detach-reconcile-sync'],
    dswPopulatorPeriodMs: f['dsw-populator-period'],
    dswListPodsPeriodMs: f['dsw-list-pods-period'],
    csiTimeoutMs: f['csi-timeout'],
    kubeApiQps: f['kube-api-qps'],
    kubeApiBurst: f['kube-api-burst'],
    kubeApiMaxInFlight: f['kube-api-max-in-flight'],
    kubeApiHttp2: f['kube-api-http2'],
    listPageSize: f['list-page-size'],
    listReader: f['list-reader'] as ControllerOptions['listReader'],
    maxOperationStartsPerPass: f['max-operation-starts-per-pass'],
    maxApiBacklog: f['max-api-backlog'],
    workers: f.workers,
    inlinePlanBelowPairs: f['inline-plan-below-pairs'],
    leaderElect: f['leader-elect'] && !f.sharding,
    sharding: f.sharding,
    shardBuckets: f['shard-buckets'],
    shardGraceMs: f['shard-grace'],
    shardLockSweepMs: f['shard-lock-sweep-period'],
    shardLockSweepHoldMs: f['shard-lock-hold'],
    ...(replicaId !== '' ? { identity: replicaId } : {}),
    leaderElectNamespace: f['leader-elect-resource-namespace'],
    leaderElectName: f['leader-elect-resource-name'],
    leaderElectLeaseDurationMs: lease,
    leaderElectRenewDeadlineMs: renew,
    leaderElectRetryPeriodMs: retry,
    waitingForDetachText: f['multi-attach-event-text'] === 'waiting-for-detach',
    perNodeVolumeMetric: f['per-node-volume-metric'],
    ...(httpToken ? { httpToken } : {}),
  };
}

/** Tests only: the sharding guards to switch off (ControllerOptions.unsafeShardGuardsOff), a comma list. */
export const UNSAFE_SHARD_GUARDS_ENV = 'FLEET_ATTACH_UNSAFE_SHARD_GUARDS';

/**
 * The guards {@link UNSAFE_SHARD_GUARDS_ENV} names; undefined when it is unset or blank. An
 * unknown name, or the variable without --sharding, is refused (exit 2).
 */
export function unsafeShardGuardsFromEnv(value: string | undefined, sharding: boolean): ShardGuard[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (!sharding) throw fleetError('FA_ERR_FLAG_INVALID', `${UNSAFE_SHARD_GUARDS_ENV} is set, but only --sharding has guards to switch off`);
  const names = value.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const unknown = names.find((n) => !(SHARD_GUARDS as readonly string[]).includes(n));
  if (unknown !== undefined) throw fleetError('FA_ERR_FLAG_INVALID', `${UNSAFE_SHARD_GUARDS_ENV}: unknown guard ${JSON.stringify(unknown)} (known: ${SHARD_GUARDS.join(', ')})`);
  return [...new Set(names)] as ShardGuard[];
}

/**
 * The bearer token of `--http-token` or `--http-token-file` (one of them), trimmed. A token given
 * but blank, or holding whitespace, is refused: neither could ever match an Authorization
 * header, and a blank one would silently turn authentication off on loopback.
 */
function tokenFromFlags(flagValue: string, file: string): string | undefined {
  if (flagValue !== '' && file !== '') throw fleetError('FA_ERR_FLAG_INVALID', 'give --http-token or --http-token-file, not both');
  let flag = '--http-token';
  let token = flagValue.trim();
  if (file !== '') {
    flag = '--http-token-file';
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw fleetError('FA_ERR_FLAG_INVALID', `--http-token-file: cannot read ${file}: ${(err as Error).message}`);
    }
  } else if (flagValue === '') {
    return undefined;
  }
  if (token === '') throw fleetError('FA_ERR_FLAG_INVALID', `${flag}: the token is empty`);
  if (/\s/.test(token)) throw fleetError('FA_ERR_FLAG_INVALID', `${flag}: the token must not contain whitespace (a bearer token is one word)`);
  return token;
}
