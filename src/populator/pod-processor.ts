/**
 * What the populator does to one pod, one claim or one tracked pod (rules C1–C9): resolves a
 * scheduled pod's volumes into desired (volume, node) pairs, undoes them when the pod goes, and
 * the C9 checks of a tracked or skipped pod. It holds the bookkeeping those need (the pod
 * tracker and the skipped volumes); the populator decides when each runs.
 *
 * Every method mutates the world state, so callers run them inside `state.whenIdle`.
 */
import type { NodeId, VolumeId, WorldState } from '../cache/world-state.js';
import { notify, type ControllerObserver } from '../operations/controller-observer.js';
import type { PodRecord, PvRecord, PvcRecord } from '../kube/projections/index.js';
import type { ProjectionHandler } from '../kube/projection-store.js';
import { isMultiAttachAllowed, type CsiTranslator, type VolumePluginManager } from '../plugins/index.js';
import type { Logger } from '../log/logger.js';
import { PodTracker, trackedVolumes, type TrackedPod } from './pod-tracker.js';
import { SkippedVolumes } from './skipped-volumes.js';
import { isPodTerminated } from './pod-terminated.js';
import { resolvePodVolume, type ResolverDeps, type SkipReason } from './volume-resolver.js';
import { volumeInfoFor, volumeInfoOf } from './volume-info.js';

/**
 * The part of a reflector the populator reads. What `get`, `values` and the handlers give is a
 * transient copy for the pod, PVC and PV stores (ProjectionCache): the populator uses it and
 * keeps only what it copies out (the tracker's keys, the world state's names).
 */
export interface Source<T> {
  get(key: string): T | undefined;
  values(): IterableIterator<T>;
  addHandler(h: ProjectionHandler<T>): () => void;
}

export interface PodProcessorDeps {
  state: WorldState;
  pods: Source<PodRecord>;
  pvcs: Source<PvcRecord>;
  pvs: Source<PvRecord>;
  plugins: VolumePluginManager;
  translator: CsiTranslator;
  onDesiredAdded?: () => void;
  /** Told of pods joining and leaving pairs (src/operations/controller-observer.ts). */
  observer?: ControllerObserver;
  log: Logger;
}

export class PodProcessor {
  readonly tracker = new PodTracker();
  readonly skipped = new SkippedVolumes();
  private readonly resolverDeps: ResolverDeps;

  constructor(private readonly d: PodProcessorDeps) {
    const lookups = {
      pvc: (namespace: string, name: string) => d.pvcs.get(`${namespace}/${name}`),
      pv: (name: string) => d.pvs.get(name),
    };
    this.resolverDeps = { lookups, plugins: d.plugins, translator: d.translator };
  }

  // ---- pods (C1–C7) --------------------------------------------------------------------
  processPod(pod: PodRecord): void {
    const podKey = `${pod.namespace}/${pod.name}`;
    let tracked: TrackedPod | undefined = this.tracker.get(pod.uid);
    // The API forbids moving or unscheduling a pod, but a non-conforming server (or a bug) could:
    // its pairs on the old node are undone first, as the tracker undoes pairs of one node only.
    if (tracked !== undefined && tracked.nodeName !== pod.nodeName) {
      this.removePod(pod.uid);
      tracked = undefined;
    }
    if (!pod.nodeName) return; // C3: unscheduled pods are ignored
    this.tracker.setClaims(podKey, pod.namespace, pod.volumes);
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
    let skips: SkipReason[] | undefined;
    for (const v of pod.volumes) {
      const r = resolvePodVolume(pod, v, this.resolverDeps);
      if (!r.ok) {
        if (!r.quiet) this.d.log.warn({ pod: podKey, volume: v.name, reason: r.reason }, 'pod volume skipped');
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
      state.setMultiAttachForbidden(vol, !isMultiAttachAllowed(r.spec));
      // The entry keeps the spec of the pod that creates it (§C): its attach sends its own PV
      // and its pod's events name it, even when another PV of another claim shares the volume
      // (one CSI handle). The info's spec, not the resolution's: one object while the volume
      // resolves alike, so entries that share it cost the state nothing.
      const added = state.addDesiredPod(vol, node, pod.uid, info.spec);
      if (added === 'node-not-managed') continue;
      if (added === 'added') {
        this.d.onDesiredAdded?.();
        notify(this.d.observer, () => ({ kind: 'desired-added', volume: unique, node: pod.nodeName, pod: `${pod.namespace}/${pod.name}` }));
      }
      tracked ??= this.tracker.create(pod.uid, pod.namespace, podKey, pod.nodeName);
      this.tracker.addVolume(tracked, unique);
    }
    this.skipped.set(pod.uid, podKey, skips);
  }

  /**
   * Whether processing `pod` again would change nothing, given that its projection is the one
   * processed last: that processing left nothing to retry (no volume skipped, every volume that
   * is not a plain source tracked) and every pair it made still names the pod. A pod that fails
   * any of these is processed again on its next event, as upstream re-processes every pod update
   * (a claim bound since, a node managed since, a pair removed under it). Allocates nothing.
   */
  settled(pod: PodRecord): boolean {
    const t = this.tracker.get(pod.uid);
    if (t === undefined || t.nodeName !== pod.nodeName || this.skipped.has(pod.uid)) return false;
    const v = t.volumes;
    const tracked = v === undefined ? 0 : typeof v === 'string' ? 1 : v.length;
    let storage = 0;
    for (const pv of pod.volumes) if (pv.kind !== 'other') storage++;
    if (tracked !== storage) return false;
    const { state } = this.d;
    const node = state.findNode(pod.nodeName);
    if (node === undefined) return false;
    if (typeof v === 'string') return this.names(v, node, pod.uid);
    if (v !== undefined) for (const unique of v) if (!this.names(unique, node, pod.uid)) return false;
    return true;
  }

  private names(unique: string, node: NodeId, uid: string): boolean {
    const vol = this.d.state.findVolume(unique);
    return vol !== undefined && this.d.state.hasDesiredPod(vol, node, uid);
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
      if (vol !== undefined && node !== undefined) this.removeDesired(vol, node, uid);
    }
    this.tracker.delete(uid);
  }

  /** C8 (and our PV events): re-processes the scheduled pods that name claim `claimKey`. */
  processPodsOfClaim(claimKey: string): void {
    for (const podKey of this.tracker.podsOfClaim(claimKey)) {
      const pod = this.d.pods.get(podKey);
      if (pod) this.processPod(pod);
    }
  }

  // ---- C9 ------------------------------------------------------------------------------
  /** C9 for one pod with skipped volumes: forgets them once the pod is gone, re-created or terminated. */
  checkSkipped(uid: string, podKey: string): void {
    const pod = this.d.pods.get(podKey);
    if (!pod || pod.uid !== uid || isPodTerminated(pod)) this.skipped.delete(uid);
  }

  /**
   * C9 for one tracked pod. `t` is the tracker's current entry for its uid: both passes read the
   * tracker through its live `values` walk, which never yields an entry removed or replaced before
   * the walk reaches it (an event between two slices, or an earlier pod of the pass). This
   * runs for every tracked pod once a minute (a million at 100k nodes), so the common case (pod
   * present, every volume attachable) makes no copy and no node lookup.
   */
  checkTracked(t: TrackedPod): void {
    const pod = this.d.pods.get(t.key);
    if (!pod || pod.uid !== t.uid || isPodTerminated(pod)) {
      this.removePod(t.uid);
      return;
    }
    if (pod.nodeName !== t.nodeName) {
      this.processPod(pod); // moved: its pairs follow it (or go, once it is not scheduled)
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
    this.removeDesired(vol, node, t.uid);
    this.tracker.removeVolume(t, unique);
  }

  private removeDesired(vol: VolumeId, node: NodeId, uid: string): void {
    const { state } = this.d;
    if (!state.removeDesiredPod(vol, node, uid)) return;
    notify(this.d.observer, () => ({ kind: 'desired-removed', volume: state.volumeName(vol), node: state.nodeName(node), pod: uid }));
  }
}
