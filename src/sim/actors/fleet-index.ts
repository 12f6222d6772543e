/**
 * The actors' shared, compact view of the fleet, kept current from store events: nodes
 * (readiness, taint, pods on each), pods (node, claims, lifecycle), claims → volumes (by the
 * PV's claimRef), and unique volume names interned as small integers. Built once from a full list at
 * start, then updated per event; nothing here rescans the store.
 */
import type { KubeObject, ResourceName, StoreEventType } from '../store/sim-store.js';
import { nodeHasTaint, nodeIsReady, podClaimNames, podNodeName, podPhaseTerminal, pvClaimRef, pvCsiSource, pvMultiAttachForbidden } from './fields.js';
import { OUT_OF_SERVICE_TAINT, objectKey, uniqueVolumeName } from './names.js';
import type { Prng } from './prng.js';

/** A pod as the actors see it. Namespace and name are read from the key, to keep records small. */
export class PodRec {
  /** deletionTimestamp is set. */
  deleting = false;
  /** Phase Succeeded or Failed. */
  terminal = false;
  /** The resolved volume ids, cached (see {@link FleetIndex.podVolumes}), and the mapping generation they were resolved at. */
  volumeIds: readonly number[] | undefined = undefined;
  volumeIdsGen = -1;

  constructor(
    /** `namespace/name`. */
    readonly key: string,
    /** Node id, or -1 when unscheduled. */
    public node: number,
    /**
     * The claims' keys (`namespace/claim`), built once per pod event: the kubelets resolve a node's
     * pods on every change of the node, and a lookup by a kept key hashes nothing new.
     */
    public claimKeys: readonly string[],
    /** Position in the random-pick array. */
    public pos: number,
  ) {}

  get namespace(): string {
    return this.key.slice(0, this.key.indexOf('/'));
  }

  get name(): string {
    return this.key.slice(this.key.indexOf('/') + 1);
  }

  /** The claims' names. */
  get claims(): string[] {
    return this.claimKeys.map((k) => k.slice(k.indexOf('/') + 1));
  }
}

// A claim's PV packed into one small integer (a million of them cost no objects): the interned
// unique volume name (-1 for a volume that is not CSI) and whether multi-attach is forbidden
// (every access mode ReadWriteOnce(-Pod)).
const packPv = (vid: number, rwo: boolean): number => (vid + 1) * 2 + (rwo ? 1 : 0);
const pvVid = (v: number): number => Math.floor(v / 2) - 1;
const pvRwo = (v: number): boolean => v % 2 === 1;

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
  // Claims resolve through the PV's claimRef alone (PVC events are not followed): one map, no PVC parse.
  private readonly pvByClaim = new Map<string, number>();
  private readonly vids = new Map<string, number>();
  /** Bumped when a claim's volume changes to another (not when one is bound or deleted): it voids the pods' cached volume ids. */
  private mappingGen = 0;
  private readonly volumes: string[] = [];

  /**
   * Applies one committed change (or, at start, an existing object as ADDED). False only for a
   * pod MODIFIED that changed nothing the index keeps of it (node, claims, deleting, terminal):
   * a status or metadata update, which the actors reading pods have no use for.
   */
  applyEvent(type: StoreEventType, resource: ResourceName, o: KubeObject): boolean {
    const gone = type === 'DELETED';
    switch (resource) {
      case 'nodes':
        this.applyNode(o, gone);
        return true;
      case 'pods':
        return this.applyPod(o, gone) || type !== 'MODIFIED';
      case 'persistentvolumes': {
        const claim = pvClaimRef(o);
        if (!claim) return true;
        const key = objectKey(claim.namespace, claim.name);
        if (gone) {
          this.pvByClaim.delete(key);
          return true;
        }
        const csi = pvCsiSource(o);
        const next = packPv(csi ? this.intern(uniqueVolumeName(csi.driver, csi.handle)) : -1, pvMultiAttachForbidden(o));
        const prev = this.pvByClaim.get(key);
        if (prev !== undefined && prev !== next) this.mappingGen++;
        this.pvByClaim.set(key, next);
        return true;
      }
      default:
        return true;
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

  /** Whether the pod's record changed: added, removed, or a field it keeps. */
  private applyPod(o: KubeObject, gone: boolean): boolean {
    const key = objectKey(o.metadata.namespace ?? '', o.metadata.name);
    const prev = this.pods.get(key);
    if (gone) {
      if (prev) this.removePod(key, prev);
      return prev !== undefined;
    }
    const nodeName = podNodeName(o);
    const node = nodeName ? this.nodeId(nodeName) : -1;
    if (prev && prev.node !== node) this.nodePods[prev.node]?.delete(key);
    const rec = prev ?? new PodRec(key, node, NO_CLAIMS, this.podKeys.length);
    if (!prev) {
      this.podKeys.push(key);
      this.pods.set(key, rec);
    }
    const deleting = o.metadata.deletionTimestamp !== undefined;
    const terminal = podPhaseTerminal(o);
    const keys = claimKeysOf(o.metadata.namespace ?? '', podClaimNames(o), rec.claimKeys);
    const changed = prev === undefined || rec.node !== node || keys !== rec.claimKeys || rec.deleting !== deleting || rec.terminal !== terminal;
    rec.node = node;
    if (keys !== rec.claimKeys) rec.volumeIds = undefined;
    rec.claimKeys = keys;
    rec.deleting = deleting;
    rec.terminal = terminal;
    if (node >= 0) (this.nodePods[node] ??= new Set()).add(key);
    return changed;
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

  /** Whether every claim of the pod is bound to a multi-attach-forbidden volume (false without claims). */
  allClaimsRwo(pod: PodRec): boolean {
    if (pod.claimKeys.length === 0) return false;
    return pod.claimKeys.every((k) => {
      const v = this.pvByClaim.get(k);
      return v !== undefined && pvRwo(v);
    });
  }

  boundVolumeCount(): number {
    return this.pvByClaim.size;
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

  /**
   * Volume ids a pod uses, or undefined if some claim is not bound yet. Cached per pod once
   * resolved: a pod's claims and their volumes do not change while it lives (a volume whose
   * claim or PV is deleted under a running pod stays in use, as a kubelet keeps it mounted);
   * the cache is dropped when the pod's claims change or a claim is bound to another volume.
   */
  podVolumes(pod: PodRec): readonly number[] | undefined {
    if (pod.volumeIds !== undefined && pod.volumeIdsGen === this.mappingGen) return pod.volumeIds;
    const out: number[] = [];
    for (const k of pod.claimKeys) {
      const v = this.pvByClaim.get(k);
      if (v === undefined) return undefined;
      const vid = pvVid(v);
      if (vid >= 0) out.push(vid);
    }
    pod.volumeIds = out;
    pod.volumeIdsGen = this.mappingGen;
    return out;
  }

  /** Changes whenever a cached resolution of pod volumes may be stale (see podVolumes). */
  volumeGeneration(): number {
    return this.mappingGen;
  }

  /** The key of a claim of the pod that is not bound yet, if any. */
  unboundClaim(pod: PodRec): string | undefined {
    return pod.claimKeys.find((k) => !this.pvByClaim.has(k));
  }

  /**
   * Interned ids of `names`, reusing `prev` (ids of the same node's previous list) where the
   * names are unchanged: a node's lists are sorted and change one entry at a time, so a name is
   * at its old position or one off it, and comparing it with the interned string there costs
   * less than hashing a freshly parsed one.
   */
  internAll(names: readonly string[], prev: readonly number[] | undefined): number[] {
    const out = new Array<number>(names.length);
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      const kept = prev && (this.sameAt(prev, i, name) ?? this.sameAt(prev, i + 1, name) ?? this.sameAt(prev, i - 1, name));
      out[i] = kept ?? this.intern(name);
    }
    return out;
  }

  /** `prev[i]` when it is the id of `name`. */
  private sameAt(prev: readonly number[], i: number, name: string): number | undefined {
    const p = i >= 0 && i < prev.length ? prev[i] : -1;
    return p >= 0 && this.volumes[p] === name ? p : undefined;
  }
}

const NO_CLAIMS: readonly string[] = Object.freeze([]);

/** Claim keys of a pod, reusing `prev` when they are the same. */
function claimKeysOf(namespace: string, claims: readonly string[], prev: readonly string[]): readonly string[] {
  if (claims.length === 0) return NO_CLAIMS;
  if (prev.length === claims.length && prev.every((k, i) => k.length === namespace.length + 1 + claims[i].length && k.endsWith(claims[i]) && k.startsWith(namespace))) return prev;
  return claims.map((c) => objectKey(namespace, c));
}

const EMPTY: ReadonlySet<string> = new Set();
