/**
 * The controller manager: builds every component and runs them in order (A1): watches →
 * (leader election) → actual state (A2–A3) → desired state (A4) → populator periodic passes →
 * reconciler. `stop()` reverses it: no new operations, running ones abandoned (the state is
 * rebuilt at the next start, A2–A3), watches closed, pool stopped.
 *
 * Standby replicas (leader election on, lease held by another) keep their watches and caches
 * warm; they fill the state and start acting only once they lead.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { createWorldState, type WorldState } from '../cache/world-state.js';
import { createPlanner, type Planner } from '../kernel/planner.js';
import { loadKubeConfig, type FleetKubeConfig } from '../kube/kube-config.js';
import { apiSettled } from './api-settled.js';
import { createKubeApiClient, type KubeApiClient } from '../kube/api-client.js';
import { createReflector, type Reflector } from '../kube/reflector.js';
import type { RequestHook } from '../kube/request-hook.js';
import {
  CSI_DRIVER_KIND, CSI_NODE_KIND, NODE_KIND, POD_KIND, PV_KIND, PVC_KIND, VOLUME_ATTACHMENT_KIND,
} from '../kube/projections/index.js';
import { createAttachOnlyPlugins, createCsiPlugin, createCsiTranslator, createMigrationPredicate, createVolumePluginManager } from '../plugins/index.js';
import { createNodeStatusUpdater } from '../statusupdater/index.js';
import { createEventRecorder, DROP_CAUSES } from '../events/index.js';
import { createLeaderElector, type LeaderElector } from '../leaderelection/index.js';
import { createControllerMetrics, type ControllerMetrics } from '../metrics/controller-metrics.js';
import { createDesiredStatePopulator, type DesiredStatePopulator } from '../populator/desired-state-populator.js';
import { fleetError } from '../errors/index.js';
import { loadActualState } from '../populator/actual-state-loader.js';
import { NodeConditionCounter } from '../populator/node-condition-counter.js';
import { createOperationExecutor, type OperationExecutor } from '../operations/operation-executor.js';
import { createReconciler, type Reconciler } from '../reconciler/reconciler.js';
import { logger } from '../log/logger.js';
import { createJsonSieve, type SieveBuild } from '../kube/sieve/json-sieve.js';
import type { ReflectorOptions } from '../kube/reflector-core.js';
import * as adapt from './adapters.js';
import { DEFAULT_CONTROLLER_OPTIONS, type ControllerOptions } from './controller-options.js';
import { wireMetrics } from './wire-metrics.js';
import { createInspectionView } from './inspection.js';
import { createDashboardModel, type DashboardModel } from '../dashboard/dashboard-model.js';
import type { ControllerObserver } from '../operations/controller-observer.js';
import { createAttachStartLatency } from '../metrics/attach-start-latency.js';
import { createNodeHandover } from '../populator/node-handover.js';
import { createShardRoles, type ShardRoles } from './shard-roles.js';
import { createShardWrites } from './shard-writes.js';
import { createAttachmentsByPv } from './attachments-by-pv.js';
import { createLockNeeds } from './lock-needs.js';

export interface Controller {
  readonly state: WorldState;
  readonly metrics: ControllerMetrics;
  readonly reconciler: Reconciler;
  readonly executor: OperationExecutor;
  readonly populator: DesiredStatePopulator;
  /** Healthy managed and out-of-service node counts, O(1). */
  readonly conditions: NodeConditionCounter;
  readonly reflectors: ReadonlyArray<Reflector<unknown>>;
  readonly kc: FleetKubeConfig;
  readonly api: KubeApiClient;
  /**
   * The dashboard model (src/dashboard): told of the controller's decisions from the start,
   * sweeping and sampling from `startController` until `stop()`.
   */
  readonly dashboard: DashboardModel;
  /** 'single' without leader election; 'shard' for one of several active replicas (`sharding`). */
  role(): 'leader' | 'standby' | 'single' | 'shard';
  /** With `sharding`: the replica's membership and buckets. */
  readonly shards?: ShardRoles;
  /** True once every watch has synced and (if leader) the state was filled. */
  ready(): { ready: boolean; reason?: string };
  /** Resolves once this replica acts (synced and leading). */
  acting(): Promise<void>;
  /**
   * Resolves, with the reason, once this replica can never act again: it lost its leader lease,
   * or its start-up failed. The process should exit and be restarted (upstream exits).
   */
  mustRestart(): Promise<string>;
  /** Stops everything in order; concurrent calls share one stop. */
  stop(): Promise<void>;
}

export async function startController(partial: Partial<ControllerOptions> & Pick<ControllerOptions, 'kubeconfig'>): Promise<Controller> {
  const o: ControllerOptions = { ...DEFAULT_CONTROLLER_OPTIONS, ...partial };
  const log = logger('controller');
  const kc = loadKubeConfig(o.kubeconfig);
  kc.http2 = o.kubeApiHttp2;
  kc.sizeAgentFor(o.kubeApiMaxInFlight); // before the first request builds the agent
  const metrics = o.metrics ?? createControllerMetrics({ perNodeVolumeMetric: o.perNodeVolumeMetric });
  // Every API request is counted: the client's calls and the reflectors' list pages and watches.
  const onRequest: RequestHook = (r) => {
    metrics.apiRequests.inc({ verb: r.verb, resource: r.resource, code: String(r.code) });
    metrics.apiRequestDuration.observe({ verb: r.verb, resource: r.resource }, r.durationMs / 1000);
    if (r.queuedMs !== undefined) metrics.apiRequestQueue.observe({ verb: r.verb, resource: r.resource }, r.queuedMs / 1000);
    o.onRequest?.(r);
  };
  // The reconciler is built below, after the client and the populator that wake it; the elector
  // once the watches have synced.
  let loop: Reconciler | undefined;
  let elector: LeaderElector | undefined;
  let shards: ShardRoles | undefined;
  const api = createKubeApiClient({
    kc,
    qps: o.kubeApiQps,
    burst: o.kubeApiBurst,
    maxInFlight: o.kubeApiMaxInFlight,
    onThrottle: (ms) => metrics.rateLimiterWait.observe(ms / 1000),
    onRequest,
    onBacklogDrained: () => loop?.apiRoom(),
    // Nothing goes on the wire once stop() has begun, nor, with leader election, unless this
    // replica leads at that moment (a standby never writes; one that stepped down sends none of
    // what it had queued). Lease calls are not asked.
    // With sharding, each write is fenced by its node's bucket (shard-roles.ts) and nothing goes
    // out once the membership is lost.
    maySend: () => !stopped && (o.sharding ? shards?.membership.isLive() === true : !o.leaderElect || elector?.isLeader() === true),
  });
  const state = createWorldState({});
  // The model reads the controller's InspectionView, built once the controller object exists;
  // the components built before it tell this forwarder, which drops what comes before then.
  let dashboard: DashboardModel | undefined;
  const attachStart = createAttachStartLatency({ now: () => performance.now() / 1000, histogram: metrics.podToAttachStart });
  const observer: ControllerObserver = {
    observe: (e) => {
      attachStart.observe(e);
      dashboard?.observer.observe(e);
    },
  };
  const planner: Planner = createPlanner({ state, workers: o.workers, inlineBelowPairs: o.inlinePlanBelowPairs, ...(o.kernelBuild ? { build: o.kernelBuild } : {}) });
  const rOpts = {
    kc,
    pageSize: o.listPageSize,
    ...listReaderOptions(o.listReader, planner, o.kernelBuild ?? 'release'),
    ...(o.watchdogMs ? { watchdogMs: o.watchdogMs } : {}),
    ...(o.bookmarkIntervalMs ? { bookmarkIntervalMs: o.bookmarkIntervalMs } : {}),
    onRequest,
  };
  const pods = createReflector({ ...rOpts, kind: POD_KIND });
  const pvcs = createReflector({ ...rOpts, kind: PVC_KIND });
  const pvs = createReflector({ ...rOpts, kind: PV_KIND });
  const nodes = createReflector({ ...rOpts, kind: NODE_KIND });
  const vas = createReflector({ ...rOpts, kind: VOLUME_ATTACHMENT_KIND });
  const drivers = createReflector({ ...rOpts, kind: CSI_DRIVER_KIND });
  const csiNodes = createReflector({ ...rOpts, kind: CSI_NODE_KIND });
  const reflectors = [pods, pvcs, pvs, nodes, vas, drivers, csiNodes] as Array<Reflector<unknown>>;

  // One replica of several: every write fenced by its node's bucket and at the data (shard-writes.ts).
  const guardsOff = o.sharding ? o.unsafeShardGuardsOff ?? [] : [];
  const attachmentsByPv = o.sharding ? createAttachmentsByPv({ volumeAttachments: vas }) : undefined;
  const sharded = attachmentsByPv ? createShardWrites({
    api, roles: () => shards, nodes, volumeAttachments: vas, guardsOff, log,
    attachedNodes: (pv) => attachmentsByPv.nodesOf(pv),
    lockNeeds: createLockNeeds({ state, pvs, attachments: attachmentsByPv }),
    lockHoldMs: o.shardLockSweepHoldMs ?? 120_000,
  }) : undefined;
  // Tests only: with the 'ownership' guard off, this replica acts on every node (membership liveness stays).
  const anyNode = guardsOff.includes('ownership');
  if (guardsOff.length > 0) log.warn({ guardsOff }, `UNSAFE, tests only: sharding guards switched off: ${guardsOff.join(', ')}`);
  const csi = createCsiPlugin({ api: sharded?.volumeAttachments ?? adapt.volumeAttachmentApi(api), attachments: adapt.volumeAttachmentCache(vas), drivers: adapt.csiDriverCache(drivers), csiTimeoutMs: o.csiTimeoutMs });
  const plugins = createVolumePluginManager({ plugins: [csi, ...createAttachOnlyPlugins()] });
  const translator = createCsiTranslator({ isMigrated: createMigrationPredicate({ csiNodeAnnotation: (n) => csiNodes.get(n)?.migratedPlugins.join(',') }) });
  // Both series exist from the start, so a dashboard reads 0 before the first drop.
  for (const cause of DROP_CAUSES) metrics.eventsDropped.inc({ cause }, 0);
  const events = createEventRecorder({
    sink: adapt.eventSink(api), waitingForDetachText: o.waitingForDetachText,
    onDropped: (cause) => metrics.eventsDropped.inc({ cause }),
  });
  const conditions = new NodeConditionCounter();
  // The reconciler is built below; a pod reaches the populator only after start().
  const ownsNode = o.sharding ? (n: string) => anyNode || shards?.ownsNode(n) === true : undefined;
  const populator = createDesiredStatePopulator({ conditions, state, pods, pvcs, pvs, nodes, plugins, translator, populatorPeriodMs: o.dswPopulatorPeriodMs, listPodsPeriodMs: o.dswListPodsPeriodMs,
    ...(ownsNode ? { ownsNode } : {}),
    onPeriodicPass: (pass, s) => metrics.periodicPassBusy.observe({ pass }, s.busyMs / 1000),
    onDesiredAdded: () => loop?.wake(),
    observer,
  });
  metrics.setSkippedVolumesSource(() => populator.skippedVolumes());
  const podName = (uid: string) => populator.podName(uid);
  const executor = createOperationExecutor({
    state, plugins, metrics, events, podName, observer,
    ...(sharded ? { mayStart: (n: string) => anyNode || shards?.mayStart(n) === true, ...(sharded.attachLock ? { attachLock: sharded.attachLock } : {}) } : {}),
    ...(guardsOff.includes('live-in-use') ? { skipLiveVolumesInUse: true } : {}),
    liveVolumesInUse: async (name) => {
      const node = await api.getNode(name);
      if (node === undefined) return 'not-found';
      // Unreadable is not empty: the detach must not go ahead on it (F9 fails, the pair stays).
      if (node.volumesInUse === null) throw fleetError('FA_ERR_KUBE_OBJECT_INVALID', `node ${name}: status.volumesInUse could not be read`);
      return node.volumesInUse;
    },
  });
  const statusUpdater = createNodeStatusUpdater({ api: sharded?.nodeStatus ?? adapt.nodeStatusApi(api), attachments: adapt.reportedAttachments(state), nodes: adapt.nodeLookup(nodes) });
  const reconciler = createReconciler({
    state, planner, executor, statusUpdater, events, metrics, podName, verify: { plugins }, observer,
    apiBacklog: () => api.backlog().waiting,
    maxOperationStartsPerPass: o.maxOperationStartsPerPass, maxApiBacklog: o.maxApiBacklog,
    loopPeriodMs: o.loopPeriodMs, wakeMinGapMs: o.loopWakeMinGapMs, maxWaitForUnmountMs: o.maxWaitForUnmountMs, disableForceDetachOnTimeout: o.disableForceDetachOnTimeout,
    syncPeriodMs: o.reconcileSyncPeriodMs, disableSync: o.disableReconcileSync,
  });
  loop = reconciler;
  wireMetrics({ metrics, state, reflectors });

  let synced = false;
  let filled = false;
  let stopped = false;
  let steppingDown = false;
  let settled = false;
  let restartReason: string | undefined;
  let restartResolve!: (reason: string) => void;
  const restartPromise = new Promise<string>((r) => (restartResolve = r));
  const mustRestart = (reason: string) => {
    if (restartReason !== undefined) return;
    restartReason = reason;
    restartResolve(reason);
  };
  let actingResolve!: () => void;
  const actingPromise = new Promise<void>((r) => (actingResolve = r));
  const abort = new AbortController();
  for (const r of reflectors) void r.start(abort.signal);

  let filling = false; // from the first act() on: `filled` comes later, once the loop runs
  const fillAndStart = async () => {
    // After the caller's turn: the elector's renew loop goes on while the state fills.
    await new Promise<void>((r) => setImmediate(r));
    const halted = () => stopped || steppingDown;
    if (halted()) return;
    if (shards) {
      // One of several replicas: the state starts empty and takes in each bucket's nodes as the
      // bucket is claimed (A2–A4 for those nodes: node-handover.ts).
      populator.start();
      filled = true;
      reconciler.start();
      shards.start();
      actingResolve();
      return;
    }
    const loaded = loadActualState({ state, nodes: nodes.values(), volumeAttachments: vas.values(), pv: (n) => pvs.get(n), plugins, translator, log, conditions });
    log.info(loaded, 'actual state loaded (A2–A3)');
    populator.start();
    const t0 = performance.now();
    if (!(await populator.fill(halted))) return; // A4, in slices
    log.info({ ms: Math.round(performance.now() - t0) }, 'desired state filled (A4)');
    if (halted()) return;
    filled = true;
    reconciler.start();
    actingResolve();
  };
  // Never throws: a start-up that fails leaves a replica that cannot act, so it asks for a restart.
  const act = async () => {
    if (stopped || filling) return;
    filling = true;
    try {
      await fillAndStart();
    } catch (err) {
      log.error({ err }, 'start-up failed; restart required');
      mustRestart(`start-up failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  void Promise.all(reflectors.map((r) => new Promise<void>((res) => r.onSynced(res)))).then(() => {
    synced = true;
    log.info('all watches synced');
    if (stopped) return;
    if (o.sharding) {
      const handover = createNodeHandover({
        state, populator, nodes, volumeAttachments: vas, pv: (n) => pvs.get(n), plugins, translator, conditions, log,
        writingStatus: (n) => statusUpdater.writing(n),
      });
      shards = createShardRoles({
        api, namespace: o.leaderElectNamespace, identity: o.identity ?? defaultReplicaId(), buckets: o.shardBuckets,
        leaseDurationMs: o.leaderElectLeaseDurationMs, renewDeadlineMs: o.leaderElectRenewDeadlineMs, retryPeriodMs: o.leaderElectRetryPeriodMs,
        graceMs: o.shardGraceMs, ...(o.shardStableMs !== undefined ? { stableMs: o.shardStableMs } : {}),
        handover: () => handover, stopped: () => stopped, log,
        onLost: (reason) => void loseShards(reason),
        lockSweep: () => sharded?.lockSweep, lockSweepMs: o.shardLockSweepMs ?? 30_000,
      });
      return act();
    }
    if (!o.leaderElect) return act();
    elector = createLeaderElector({
      api, namespace: o.leaderElectNamespace, name: o.leaderElectName,
      identity: o.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`,
      leaseDurationMs: o.leaderElectLeaseDurationMs, renewDeadlineMs: o.leaderElectRenewDeadlineMs, retryPeriodMs: o.leaderElectRetryPeriodMs,
      // One-shot, as client-go's Run: a replica whose loop and executor have stopped cannot act
      // again, so it must not take the lease again either.
      campaignAgain: false,
      // The lease is released only once no call of this replica is on the wire or queued, so a
      // successor cannot race a write of ours (the send check refuses the queued ones).
      releaseOnStop: () => settled,
      onStartedLeading: () => { metrics.leader.set(1); void act(); },
      onStoppedLeading: async () => {
        steppingDown = true; // a fill under way must not start the loop after this
        metrics.leader.set(0);
        api.refuseWaiting(); // maySend is false now: the queued calls end at once
        // Never two actors: a replica that lost the lease stops acting at once and exits its loop.
        await reconciler.stop();
        statusUpdater.close(); // no status writes from a replica that no longer leads
        executor.close();
        // Its loop and executor cannot be restarted, so it must never take the lease again (it
        // would hold it without acting and starve the other replicas): report not ready and ask
        // for the restart at once (upstream exits); the lease is released once its calls settled.
        const lost = !stopped;
        if (lost) mustRestart('lost the leader lease');
        settled = await apiSettled(api, o.leaderElectRenewDeadlineMs);
        if (!lost) return;
        void elector?.stop();
        log.error('lost the leader lease; stopped acting and campaigning, restart required');
        process.emitWarning('fleet-attach lost its leader lease');
      },
    });
    void elector.start(abort.signal);
  });

  // A replica whose membership is lost stops acting at once and for good (as after losing the
  // leader lease): its peers fence it and take its buckets over.
  async function loseShards(reason: string): Promise<void> {
    if (stopped || stopping !== undefined) return; // a stop releases the membership itself
    log.error({ reason }, 'shard membership lost; stopped acting, restart required');
    mustRestart(reason);
    api.refuseWaiting();
    await reconciler.stop();
    statusUpdater.close();
    executor.close();
  }

  let stopping: Promise<void> | undefined;
  async function stopAll(): Promise<void> {
    const t0 = performance.now();
    const step = (what: string) => log.info({ ms: Math.round(performance.now() - t0) }, `stop: ${what}`);
    if (shards && restartReason === undefined) {
      // Graceful hand-over: every bucket drained (no new operation, the started ones and the
      // status writes finished) and released, so that peers claim them at once.
      await shards.stop();
      step('buckets handed over');
    }
    stopped = true;
    api.refuseWaiting(); // maySend is false now: the queued calls end at once
    await reconciler.stop();
    step('reconciler stopped');
    statusUpdater.close();
    executor.close();
    csi.close();
    populator.stop();
    await elector?.stop();
    step('leader election stopped');
    abort.abort();
    await Promise.all(reflectors.map((r) => r.stop()));
    step('watches closed');
    attachmentsByPv?.close();
    events.stop();
    dashboard?.stop();
    await planner.close();
    kc.close();
    step('done');
  }

  const ctl: Controller = {
    state, metrics, reconciler, executor, populator, conditions, reflectors, kc, api,
    get dashboard(): DashboardModel {
      return model;
    },
    get shards() {
      return shards;
    },
    role: () => (o.sharding ? 'shard' : !o.leaderElect ? 'single' : elector?.isLeader() ? 'leader' : 'standby'),
    ready() {
      if (!synced) {
        const pending = reflectors.filter((r) => !r.synced()).map((r) => r.resource);
        return { ready: false, reason: `watches not synced: ${pending.join(', ')}` };
      }
      if (restartReason !== undefined) return { ready: false, reason: `${restartReason}; restart required` };
      if (o.leaderElect && !elector?.isLeader()) return { ready: true };
      return filled ? { ready: true } : { ready: false, reason: 'filling state' };
    },
    acting: () => actingPromise,
    mustRestart: () => restartPromise,
    stop() {
      stopping ??= stopAll();
      return stopping;
    },
  };
  // The index sweeps only while the dashboard is read (a minute after the last read it stops),
  // so a controller nobody watches spends nothing on it.
  const model = createDashboardModel({ state, view: createInspectionView(ctl, o), index: { idleAfterMs: 60_000 } });
  dashboard = model;
  if (!stopped) model.start();
  return ctl;
}

/**
 * How the reflectors read list pages (--list-reader). The default sieves in the planner's
 * workers: the initial sync is when the main thread is busiest and the pool idlest (no plans
 * run before it ends), and at 50k nodes the sieve on the main thread synced slower than the
 * whole parse in a worker (README, "List pages go through a JSON sieve"). A worker reader
 * without a pool (--workers 0) reads on the main thread, sieving if asked to.
 */
function listReaderOptions(reader: ControllerOptions['listReader'], planner: Planner, build: SieveBuild): Pick<ReflectorOptions<unknown>, 'sieve' | 'readPage'> {
  const sieved = reader === 'sieve' || reader === 'worker-sieve';
  if ((reader === 'worker' || reader === 'worker-sieve') && planner.pool) return { readPage: adapt.listPageReader(planner.pool, sieved ? build : undefined) };
  return sieved ? { sieve: createJsonSieve({ build }) } : {};
}

/** A replica identity for the Leases: the host name as a DNS label, and a random suffix. */
function defaultReplicaId(): string {
  const host = hostname().toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/^-+|-+$/g, '').slice(0, 50) || 'fleet-attach';
  return `${host}-${randomBytes(4).toString('hex')}`;
}
