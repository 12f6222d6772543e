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
 */
import type { WorldState } from '../cache/world-state.js';
import type { NodeRecord, PodRecord, PvRecord, PvcRecord } from '../kube/projections/index.js';
import type { ProjectionHandler } from '../kube/projection-store.js';
import { isMultiAttachAllowed, type CsiTranslator, type VolumePluginManager } from '../plugins/index.js';
import { flatCopy } from '../cache/flat-copy.js';
import { logger, type Logger } from '../log/logger.js';
import { applyNodeRecord, deleteNodeRecord } from './node-events.js';
import { PodTracker, trackedVolumes, type TrackedPod } from './pod-tracker.js';
import { PvIndex } from './pv-index.js';
import { runInSlices, sumSliceStats, type PeriodicPassReport, type SliceStats } from './run-in-slices.js';
import { SkippedVolumes } from './skipped-volumes.js';
import type { NodeConditionCounter } from './node-condition-counter.js';
import { isPodTerminated } from './pod-terminated.js';
import { pvResolutionChanged, resolvePodVolume, type ResolverDeps, type SkipReason } from './volume-resolver.js';
import { volumeInfoFor, volumeInfoOf } from './volume-info.js';
import { controllerNow } from '../cache/controller-clock.js';

/** The part of a reflector the populator reads. */
export interface Source<T> {
  get(key: string): T | undefined;
  values(): IterableIterator<T>;
  addHandler(h: ProjectionHandler<T>): () => void;
}

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
  /**
   * Host time, ms: `controllerNow` (monotonic) unless a test gives its own. Timers and backoff
   * that one component records another compares, so all of them take the same clock.
   */
  now?: () => number;
  log?: Logger;
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
  /** Unique volume names resolved from PV `pvName` (normally one). */
  volumesForPv(pvName: string): readonly string[];
  /** Namespace and name of a tracked pod UID (for events and the inspection API). */
  podName(uid: string): { namespace: string; name: string } | undefined;
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
  private readonly tracker = new PodTracker();
  private readonly skipped = new SkippedVolumes();
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly unsubscribe: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private passRunning = false;
  private stopped = false;
  private lastFullList = -Infinity;
  private readonly resolverDeps: ResolverDeps;

  constructor(private readonly d: DesiredStatePopulatorDeps) {
    this.log = d.log ?? logger('populator');
    this.now = d.now ?? controllerNow;
    const lookups = {
      pvc: (namespace: string, name: string) => d.pvcs.get(`${namespace}/${name}`),
      pv: (name: string) => d.pvs.get(name),
    };
    this.resolverDeps = { lookups, plugins: d.plugins, translator: d.translator };
  }

  start(): void {
    const d = this.d;
    this.unsubscribe.push(
      d.nodes.addHandler({
        add: (n) => this.idle(() => this.applyNode(n, true)),
        update: (n) => this.idle(() => this.applyNode(n, false)),
        delete: (n) => this.idle(() => deleteNodeRecord(this.d.state, this.d.conditions, n, this.log)),
      }),
      d.pods.addHandler({
        add: (p) => this.idle(() => this.processPod(p)),
        update: (p) => this.idle(() => this.processPod(p)),
        delete: (p) => this.idle(() => this.removePod(p.uid, `${p.namespace}/${p.name}`)),
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

  private readonly pvIndex = new PvIndex();

  volumesForPv(pvName: string): readonly string[] {
    return this.pvIndex.volumesFor(pvName);
  }

  skippedVolumes(): Array<{ reason: SkipReason; count: number }> {
    return this.skipped.counts();
  }

  podName(uid: string): { namespace: string; name: string } | undefined {
    const t = this.tracker.get(uid);
    return t ? { namespace: t.namespace, name: t.key.slice(t.namespace.length + 1) } : undefined;
  }

  private idle(fn: () => void): void {
    this.d.state.whenIdle(fn);
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
    const each = <T>(fn: (item: T) => void) => (item: T) => {
      try {
        fn(item);
      } catch (err) {
        this.log.error({ err }, 'periodic pass: item skipped');
      }
    };
    try {
      // Live Map iterators, not copies (a copy of a million entries is one long block): a Map
      // iterator skips entries deleted after it started and visits those added, which is what
      // a level-based pass wants.
      const report = (pass: 'pods-removed' | 'pods-listed', s: SliceStats) => {
        if (!s.cancelled) this.d.onPeriodicPass?.(pass, s);
      };
      const skipped = await runInSlices(this.skipped.entries(), each(([uid, s]) => this.checkSkipped(uid, s.podKey)), slices);
      const tracked = await runInSlices(this.tracker.values(), each((t) => this.checkTracked(t)), slices);
      report('pods-removed', sumSliceStats(skipped, tracked));
      if (this.now() - this.lastFullList >= this.d.listPodsPeriodMs) {
        this.lastFullList = this.now();
        report('pods-listed', await runInSlices(this.d.pods.values(), each((pod) => this.processPod(pod)), slices));
      }
    } catch (err) {
      this.log.error({ err }, 'periodic pass failed');
    } finally {
      this.passRunning = false;
    }
  }

  // ---- nodes (B1–B4, D3–D4): node-events.ts --------------------------------------------
  applyNode(n: NodeRecord, isAdd: boolean): void {
    applyNodeRecord(this.d.state, this.d.conditions, n, isAdd);
  }

  // ---- pods (C1–C7) --------------------------------------------------------------------
  processPod(pod: PodRecord): void {
    const podKey = `${pod.namespace}/${pod.name}`;
    if (!pod.nodeName) return; // C3: unscheduled pods are ignored
    const storedKey = this.tracker.setClaims(podKey, pod.namespace, pod.volumes);
    if (isPodTerminated(pod)) {
      this.removePod(pod.uid, podKey);
      return;
    }
    const { state } = this.d;
    const node = state.findNode(pod.nodeName);
    if (node === undefined || !state.node(node)?.managed) {
      this.skipped.delete(pod.uid); // B3: not evaluated, so not counted
      return;
    }
    let tracked: TrackedPod | undefined;
    let skips: SkipReason[] | undefined;
    for (const v of pod.volumes) {
      const r = resolvePodVolume(pod, v, this.resolverDeps);
      if (!r.ok) {
        if (!r.quiet) this.log.warn({ pod: podKey, volume: v.name, reason: r.reason }, 'pod volume skipped');
        if (v.kind !== 'other') (skips ??= []).push(r.code);
        continue;
      }
      const vol = state.internVolume(r.uniqueName);
      // The state's copy of the name (flat, one per volume) for everything kept beyond this call.
      const unique = state.volumeName(vol) ?? r.uniqueName;
      const prior = volumeInfoOf(state, vol);
      const info = volumeInfoFor(unique, r.spec, r.plugin.name, prior);
      if (info !== prior) {
        state.setVolumeInfo(vol, info);
        state.setVolumePlugin(vol, info.plugin);
      }
      if (r.spec.origin !== 'inline') this.pvIndex.add(r.spec.name, unique);
      state.setMultiAttachForbidden(vol, !isMultiAttachAllowed(r.spec));
      const added = state.addDesiredPod(vol, node, pod.uid);
      if (added === 'node-not-managed') continue;
      if (added === 'added') this.d.onDesiredAdded?.();
      tracked ??= this.tracker.get(pod.uid) ?? this.tracker.create(pod.uid, pod.namespace, storedKey ?? flatCopy(podKey), pod.nodeName);
      this.tracker.addVolume(tracked, unique);
    }
    this.skipped.set(pod.uid, podKey, skips);
  }

  /** Undoes every pair the pod was added to. No-op for an untracked pod. */
  removePod(uid: string, podKey?: string): void {
    if (podKey) this.tracker.clearClaims(podKey);
    this.skipped.delete(uid);
    const t = this.tracker.get(uid);
    if (!t) return;
    const { state } = this.d;
    const node = state.findNode(t.nodeName);
    for (const unique of trackedVolumes(t)) {
      const vol = state.findVolume(unique);
      if (vol !== undefined && node !== undefined) state.removeDesiredPod(vol, node, uid);
    }
    this.tracker.delete(uid);
  }

  // ---- PVC worker (C8) -----------------------------------------------------------------
  private syncPvc(pvc: PvcRecord): void {
    if (pvc.phase !== 'Bound' || !pvc.volumeName) return;
    this.processPodsOfClaim(`${pvc.namespace}/${pvc.name}`);
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
    if (pvc?.phase === 'Bound' && pvc.volumeName === pv.name) this.processPodsOfClaim(claimKey);
  }

  private processPodsOfClaim(claimKey: string): void {
    for (const podKey of this.tracker.podsOfClaim(claimKey)) {
      const pod = this.d.pods.get(podKey);
      if (pod) this.processPod(pod);
    }
  }

  // ---- periodic passes (C9, C10) -------------------------------------------------------
  removeStalePods(): void {
    for (const [uid, s] of [...this.skipped.entries()]) this.checkSkipped(uid, s.podKey);
    for (const t of this.tracker.values()) this.checkTracked(t);
  }

  private checkSkipped(uid: string, podKey: string): void {
    const pod = this.d.pods.get(podKey);
    if (!pod || pod.uid !== uid || isPodTerminated(pod)) this.skipped.delete(uid);
  }

  /**
   * C9 for one tracked pod. `t` is the tracker's current entry for its uid: both passes read the
   * tracker through a live Map iterator, which never yields an entry removed or replaced before
   * the iterator reaches it (an event between two slices, or an earlier pod of the pass). This
   * runs for every tracked pod once a minute (a million at 100k nodes), so the common case (pod
   * present, every volume attachable) makes no copy and no node lookup.
   */
  private checkTracked(t: TrackedPod): void {
    const { state, pods } = this.d;
    const pod = pods.get(t.key);
    if (!pod || pod.uid !== t.uid || isPodTerminated(pod)) {
      this.removePod(t.uid);
      return;
    }
    // C9 second half: volumes whose plugin no longer attaches them (e.g. attachRequired became false).
    const vols = t.volumes;
    if (vols === undefined) return;
    if (typeof vols === 'string') this.dropUnattachable(t, vols);
    else for (const unique of trackedVolumes(t)) this.dropUnattachable(t, unique);
  }

  private dropUnattachable(t: TrackedPod, unique: string): void {
    const { state } = this.d;
    const vol = state.findVolume(unique);
    const spec = vol === undefined ? undefined : volumeInfoOf(state, vol)?.spec;
    if (vol === undefined || !spec || this.d.plugins.canAttach(spec)) return;
    const node = state.findNode(t.nodeName);
    if (node === undefined) return;
    state.removeDesiredPod(vol, node, t.uid);
    this.tracker.removeVolume(t, unique);
  }

  addAllPods(): void {
    this.lastFullList = this.now();
    for (const pod of this.d.pods.values()) this.processPod(pod);
  }

  // One block of a million pods is ~12 s at 100k nodes, longer than a leader's renew deadline
  // (10 s): the lease would be lost before the first pass. Duty 1: the slices run back to back,
  // as the block did, so the fill takes no longer; events that arrive between slices are
  // applied by the handlers start() installed, and the fill reads each pod from the live cache.
  async fill(cancelled: () => boolean): Promise<boolean> {
    this.lastFullList = this.now();
    let failed = 0;
    const processPod = (pod: PodRecord) => {
      try {
        this.processPod(pod);
      } catch (err) {
        // The first failure in full; a systematic one would otherwise log once per pod.
        if (failed++ === 0) this.log.error({ err, pod: `${pod.namespace}/${pod.name}` }, 'start-up fill: pod skipped');
      }
    };
    const stats = await runInSlices(this.d.pods.values(), processPod, { whenIdle: (fn) => this.idle(fn), duty: 1, cancelled });
    if (failed > 1) this.log.error({ skipped: failed }, 'start-up fill: pods skipped');
    return !stats.cancelled;
  }
}
