/**
 * The invariant checker's own picture of the cluster, kept from the simulator store's committed
 * changes: nodes (health, out-of-service taint, volumesInUse, volumesAttached), pods, claims,
 * volumes, CSI drivers and VolumeAttachments with the indexes the checks need. It reads
 * nothing from the controller: every fact is what the API server holds at that commit.
 *
 * Volumes are named as the controller names them (U, `kubernetes.io/csi/<driver>^<handle>`),
 * resolved from the PV at the time a VolumeAttachment is first seen; a VolumeAttachment whose
 * PV is unknown then is keyed `pv:<name>` (and one with an inline source `va:<name>`).
 */
import {
  nodeHasTaint, nodeIsReady, nodeVolumeNames, podClaimNames, podNodeName, podPhaseTerminal,
  pvcVolumeName, pvCsiSource, pvMultiAttachForbidden, vaAttached, vaSpec,
} from '../sim/actors/fields.js';
import { CONTROLLER_MANAGED_ANNOTATION, OUT_OF_SERVICE_TAINT, objectKey, uniqueVolumeName } from '../sim/actors/names.js';
import type { KubeObject } from '../sim/store/sim-store.js';

export interface NodeState {
  managed: boolean;
  ready: boolean;
  outOfService: boolean;
  inUse: ReadonlySet<string>;
  attached: ReadonlySet<string>;
}

export interface PodState {
  node: string | undefined;
  claims: readonly string[];
  /** Scheduled, not being deleted, not terminated: wants its volumes attached. */
  live: boolean;
}

export interface PvState {
  /** Unique volume name for CSI volumes. */
  u: string | undefined;
  driver: string | undefined;
  forbidden: boolean;
  claimUid: string | undefined;
}

export interface VaState {
  name: string;
  node: string;
  /** Volume key: U, or `pv:<name>` / `va:<name>` when U could not be resolved. */
  volume: string;
  attached: boolean;
  deleting: boolean;
  forbidden: boolean;
  /** When the checker first saw it (epoch ms). */
  since: number;
}

export const pairKey = (volume: string, node: string): string => `${volume}|${node}`;

const rec = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

export class ClusterModel {
  readonly nodes = new Map<string, NodeState>();
  /** The last volumesInUse of nodes whose object is gone (upstream D4 keeps them "mounted"). */
  readonly deletedNodesInUse = new Map<string, ReadonlySet<string>>();
  /** Last time each node was seen with the out-of-service taint (kept while the taint is on). */
  readonly outOfServiceSeen = new Map<string, number>();
  readonly pods = new Map<string, PodState>();
  readonly podsByNode = new Map<string, Set<string>>();
  readonly pvcs = new Map<string, { volumeName: string | undefined; bound: boolean; uid: string | undefined }>();
  readonly pvs = new Map<string, PvState>();
  readonly attachRequired = new Map<string, boolean>();
  readonly vas = new Map<string, VaState>();
  readonly vasByPair = new Map<string, Set<string>>();
  readonly vasByVolume = new Map<string, Set<string>>();

  applyNode(o: KubeObject, gone: boolean, now: number): { prev: NodeState | undefined; next: NodeState | undefined } {
    const name = o.metadata.name;
    const prev = this.nodes.get(name);
    if (gone) {
      this.nodes.delete(name);
      this.deletedNodesInUse.set(name, new Set(nodeVolumeNames(o, 'volumesInUse')));
      if (prev?.outOfService) this.outOfServiceSeen.set(name, now);
      return { prev, next: undefined };
    }
    const next: NodeState = {
      managed: Object.hasOwn(o.metadata.annotations ?? {}, CONTROLLER_MANAGED_ANNOTATION),
      ready: nodeIsReady(o),
      outOfService: nodeHasTaint(o, OUT_OF_SERVICE_TAINT),
      inUse: new Set(nodeVolumeNames(o, 'volumesInUse')),
      attached: new Set(nodeVolumeNames(o, 'volumesAttached')),
    };
    this.nodes.set(name, next);
    this.deletedNodesInUse.delete(name);
    if (next.outOfService || prev?.outOfService) this.outOfServiceSeen.set(name, now);
    return { prev, next };
  }

  applyPod(o: KubeObject, gone: boolean): { prev: PodState | undefined; next: PodState | undefined } {
    const key = objectKey(o.metadata.namespace, o.metadata.name);
    const prev = this.pods.get(key);
    if (prev?.node) this.podsByNode.get(prev.node)?.delete(key);
    if (gone) {
      this.pods.delete(key);
      return { prev, next: undefined };
    }
    const node = podNodeName(o);
    const next: PodState = { node, claims: podClaimNames(o), live: node !== undefined && o.metadata.deletionTimestamp === undefined && !podPhaseTerminal(o) };
    this.pods.set(key, next);
    if (node) {
      let set = this.podsByNode.get(node);
      if (!set) this.podsByNode.set(node, (set = new Set()));
      set.add(key);
    }
    return { prev, next };
  }

  applyPvc(o: KubeObject, gone: boolean): void {
    const key = objectKey(o.metadata.namespace, o.metadata.name);
    if (gone) {
      this.pvcs.delete(key);
      return;
    }
    this.pvcs.set(key, { volumeName: pvcVolumeName(o), bound: rec(o.status)?.phase === 'Bound', uid: o.metadata.uid });
  }

  applyPv(o: KubeObject, gone: boolean): void {
    if (gone) {
      this.pvs.delete(o.metadata.name);
      return;
    }
    const csi = pvCsiSource(o);
    const uid = rec(rec(o.spec)?.claimRef)?.uid;
    this.pvs.set(o.metadata.name, {
      u: csi ? uniqueVolumeName(csi.driver, csi.handle) : undefined,
      driver: csi?.driver,
      forbidden: pvMultiAttachForbidden(o),
      claimUid: typeof uid === 'string' ? uid : undefined,
    });
  }

  applyCsiDriver(o: KubeObject, gone: boolean): void {
    if (gone) this.attachRequired.delete(o.metadata.name);
    else this.attachRequired.set(o.metadata.name, rec(o.spec)?.attachRequired !== false);
  }

  applyVa(o: KubeObject, gone: boolean, now: number): { prev: VaState | undefined; next: VaState | undefined } {
    const name = o.metadata.name;
    const prev = this.vas.get(name);
    if (gone) {
      if (prev) this.unindexVa(prev);
      return { prev, next: undefined };
    }
    const spec = vaSpec(o);
    if (!spec) return { prev, next: undefined };
    let volume = prev?.volume;
    let forbidden = prev?.forbidden ?? false;
    if (volume === undefined) {
      const pv = spec.pvName ? this.pvs.get(spec.pvName) : undefined;
      volume = pv?.u ?? (spec.pvName ? `pv:${spec.pvName}` : `va:${name}`);
      forbidden = pv?.forbidden ?? false;
    }
    const next: VaState = { name, node: spec.nodeName, volume, attached: vaAttached(o), deleting: o.metadata.deletionTimestamp !== undefined, forbidden, since: prev?.since ?? now };
    this.vas.set(name, next);
    if (!prev) {
      addTo(this.vasByPair, pairKey(volume, next.node), name);
      addTo(this.vasByVolume, volume, name);
    }
    return { prev, next };
  }

  private unindexVa(va: VaState): void {
    this.vas.delete(va.name);
    removeFrom(this.vasByPair, pairKey(va.volume, va.node), va.name);
    removeFrom(this.vasByVolume, va.volume, va.name);
  }

  /** U of a pod's claim when it resolves as the controller's rule C4 requires (bound PVC, PV claimRef uid). */
  resolveClaim(namespace: string, claim: string): PvState | undefined {
    const pvc = this.pvcs.get(objectKey(namespace, claim));
    if (!pvc?.bound || !pvc.volumeName) return undefined;
    const pv = this.pvs.get(pvc.volumeName);
    if (!pv?.u || pv.claimUid === undefined || pv.claimUid !== pvc.uid) return undefined;
    return pv;
  }

  /** Unique volume names a pod's claims resolve to (unresolvable claims are left out). */
  podVolumes(key: string, pod: PodState): string[] {
    const namespace = key.slice(0, key.indexOf('/'));
    const out: string[] = [];
    for (const c of pod.claims) {
      const u = this.resolveClaim(namespace, c)?.u;
      if (u) out.push(u);
    }
    return out;
  }

  /** True when a live pod on `node` uses volume `u`. */
  desiredOn(u: string, node: string): boolean {
    for (const key of this.podsByNode.get(node) ?? []) {
      const pod = this.pods.get(key);
      if (pod?.live && this.podVolumes(key, pod).includes(u)) return true;
    }
    return false;
  }

  /**
   * Pairs the controller must attach (C1): a live pod on an existing managed node whose claim
   * resolves (C4) to a volume of a driver that requires attach (C7). Multi-attach-forbidden
   * volumes desired on more than one node are left out and counted as conflicts.
   */
  desiredPairs(): { desired: Map<string, { u: string; node: string }>; conflicts: number } {
    const desired = new Map<string, { u: string; node: string }>();
    const forbiddenNodes = new Map<string, Set<string>>();
    for (const [key, pod] of this.pods) {
      if (!pod.live || !pod.node || !this.nodes.get(pod.node)?.managed) continue;
      const namespace = key.slice(0, key.indexOf('/'));
      for (const claim of pod.claims) {
        const pv = this.resolveClaim(namespace, claim);
        if (!pv?.u || (pv.driver !== undefined && this.attachRequired.get(pv.driver) === false)) continue;
        desired.set(pairKey(pv.u, pod.node), { u: pv.u, node: pod.node });
        if (pv.forbidden) addTo(forbiddenNodes, pv.u, pod.node);
      }
    }
    let conflicts = 0;
    for (const [u, nodes] of forbiddenNodes) {
      if (nodes.size < 2) continue;
      conflicts++;
      for (const n of nodes) desired.delete(pairKey(u, n));
    }
    return { desired, conflicts };
  }

  /** The VolumeAttachment of (volume, node), if one exists. */
  attachmentOf(volume: string, node: string): VaState | undefined {
    const names = this.vasByPair.get(pairKey(volume, node));
    if (!names) return undefined;
    for (const n of names) return this.vas.get(n);
    return undefined;
  }

  /** volumesInUse of a node, or of its last object when it was deleted. */
  inUse(node: string): ReadonlySet<string> | undefined {
    return this.nodes.get(node)?.inUse ?? this.deletedNodesInUse.get(node);
  }
}

function addTo(m: Map<string, Set<string>>, key: string, v: string): void {
  let s = m.get(key);
  if (!s) m.set(key, (s = new Set()));
  s.add(v);
}

function removeFrom(m: Map<string, Set<string>>, key: string, v: string): void {
  const s = m.get(key);
  if (!s) return;
  s.delete(v);
  if (s.size === 0) m.delete(key);
}
