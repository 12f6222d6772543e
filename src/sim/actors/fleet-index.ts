/**
 * The actors' shared, compact view of the fleet, kept current from store events: nodes
 * (readiness, taint, pods on each), pods (node, claims, lifecycle), claims → volumes, and
 * volumes → unique volume names interned as small integers. Built once from a full list at
 * start, then updated per event; nothing here rescans the store.
 */
import type { KubeObject, ResourceName, StoreEventType } from '../store/sim-store.js';
import { nodeHasTaint, nodeIsReady, podClaimNames, podNodeName, podPhaseTerminal, pvCsiSource, pvMultiAttachForbidden, pvcVolumeName } from './fields.js';
import { OUT_OF_SERVICE_TAINT, objectKey, uniqueVolumeName } from './names.js';
import type { Prng } from './prng.js';

export interface PodRec {
  namespace: string;
  name: string;
  uid: string;
  /** Node id, or -1 when unscheduled. */
  node: number;
  claims: string[];
  /** deletionTimestamp is set. */
  deleting: boolean;
  /** Phase Succeeded or Failed. */
  terminal: boolean;
  /** Position in the random-pick array. */
  pos: number;
}

export interface PvRec {
  /** Interned unique volume name, or -1 for a volume that is not CSI. */
  vid: number;
  rwo: boolean;
}

export class FleetIndex {
  private readonly nodeIds = new Map<string, number>();
  readonly nodeNames: string[] = [];
  private readonly nodeReady: boolean[] = [];
  private readonly nodeExists: boolean[] = [];
  private readonly nodeOos: boolean[] = [];
  private readonly nodePods: Array<Set<string> | undefined> = [];
  private ready = 0;

  readonly pods = new Map<string, PodRec>();
  private readonly podKeys: string[] = [];
  private readonly claims = new Map<string, string>();
  readonly pvs = new Map<string, PvRec>();
  private readonly vids = new Map<string, number>();
  private readonly volumes: string[] = [];

  /** Applies one committed change (or, at start, an existing object as ADDED). */
  applyEvent(type: StoreEventType, resource: ResourceName, o: KubeObject): void {
    const gone = type === 'DELETED';
    switch (resource) {
      case 'nodes': return this.applyNode(o, gone);
      case 'pods': return this.applyPod(o, gone);
      case 'persistentvolumeclaims': {
        const key = objectKey(o.metadata.namespace, o.metadata.name);
        const pv = gone ? undefined : pvcVolumeName(o);
        if (pv) this.claims.set(key, pv);
        else this.claims.delete(key);
        return;
      }
      case 'persistentvolumes': {
        const csi = gone ? undefined : pvCsiSource(o);
        if (gone) this.pvs.delete(o.metadata.name);
        else this.pvs.set(o.metadata.name, { vid: csi ? this.intern(uniqueVolumeName(csi.driver, csi.handle)) : -1, rwo: pvMultiAttachForbidden(o) });
        return;
      }
      default:
    }
  }

  private applyNode(o: KubeObject, gone: boolean): void {
    const id = this.nodeId(o.metadata.name);
    const ready = !gone && nodeIsReady(o);
    if (ready !== this.nodeReady[id]) this.ready += ready ? 1 : -1;
    this.nodeReady[id] = ready;
    this.nodeExists[id] = !gone;
    this.nodeOos[id] = !gone && nodeHasTaint(o, OUT_OF_SERVICE_TAINT);
  }

  private applyPod(o: KubeObject, gone: boolean): void {
    const ns = o.metadata.namespace ?? '';
    const key = objectKey(ns, o.metadata.name);
    const prev = this.pods.get(key);
    if (gone) {
      if (prev) this.removePod(key, prev);
      return;
    }
    const nodeName = podNodeName(o);
    const node = nodeName ? this.nodeId(nodeName) : -1;
    if (prev && prev.node !== node) this.nodePods[prev.node]?.delete(key);
    const rec: PodRec = prev ?? { namespace: ns, name: o.metadata.name, uid: '', node, claims: [], deleting: false, terminal: false, pos: this.podKeys.length };
    if (!prev) {
      this.podKeys.push(key);
      this.pods.set(key, rec);
    }
    rec.uid = o.metadata.uid ?? '';
    rec.node = node;
    rec.claims = podClaimNames(o);
    rec.deleting = o.metadata.deletionTimestamp !== undefined;
    rec.terminal = podPhaseTerminal(o);
    if (node >= 0) (this.nodePods[node] ??= new Set()).add(key);
  }

  private removePod(key: string, rec: PodRec): void {
    this.nodePods[rec.node]?.delete(key);
    const last = this.podKeys.pop() as string;
    if (last !== key) {
      this.podKeys[rec.pos] = last;
      (this.pods.get(last) as PodRec).pos = rec.pos;
    }
    this.pods.delete(key);
  }

  /** The id of a node name (allocated on first sight; ids are never reused). */
  nodeId(name: string): number {
    let id = this.nodeIds.get(name);
    if (id === undefined) {
      id = this.nodeNames.length;
      this.nodeIds.set(name, id);
      this.nodeNames.push(name);
      this.nodeReady.push(false);
      this.nodeExists.push(false);
      this.nodeOos.push(false);
      this.nodePods.push(undefined);
    }
    return id;
  }

  findNode(name: string): number | undefined {
    return this.nodeIds.get(name);
  }

  nodeCount(): number {
    return this.nodeNames.length;
  }

  readyNodeCount(): number {
    return this.ready;
  }

  isReady(id: number): boolean {
    return this.nodeReady[id] === true;
  }

  exists(id: number): boolean {
    return this.nodeExists[id] === true;
  }

  isOutOfService(id: number): boolean {
    return this.nodeOos[id] === true;
  }

  podsOn(id: number): ReadonlySet<string> {
    return this.nodePods[id] ?? EMPTY;
  }

  podCount(): number {
    return this.podKeys.length;
  }

  randomPod(prng: Prng): PodRec | undefined {
    if (this.podKeys.length === 0) return undefined;
    return this.pods.get(this.podKeys[prng.int(this.podKeys.length)]);
  }

  /** A uniformly drawn Ready node other than `except`, or undefined if none is found quickly. */
  randomReadyNode(prng: Prng, except = -1): number | undefined {
    if (this.ready === 0 || (this.ready === 1 && this.nodeReady[except])) return undefined;
    for (let i = 0; i < 64; i++) {
      const id = prng.int(this.nodeNames.length);
      if (id !== except && this.nodeReady[id]) return id;
    }
    return undefined;
  }

  /** The PV a claim is bound to (`spec.volumeName`), if any. */
  claimVolume(namespace: string, claim: string): string | undefined {
    return this.claims.get(objectKey(namespace, claim));
  }

  /** Interned id of a unique volume name. */
  intern(u: string): number {
    let vid = this.vids.get(u);
    if (vid === undefined) {
      vid = this.volumes.length;
      this.vids.set(u, vid);
      this.volumes.push(u);
    }
    return vid;
  }

  volumeName(vid: number): string {
    return this.volumes[vid];
  }

  /** Volume ids a pod uses, or undefined if some claim or volume is not resolvable yet. */
  podVolumes(pod: PodRec): number[] | undefined {
    const out: number[] = [];
    for (const claim of pod.claims) {
      const pv = this.claimVolume(pod.namespace, claim);
      const rec = pv === undefined ? undefined : this.pvs.get(pv);
      if (!rec) return undefined;
      if (rec.vid >= 0) out.push(rec.vid);
    }
    return out;
  }
}

const EMPTY: ReadonlySet<string> = new Set();
