/**
 * The controller's Prometheus metrics, one registry per controller instance (tests build
 * several side by side). Upstream names and labels where upstream has the metric
 * (docs/upstream-rules.md §O), `fleet_attach_*` for our own.
 *
 * Gauges whose value lives in the state tables (`attachdetach_controller_total_volumes`,
 * pending/backoff operations, conflicts) are collected on scrape through `collect` callbacks
 * given by the owner of that state, so the hot path never touches prom-client for them.
 * `storage_count_attachable_volumes_in_use` has one series per node: it is only registered when
 * `perNodeVolumeMetric` is true (off by default at fleet scale).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface ControllerMetricsSources {
  /** Desired / actual pair counts per plugin, read on scrape. */
  totalVolumes?: () => Array<{ plugin: string; desired: number; actual: number }>;
  /** Pending and backed-off operations, read on scrape. */
  operations?: () => { pending: number; backoff: number };
  /** Multi-attach conflicts now, read on scrape. */
  conflicts?: () => number;
  /** Per node, attachable volumes in use by scheduled pods, per plugin (only with perNodeVolumeMetric). */
  volumesInUsePerNode?: () => Iterable<{ node: string; plugin: string; count: number }>;
}

export interface ControllerMetrics {
  readonly registry: Registry;
  readonly forcedDetaches: Counter<'reason'>;
  readonly operationDuration: Histogram<'volume_plugin' | 'operation_name' | 'status' | 'migrated'>;
  readonly reconcileDuration: Histogram;
  readonly reconcileFailures: Counter;
  readonly planDuration: Histogram;
  readonly watchEvents: Counter<'resource' | 'type'>;
  readonly watchRelists: Counter<'resource'>;
  readonly watchRestarts: Counter<'resource'>;
  readonly malformedObjects: Counter<'resource'>;
  /** Events not written (`cause`: queue-full, spam-filter). */
  readonly eventsDropped: Counter<'cause'>;
  readonly apiRequests: Counter<'verb' | 'resource' | 'code'>;
  readonly apiRequestDuration: Histogram<'verb' | 'resource'>;
  /** Time a call waited for an in-flight slot and a rate-limiter token before it was sent. */
  readonly apiRequestQueue: Histogram<'verb' | 'resource'>;
  readonly rateLimiterWait: Histogram;
  /** The controller's share of a new pod's wait for its attach (attach-start-latency.ts). */
  readonly podToAttachStart: Histogram;
  /** Event-loop time per completed periodic pass (`pass`: verify, pods-removed, pods-listed). */
  readonly periodicPassBusy: Histogram<'pass'>;
  readonly leader: Gauge;
  /** Sets (or replaces) the scrape-time sources. */
  setSources(sources: ControllerMetricsSources): void;
  /** Sets the scrape-time source of `fleet_attach_desired_volumes_skipped` (the populator's counts by reason). */
  setSkippedVolumesSource(source: () => Iterable<{ reason: string; count: number }>): void;
}

const LOOP_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const OP_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 25, 50, 120, 300, 600];
/** Periodic passes walk every pod or pair: tens of ms at 1k nodes, seconds at 100k. */
const PERIODIC_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Slot waits: sub-millisecond when idle, seconds behind a saturated API server. */
const QUEUE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createControllerMetrics(opts: { perNodeVolumeMetric?: boolean; processMetrics?: boolean } = {}): ControllerMetrics {
  const registry = new Registry();
  let sources: ControllerMetricsSources = {};
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry });

  new Gauge({
    name: 'attachdetach_controller_total_volumes',
    help: 'Number of volumes in A/D Controller',
    labelNames: ['plugin_name', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      // Upstream's collector counts into a map: a (plugin, state) with no entry has no series.
      for (const r of sources.totalVolumes?.() ?? []) {
        if (r.desired > 0) this.set({ plugin_name: r.plugin, state: 'desired_state_of_world' }, r.desired);
        if (r.actual > 0) this.set({ plugin_name: r.plugin, state: 'actual_state_of_world' }, r.actual);
      }
    },
  });
  new Gauge({
    name: 'fleet_attach_operations',
    help: 'Attach/detach operations by state (pending = in flight, backoff = waiting to retry)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const o = sources.operations?.() ?? { pending: 0, backoff: 0 };
      this.set({ state: 'pending' }, o.pending);
      this.set({ state: 'backoff' }, o.backoff);
    },
  });
  new Gauge({
    name: 'fleet_attach_multi_attach_conflicts',
    help: 'Desired (volume, node) pairs blocked because a multi-attach-forbidden volume is attached elsewhere',
    registers: [registry],
    collect() {
      this.set(sources.conflicts?.() ?? 0);
    },
  });
  let skippedVolumes: () => Iterable<{ reason: string; count: number }> = () => [];
  new Gauge({
    name: 'fleet_attach_desired_volumes_skipped',
    help: 'Pod volumes left out of the desired state at their pod\'s last processing, by reason (missing or unbound claim, missing or mismatched PV, not attachable, unsupported source)',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const r of skippedVolumes()) this.set({ reason: r.reason }, r.count);
    },
  });
  if (opts.perNodeVolumeMetric) {
    new Gauge({
      name: 'storage_count_attachable_volumes_in_use',
      help: 'Measure number of volumes in use',
      labelNames: ['node', 'volume_plugin'],
      registers: [registry],
      collect() {
        this.reset();
        for (const r of sources.volumesInUsePerNode?.() ?? []) this.set({ node: r.node, volume_plugin: r.plugin }, r.count);
      },
    });
  }

  return {
    registry,
    forcedDetaches: new Counter({
      name: 'attach_detach_controller_attachdetach_controller_forced_detaches',
      help: 'Number of times the A/D Controller performed a forced detach',
      labelNames: ['reason'],
      registers: [registry],
    }),
    operationDuration: new Histogram({
      name: 'storage_operation_duration_seconds',
      help: 'Storage operation duration',
      labelNames: ['volume_plugin', 'operation_name', 'status', 'migrated'],
      buckets: OP_BUCKETS,
      registers: [registry],
    }),
    reconcileDuration: new Histogram({ name: 'fleet_attach_reconcile_duration_seconds', help: 'Duration of one reconcile pass (plan + acting on it)', buckets: LOOP_BUCKETS, registers: [registry] }),
    reconcileFailures: new Counter({ name: 'fleet_attach_reconcile_failures_total', help: 'Reconcile passes that failed (the plan kernel or its workers); the loop goes on', registers: [registry] }),
    planDuration: new Histogram({ name: 'fleet_attach_plan_duration_seconds', help: 'Duration of the WASM plan of one pass', buckets: LOOP_BUCKETS, registers: [registry] }),
    watchEvents: new Counter({ name: 'fleet_attach_watch_events_total', help: 'Watch events received', labelNames: ['resource', 'type'], registers: [registry] }),
    watchRelists: new Counter({ name: 'fleet_attach_watch_relists_total', help: 'Full relists (initial, 410 Gone)', labelNames: ['resource'], registers: [registry] }),
    watchRestarts: new Counter({ name: 'fleet_attach_watch_restarts_total', help: 'Watch restarts after errors, closes or the watchdog', labelNames: ['resource'], registers: [registry] }),
    malformedObjects: new Counter({ name: 'fleet_attach_malformed_objects_total', help: 'Objects skipped because they could not be projected', labelNames: ['resource'], registers: [registry] }),
    eventsDropped: new Counter({ name: 'fleet_attach_events_dropped_total', help: 'Events not written: the write queue was full (queue-full) or the per-pod spam filter held them (spam-filter)', labelNames: ['cause'], registers: [registry] }),
    apiRequests: new Counter({ name: 'fleet_attach_api_requests_total', help: 'Kubernetes API requests', labelNames: ['verb', 'resource', 'code'], registers: [registry] }),
    apiRequestDuration: new Histogram({ name: 'fleet_attach_api_request_duration_seconds', help: 'Kubernetes API request duration', labelNames: ['verb', 'resource'], buckets: OP_BUCKETS.map((b) => b / 100), registers: [registry] }),
    apiRequestQueue: new Histogram({ name: 'fleet_attach_api_request_queue_seconds', help: 'Time a Kubernetes API request waited for an in-flight slot and a rate-limiter token before it was sent', labelNames: ['verb', 'resource'], buckets: QUEUE_BUCKETS, registers: [registry] }),
    periodicPassBusy: new Histogram({
      name: 'fleet_attach_periodic_pass_busy_seconds',
      help: 'Event-loop time of one completed periodic pass, summed over its slices (verify: M1 verification of attached volumes; pods-removed: C9; pods-listed: C10)',
      labelNames: ['pass'], buckets: PERIODIC_BUCKETS, registers: [registry],
    }),
    rateLimiterWait: new Histogram({ name: 'fleet_attach_rate_limiter_wait_seconds', help: 'Time API calls waited for the client-side rate limiter (--kube-api-qps)', buckets: LOOP_BUCKETS, registers: [registry] }),
    podToAttachStart: new Histogram({
      name: 'fleet_attach_pod_to_attach_start_seconds',
      help: 'From a pod event adding a (volume, node) pair to the desired state to the start of its attach operation (the create then waits only for an API slot: fleet_attach_api_request_queue_seconds)',
      buckets: [...LOOP_BUCKETS, 5, 10],
      registers: [registry],
    }),
    leader: new Gauge({ name: 'fleet_attach_leader', help: '1 while this replica holds the leader lease', registers: [registry] }),
    setSources(s) {
      sources = s;
    },
    setSkippedVolumesSource(source) {
      skippedVolumes = source;
    },
  };
}
