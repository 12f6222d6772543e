/**
 * The desired-state populator: turns Pod, PVC and Node events into desired (volume, node)
 * pairs and node flags in the world state (rules B1–B4, C1–C10, D3–D4).
 *
 * Events only update state (the reconciler acts by level, every pass). Every mutation runs
 * through `state.whenIdle`, so events that arrive while a plan runs are applied right after it.
 *
 * Difference from upstream, on purpose: a pod's removal undoes exactly the pairs its addition
 * made (tracked by name), instead of re-resolving the spec and silently doing nothing when the
 * PVC or PV is gone (C3). Upstream's 1-minute pass (C9) removes such pods later anyway; here
 * they go at once. Everything else follows the rules as written.
 */
import type { WorldState } from '../cache/world-state.js';
import type { NodeRecord, PodRecord, PvRecord, PvcRecord } from '../kube/projections/index.js';
import type { ProjectionHandler } from '../kube/projection-store.js';
import { isMultiAttachAllowed, type CsiTranslator, type VolumePluginManager } from '../plugins/index.js';
import { logger, type Logger } from '../log/logger.js';
import { PodTracker } from './pod-tracker.js';
import type { NodeConditionCounter } from './node-condition-counter.js';
import { isPodTerminated } from './pod-terminated.js';
import { resolvePodVolume } from './volume-resolver.js';
import { volumeInfoFor, volumeInfoOf } from './volume-info.js';

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
  now?: () => number;
  log?: Logger;
}

export interface DesiredStatePopulator {
  /** Subscribes to the sources. Call after the actual state was loaded from them (A1–A3). */
  start(): void;
  /** A4 and C10: (re-)processes every pod as a pod add. */
  addAllPods(): void;
  /** C9: removes pods that are gone, re-created or terminated, and volumes no longer attachable. */
  removeStalePods(): void;
  /** Unique volume names resolved from PV `pvName` (normally one). */
  volumesForPv(pvName: string): readonly string[];
  /** Namespace and name of a tracked pod UID (for events and the inspection API). */
  podName(uid: string): { namespace: string; name: string } | undefined;
  stop(): void;
}

export function createDesiredStatePopulator(deps: DesiredStatePopulatorDeps): DesiredStatePopulator {
  return new Populator(deps);
}

class Populator implements DesiredStatePopulator {
  private readonly tracker = new PodTracker();
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly unsubscribe: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;
  private lastFullList = -Infinity;

  constructor(private readonly d: DesiredStatePopulatorDeps) {
    this.log = d.log ?? logger('populator');
    this.now = d.now ?? Date.now;
  }

  start(): void {
    const d = this.d;
    this.unsubscribe.push(
      d.nodes.addHandler({
        add: (n) => this.idle(() => this.applyNode(n, true)),
        update: (n) => this.idle(() => this.applyNode(n, false)),
        delete: (n) => this.idle(() => this.deleteNode(n)),
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
    );
    // C9/C10: the first tick runs the full pod list at once (upstream: "also immediately at start").
    const tick = () => this.idle(() => this.periodic());
    this.timer = setInterval(tick, d.populatorPeriodMs);
    this.timer.unref();
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    if (this.timer) clearInterval(this.timer);
  }

  private readonly pvIndex = new Map<string, string[]>();

  private indexPv(pvName: string, unique: string): void {
    const list = this.pvIndex.get(pvName);
    if (!list) this.pvIndex.set(pvName, [unique]);
    else if (!list.includes(unique)) list.push(unique);
  }

  volumesForPv(pvName: string): readonly string[] {
    return this.pvIndex.get(pvName) ?? [];
  }

  podName(uid: string): { namespace: string; name: string } | undefined {
    const t = this.tracker.get(uid);
    return t ? { namespace: t.namespace, name: t.name } : undefined;
  }

  private idle(fn: () => void): void {
    this.d.state.whenIdle(fn);
  }

  private periodic(): void {
    this.removeStalePods();
    if (this.now() - this.lastFullList >= this.d.listPodsPeriodMs) this.addAllPods();
  }

  // ---- nodes (B1–B4, D3–D4) ------------------------------------------------------------
  applyNode(n: NodeRecord, isAdd: boolean): void {
    const { state } = this.d;
    const id = state.internNode(n.name);
    if (n.managed) state.setNodeManaged(id); // B2: never unmanaged by an update
    state.setNodeHealthy(id, n.ready);
    state.setNodeOutOfService(id, n.outOfService);
    state.setVolumesInUse(id, n.volumesInUse);
    this.d.conditions?.set(n.name, n.managed, n.ready, n.outOfService);
    if (isAdd) state.setStatusUpdateNeeded(id); // B4 (only takes effect if the node's report set was used)
  }

  private deleteNode(n: NodeRecord): void {
    const { state } = this.d;
    const id = state.findNode(n.name);
    if (id === undefined) return;
    state.setVolumesInUse(id, n.volumesInUse); // D4: the deleted object's last volumesInUse stays
    state.setNodeHealthy(id, false); // an absent node is unhealthy
    state.setNodeOutOfService(id, false); // F5: node lookup error ⇒ no taint
    this.d.conditions?.delete(n.name);
    if (!state.removeNode(id)) this.log.info({ node: n.name }, 'node deleted but pods still want volumes on it; keeping it (B2)');
  }

  // ---- pods (C1–C7) --------------------------------------------------------------------
  processPod(pod: PodRecord): void {
    const podKey = `${pod.namespace}/${pod.name}`;
    if (!pod.nodeName) return; // C3: unscheduled pods are ignored
    this.tracker.setClaims(podKey, pod.namespace, pod.volumes.flatMap((v) => (v.claimName ? [v.claimName] : [])));
    if (isPodTerminated(pod)) {
      this.removePod(pod.uid, podKey);
      return;
    }
    const { state } = this.d;
    const node = state.findNode(pod.nodeName);
    if (node === undefined || !state.node(node)?.managed) return; // B3
    let tracked: ReturnType<PodTracker['getOrCreate']> | undefined;
    for (const v of pod.volumes) {
      const r = resolvePodVolume(pod, v, { lookups: this.lookups, plugins: this.d.plugins, translator: this.d.translator });
      if (!r.ok) {
        if (!r.quiet) this.log.warn({ pod: podKey, volume: v.name, reason: r.reason }, 'pod volume skipped');
        continue;
      }
      const vol = state.internVolume(r.uniqueName);
      const prior = volumeInfoOf(state, vol);
      state.setVolumeInfo(vol, volumeInfoFor(r.uniqueName, r.spec, r.plugin.name, prior));
      if (r.spec.origin !== 'inline') this.indexPv(r.spec.name, r.uniqueName);
      state.setMultiAttachForbidden(vol, !isMultiAttachAllowed(r.spec));
      if (state.addDesiredPod(vol, node, pod.uid) === 'node-not-managed') continue;
      tracked ??= this.tracker.getOrCreate(pod.uid, pod.namespace, pod.name, pod.nodeName);
      tracked.volumes.add(r.uniqueName);
    }
  }

  /** Undoes every pair the pod was added to. No-op for an untracked pod. */
  removePod(uid: string, podKey?: string): void {
    if (podKey) this.tracker.clearClaims(podKey);
    const t = this.tracker.get(uid);
    if (!t) return;
    const { state } = this.d;
    const node = state.findNode(t.nodeName);
    for (const unique of t.volumes) {
      const vol = state.findVolume(unique);
      if (vol !== undefined && node !== undefined) state.removeDesiredPod(vol, node, uid);
    }
    this.tracker.delete(uid);
  }

  // ---- PVC worker (C8) -----------------------------------------------------------------
  private syncPvc(pvc: PvcRecord): void {
    if (pvc.phase !== 'Bound' || !pvc.volumeName) return;
    for (const podKey of this.tracker.podsOfClaim(`${pvc.namespace}/${pvc.name}`)) {
      const pod = this.d.pods.get(podKey);
      if (pod) this.processPod(pod);
    }
  }

  // ---- periodic passes (C9, C10) -------------------------------------------------------
  removeStalePods(): void {
    const { state, pods } = this.d;
    for (const t of [...this.tracker.values()]) {
      const pod = pods.get(`${t.namespace}/${t.name}`);
      if (!pod || pod.uid !== t.uid || isPodTerminated(pod)) {
        this.removePod(t.uid);
        continue;
      }
      // C9 second half: volumes whose plugin no longer attaches them (e.g. attachRequired became false).
      const node = state.findNode(t.nodeName);
      for (const unique of [...t.volumes]) {
        const vol = state.findVolume(unique);
        const spec = vol === undefined ? undefined : volumeInfoOf(state, vol)?.spec;
        if (vol === undefined || node === undefined || !spec || this.d.plugins.canAttach(spec)) continue;
        state.removeDesiredPod(vol, node, t.uid);
        t.volumes.delete(unique);
      }
    }
  }

  addAllPods(): void {
    this.lastFullList = this.now();
    for (const pod of this.d.pods.values()) this.processPod(pod);
  }

  private readonly lookups = {
    pvc: (namespace: string, name: string) => this.d.pvcs.get(`${namespace}/${name}`),
    pv: (name: string) => this.d.pvs.get(name),
  };
}
