/**
 * The desired-state populator: turns Pod, PVC, PV and Node events into desired (volume, node)
 * pairs and node flags in the world state (rules B1–B4, C1–C10, D3–D4).
 *
 * Events only update state (the reconciler acts by level, every pass). Every mutation runs
 * through `state.whenIdle`, so events that arrive while a plan runs are applied right after it.
 *
 * Difference from upstream, on purpose: a pod's removal undoes exactly the pairs its addition
 * made (tracked by name), instead of re-resolving the spec and silently doing nothing when the
 * PVC or PV is gone (C3). Upstream's 1-minute pass (C9) removes such pods later anyway; here
 * they go at once.
 *
 * Second difference, on purpose: PV add/update events re-process the pods of the claim bound to
 * the PV (upstream C8: PV events trigger nothing). A PV that reaches the controller after its
 * claim and pod (separate watches) would otherwise wait for the full pod pass (C10, 3 min).
 * Like a PVC event, this only re-adds: nothing is removed because a PV changed or went away.
 * Everything else follows the rules as written.
 *
 * Not a difference in outcome: a pod update that changes nothing the pod projection reads (the
 * store then keeps the stored record and hands the update one object as both `pod` and `old`,
 * ProjectionCache) is skipped when the pod's last
 * processing left nothing to retry (`PodProcessor.settled`). Upstream processes every update;
 * for such a pod its processing would find each pair already naming the pod and add nothing.
 */
import type { ControllerObserver } from '../operations/controller-observer.js';
import type { WorldState } from '../cache/world-state.js';
import type { NodeRecord, PodRecord, PvRecord, PvcRecord } from '../kube/projections/index.js';
import type { CsiTranslator, VolumePluginManager } from '../plugins/index.js';
import { logger, type Logger } from '../log/logger.js';
import { applyNodeRecord, deleteNodeRecord } from './node-events.js';
import { guardItems, type ItemGuard } from './item-guard.js';
import { PodProcessor, type Source } from './pod-processor.js';
import { runInSlices, sumSliceStats, type PeriodicPassReport, type SliceStats } from './run-in-slices.js';
import type { NodeConditionCounter } from './node-condition-counter.js';
import { pvResolutionChanged, resolvePersistentVolumeOnAnyNode, type SkipReason } from './volume-resolver.js';
import { controllerNow } from '../cache/controller-clock.js';

export type { Source } from './pod-processor.js';

export interface DesiredStatePopulatorDeps {
  state: WorldState;
  pods: Source<PodRecord>;
  pvcs: Source<PvcRecord>;
  pvs: Source<PvRecord>;
  nodes: Source<NodeRecord>;
  plugins: VolumePluginManager;
  translator: CsiTranslator;
  /** C9 period (upstream 1 min, `--dsw-populator-period`). */
  populatorPeriodMs: number;
  /** C10 period (upstream 3 min, `--dsw-list-pods-period`). */
  listPodsPeriodMs: number;
  /** Node condition counts for the inspection API (shared with the start-up loader). */
  conditions?: NodeConditionCounter;
  /** Told what each completed C9 and C10 pass cost (`fleet_attach_periodic_pass_busy_seconds`). */
  onPeriodicPass?: PeriodicPassReport;
  /** Told each time a pod joins a pair's desired pods: new work for the reconciler (its `wake`). */
  onDesiredAdded?: () => void;
  /** Told of pods joining and leaving pairs (src/operations/controller-observer.ts). */
  observer?: ControllerObserver;
  /**
   * Host time, ms: `controllerNow` (monotonic) unless a test gives its own. Timers and backoff
   * that one component records another compares, so all of them take the same clock.
   */
  now?: () => number;
  log?: Logger;
  /**
   * Whether this replica acts for the node (its shard's bucket is adopted): the node events of
   * others are not applied, so their pods find no managed node and stay out of the desired
   * state (B3). All nodes when absent (one replica).
   */
  ownsNode?: (nodeName: string) => boolean;
}

export interface DesiredStatePopulator {
  /** Subscribes to the sources. Call after the actual state was loaded from them (A1–A3). */
  start(): void;
  /** A4 and C10: (re-)processes every pod as a pod add, in one block (tests). */
  addAllPods(): void;
  /**
   * A4 at start-up: {@link addAllPods} in slices with only I/O between them, so that lease
   * renewals, watch events and probes run during a fill that takes seconds on a large fleet.
   * Resolves false if `cancelled` stopped it.
   */
  fill(cancelled: () => boolean): Promise<boolean>;
  /** C9: removes pods that are gone, re-created or terminated, and volumes no longer attachable. */
  removeStalePods(): void;
  /** The unique volume name PV `pvName` resolves to, if the state has that volume (none once the PV is gone). */
  volumesForPv(pvName: string): readonly string[];
  /** Namespace and name of a tracked pod UID (for events and the inspection API). */
  podName(uid: string): { namespace: string; name: string } | undefined;
  /**
   * Processes, as pod adds, the pods scheduled to nodes `on` selects (nodes just adopted by this
   * replica), in slices. Resolves false if `cancelled` stopped it.
   */
  processPodsOn(on: (nodeName: string) => boolean, cancelled: () => boolean): Promise<boolean>;
  /**
   * Takes the pods on nodes `on` selects out of the desired state and the populator's
   * bookkeeping (nodes this replica hands over), as their deletion would, at once.
   * Returns how many pods it removed. Call inside `state.whenIdle`.
   */
  forgetPodsOn(on: (nodeName: string) => boolean): number;
  /**
   * Volumes of scheduled, running pods on managed nodes left out of the desired state, by reason,
   * as of each pod's last processing (`fleet_attach_desired_volumes_skipped`). Volumes with no
   * storage source (configMap, secret, emptyDir, projected, hostPath, nfs, …) are not counted.
   */
  skippedVolumes(): Array<{ reason: SkipReason; count: number }>;
  stop(): void;
}

export function createDesiredStatePopulator(deps: DesiredStatePopulatorDeps): DesiredStatePopulator {
  return new Populator(deps);
}

class Populator implements DesiredStatePopulator {
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly pods: PodProcessor;
  private readonly unsubscribe: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private passRunning = false;
  private stopped = false;
  private lastFullList = -Infinity;

  constructor(private readonly d: DesiredStatePopulatorDeps) {
    this.log = d.log ?? logger('populator');
    this.now = d.now ?? controllerNow;
    const { state, pods, pvcs, pvs, plugins, translator, onDesiredAdded } = d;
    this.pods = new PodProcessor({ state, pods, pvcs, pvs, plugins, translator, onDesiredAdded, observer: d.observer, log: this.log });
  }

  start(): void {
    const d = this.d;
    const p = this.pods;
    this.unsubscribe.push(
      d.nodes.addHandler({
        add: (n) => this.idle(() => this.owns(n.name) && applyNodeRecord(d.state, d.conditions, n, true)),
        update: (n) => this.idle(() => this.owns(n.name) && applyNodeRecord(d.state, d.conditions, n, false)),
        delete: (n) => this.idle(() => deleteNodeRecord(d.state, d.conditions, n, this.log)),
      }),
      d.pods.addHandler({
        add: (pod) => this.idle(() => p.processPod(pod)),
        // An update whose projection is unchanged (the store then hands over one object as
        // both `pod` and `old`: ProjectionCache) is most pod events in a real cluster (status,
        // labels, annotations); processing it again changes nothing unless the last processing
        // left something to retry, which `settled` checks, when idle, as processing would.
        update: (pod, old) =>
          this.idle(() => {
            if (pod !== old || !p.settled(pod)) p.processPod(pod);
          }),
        delete: (pod) => this.idle(() => p.removePod(pod.uid, `${pod.namespace}/${pod.name}`)),
      }),
      d.pvcs.addHandler({
        add: (c) => this.idle(() => this.syncPvc(c)),
        update: (c) => this.idle(() => this.syncPvc(c)),
      }),
      d.pvs.addHandler({
        add: (pv) => this.idle(() => this.syncPv(pv)),
        update: (pv, old) => {
          if (pvResolutionChanged(pv, old)) this.idle(() => this.syncPv(pv));
        },
      }),
    );
    // C9/C10: the first tick runs the full pod list at once (upstream: "also immediately at start").
    const tick = () => void this.periodic();
    this.timer = setInterval(tick, d.populatorPeriodMs);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    for (const u of this.unsubscribe.splice(0)) u();
    if (this.timer) clearInterval(this.timer);
  }

  volumesForPv(pvName: string): readonly string[] {
    // Resolved from the PV as its pods resolve it, not kept in an index: one entry per PV ever
    // seen (never dropped: the index grew with the churn) and ~2 µs per pod of the fill.
    const pv = this.d.pvs.get(pvName);
    const r = pv === undefined ? undefined : resolvePersistentVolumeOnAnyNode(pv, this.d.plugins);
    return r?.ok && this.d.state.findVolume(r.uniqueName) !== undefined ? [r.uniqueName] : [];
  }

  skippedVolumes(): Array<{ reason: SkipReason; count: number }> {
    return this.pods.skipped.counts();
  }

  podName(uid: string): { namespace: string; name: string } | undefined {
    const t = this.pods.tracker.get(uid);
    return t ? { namespace: t.namespace, name: t.key.slice(t.namespace.length + 1) } : undefined;
  }

  private idle(fn: () => void): void {
    this.d.state.whenIdle(fn);
  }

  private owns(nodeName: string): boolean {
    return this.d.ownsNode === undefined || this.d.ownsNode(nodeName);
  }

  async processPodsOn(on: (nodeName: string) => boolean, cancelled: () => boolean): Promise<boolean> {
    const guard = guardItems(this.log, 'adopted nodes\' pods');
    const each = this.processEach(guard);
    const stats = await runInSlices(this.d.pods.values(), (pod: PodRecord) => (pod.nodeName && on(pod.nodeName) ? each(pod) : undefined), { whenIdle: (fn) => this.idle(fn), duty: 1, cancelled });
    guard.finish();
    return !stats.cancelled;
  }

  forgetPodsOn(on: (nodeName: string) => boolean): number {
    const p = this.pods;
    const gone: string[] = [];
    for (const t of p.tracker.values()) if (on(t.nodeName)) gone.push(t.uid);
    for (const uid of gone) p.removePod(uid);
    for (const [uid, s] of [...p.skipped.entries()]) {
      const node = this.d.pods.get(s.podKey)?.nodeName;
      if (node !== undefined && on(node)) p.skipped.delete(uid);
    }
    return gone.length;
  }

  /**
   * The periodic passes (C9 every tick, C10 when due), in slices between which events and
   * reconcile passes run (run-in-slices.ts); one at a time. `removeStalePods`/`addAllPods` are the
   * same passes in one block (tests and measurements; the start-up fill is `fill`).
   */
  private async periodic(): Promise<void> {
    if (this.passRunning || this.stopped) return;
    this.passRunning = true;
    const slices = { whenIdle: (fn: () => void) => this.idle(fn), cancelled: () => this.stopped };
    const p = this.pods;
    try {
      // Live iterators, not copies (a copy of a million entries is one long block): they skip
      // entries deleted after they started, and a pod added meanwhile that a pass misses was
      // processed by its add event, which is what a level-based pass wants. Each pod they yield
      // is a transient copy (the pod store's), used and dropped by its processing.
      const report = (pass: 'pods-removed' | 'pods-listed', s: SliceStats) => {
        if (!s.cancelled) this.d.onPeriodicPass?.(pass, s);
      };
      const c9 = guardItems(this.log, 'C9 pass');
      const skipped = await runInSlices(p.skipped.entries(), c9.wrap(([uid, s]) => p.checkSkipped(uid, s.podKey), ([, s]) => ({ pod: s.podKey })), slices);
      const tracked = await runInSlices(p.tracker.values(), c9.wrap((t) => p.checkTracked(t), (t) => ({ pod: t.key })), slices);
      c9.finish();
      report('pods-removed', sumSliceStats(skipped, tracked));
      if (this.now() - this.lastFullList >= this.d.listPodsPeriodMs) {
        this.lastFullList = this.now();
        const c10 = guardItems(this.log, 'C10 pass');
        report('pods-listed', await runInSlices(this.d.pods.values(), this.processEach(c10), slices));
        c10.finish();
      }
    } catch (err) {
      this.log.error({ err }, 'periodic pass failed');
    } finally {
      this.passRunning = false;
    }
  }

  private processEach(guard: ItemGuard): (pod: PodRecord) => void {
    return guard.wrap((pod: PodRecord) => this.pods.processPod(pod), (pod) => ({ pod: `${pod.namespace}/${pod.name}` }));
  }

  // ---- PVC worker (C8) -----------------------------------------------------------------
  private syncPvc(pvc: PvcRecord): void {
    if (pvc.phase !== 'Bound' || !pvc.volumeName) return;
    this.pods.processPodsOfClaim(`${pvc.namespace}/${pvc.name}`);
  }

  // ---- PV events (our addition, see the header) ----------------------------------------
  /**
   * Re-processes the pods of the one claim that names `pv` and that `pv.claimRef` names. C4
   * decides whether they resolve: a claimRef uid other than the claim's leaves them skipped
   * with `pv_claim_mismatch`, which replaces the `pv_not_found` they had when their pod came
   * before the PV. (A claimRef whose uid matches a claim it does not name is left to the full
   * pod pass, as before.)
   */
  private syncPv(pv: PvRecord): void {
    const ref = pv.claimRef;
    if (!ref) return;
    const claimKey = `${ref.namespace}/${ref.name}`;
    const pvc = this.d.pvcs.get(claimKey);
    if (pvc?.phase === 'Bound' && pvc.volumeName === pv.name) this.pods.processPodsOfClaim(claimKey);
  }

  // ---- the same passes in one block (tests, measurements) ------------------------------
  removeStalePods(): void {
    const p = this.pods;
    for (const [uid, s] of [...p.skipped.entries()]) p.checkSkipped(uid, s.podKey);
    for (const t of p.tracker.values()) p.checkTracked(t);
  }

  addAllPods(): void {
    this.lastFullList = this.now();
    for (const pod of this.d.pods.values()) this.pods.processPod(pod);
  }

  // One block of a million pods is ~12 s at 100k nodes, longer than a leader's renew deadline
  // (10 s): the lease would be lost before the first pass. Duty 1: the slices run back to back,
  // as the block did, so the fill takes no longer; events that arrive between slices are
  // applied by the handlers start() installed, and the fill reads each pod from the live cache.
  async fill(cancelled: () => boolean): Promise<boolean> {
    this.lastFullList = this.now();
    const guard = guardItems(this.log, 'start-up fill');
    const stats = await runInSlices(this.d.pods.values(), this.processEach(guard), { whenIdle: (fn) => this.idle(fn), duty: 1, cancelled });
    guard.finish();
    return !stats.cancelled;
  }
}
