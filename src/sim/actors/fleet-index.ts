/**
 * The actors' shared, compact view of the fleet, kept current from store events: nodes
 * (readiness, taint, pods on each), pods (node, claims, lifecycle), claims → volumes (by the
 * PV's claimRef), and unique volume names interned as small integers. Built once from a full list at
 * start, then updated per event; nothing here rescans the store.
 *
 * Per pod, claim and volume it holds no JavaScript object: pod keys, claim keys and volume
 * names are interned as ids in byte arenas (StringTable), and what the index keeps of each is in
 * typed arrays indexed by those ids (a node's pods are a list threaded through them). A
 * `PodRec` is a short-lived view of one pod id, made when asked for.
 */
import { grownInt32 } from '../../packed/byte-arena.js';
import { StringTable } from '../../packed/string-table.js';
import { ClaimVolumes } from './claim-volumes.js';
import { PodRec } from './pod-rec.js';
import type { KubeObject, ResourceName, StoreEventType } from '../store/sim-store.js';
import { nodeHasTaint, nodeIsReady, podClaimNames, podNodeName, podPhaseTerminal, pvClaimRef, pvCsiSource, pvMultiAttachForbidden } from './fields.js';
import { OUT_OF_SERVICE_TAINT, objectKey, uniqueVolumeName } from './names.js';
import type { Prng } from './prng.js';

export { PodRec } from './pod-rec.js';

const NIL = -1;
const DELETING = 1;
const TERMINAL = 2;

export class FleetIndex {
  private readonly nodeIds = new Map<string, number>();
  readonly nodeNames: string[] = [];
  private readonly nodeReady: boolean[] = [];
  private readonly nodeExists: boolean[] = [];
  private readonly nodeOos: boolean[] = [];
  /** Per node id: its first pod id (the rest follow through `podNext`). */
  private nodeHead = new Int32Array(16).fill(NIL);
  private ready = 0;

  /** Pod keys (`namespace/name`); per pod id the arrays below. */
  private readonly podIds = new StringTable();
  private podNodeOf = new Int32Array(64);
  private podNext = new Int32Array(64);
  private podPrev = new Int32Array(64);
  private podFlags = new Uint8Array(64);
  /** The pod's only claim id, or NIL; a pod with two or more claims has them in `podClaimList`. */
  private podClaim = new Int32Array(64);
  private readonly podClaimList = new Map<number, Int32Array>();
  /** Position in `pickIds`, the pods in random-pick order. */
  private podPos = new Int32Array(64);
  /** The volume generation at which the pod's volumes last resolved (-1: not since its claims were set). */
  private podResolvedGen = new Int32Array(64);
  private pickIds = new Int32Array(64);
  private podTotal = 0;

  /** Claims (the pods' and the PVs' claimRefs) and their volumes. */
  private readonly claims = new ClaimVolumes();

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
        if (gone) this.claims.unbind(key);
        else {
          const csi = pvCsiSource(o);
          this.claims.bind(key, csi ? uniqueVolumeName(csi.driver, csi.handle) : undefined, pvMultiAttachForbidden(o));
        }
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
    const namespace = o.metadata.namespace ?? '';
    const key = objectKey(namespace, o.metadata.name);
    let id = this.podIds.find(key);
    if (gone) {
      if (id >= 0) this.removePod(id);
      return id >= 0;
    }
    const nodeName = podNodeName(o);
    const node = nodeName ? this.nodeId(nodeName) : -1;
    const added = id < 0;
    if (added) id = this.addPod(key);
    const flags = (o.metadata.deletionTimestamp !== undefined ? DELETING : 0) | (podPhaseTerminal(o) ? TERMINAL : 0);
    const claimsChanged = this.setClaims(id, namespace, podClaimNames(o));
    const changed = added || this.podNodeOf[id] !== node || claimsChanged || this.podFlags[id] !== flags;
    if (this.podNodeOf[id] !== node) {
      this.unlink(id);
      this.link(id, node);
    }
    this.podFlags[id] = flags;
    return changed;
  }

  private addPod(key: string): number {
    const id = this.podIds.intern(key);
    if (id >= this.podNodeOf.length) {
      const n = Math.max(id + 1, this.podNodeOf.length * 2);
      this.podNodeOf = grownInt32(this.podNodeOf, n);
      this.podNext = grownInt32(this.podNext, n);
      this.podPrev = grownInt32(this.podPrev, n);
      this.podClaim = grownInt32(this.podClaim, n);
      this.podPos = grownInt32(this.podPos, n);
      this.podResolvedGen = grownInt32(this.podResolvedGen, n);
      const f = new Uint8Array(n);
      f.set(this.podFlags);
      this.podFlags = f;
    }
    this.podNodeOf[id] = NIL;
    this.podClaim[id] = NIL;
    this.podFlags[id] = 0;
    this.podResolvedGen[id] = -1;
    if (this.podTotal === this.pickIds.length) this.pickIds = grownInt32(this.pickIds, this.podTotal * 2);
    this.podPos[id] = this.podTotal;
    this.pickIds[this.podTotal++] = id;
    return id;
  }

  private removePod(id: number): void {
    this.unlink(id);
    this.setClaims(id, '', []);
    const last = this.pickIds[--this.podTotal];
    const pos = this.podPos[id];
    this.pickIds[pos] = last;
    this.podPos[last] = pos;
    this.podIds.release(id);
  }

  /** Sets the pod's claims (names in `namespace`); true when they differ from what it had. */
  private setClaims(id: number, namespace: string, names: readonly string[]): boolean {
    const claims = this.claims;
    const prev = this.podClaimIds(id);
    if (prev.length === names.length && prev.every((c, i) => claims.is(c, objectKey(namespace, names[i])))) return false;
    const next = names.map((n) => claims.claimId(objectKey(namespace, n)));
    for (const c of next) claims.ref(c);
    this.podResolvedGen[id] = -1;
    this.podClaim[id] = next.length === 1 ? next[0] : NIL;
    if (next.length > 1) this.podClaimList.set(id, Int32Array.from(next));
    else this.podClaimList.delete(id);
    for (const c of prev) claims.unref(c);
    return true;
  }

  private link(id: number, node: number): void {
    this.podNodeOf[id] = node;
    if (node < 0) return;
    const head = this.nodeHead[node];
    this.podPrev[id] = NIL;
    this.podNext[id] = head;
    if (head !== NIL) this.podPrev[head] = id;
    this.nodeHead[node] = id;
  }

  private unlink(id: number): void {
    const node = this.podNodeOf[id];
    this.podNodeOf[id] = NIL;
    if (node < 0) return;
    const prev = this.podPrev[id];
    const next = this.podNext[id];
    if (prev !== NIL) this.podNext[prev] = next;
    else this.nodeHead[node] = next;
    if (next !== NIL) this.podPrev[next] = prev;
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
      if (id >= this.nodeHead.length) {
        const h = new Int32Array(this.nodeHead.length * 2).fill(NIL);
        h.set(this.nodeHead);
        this.nodeHead = h;
      }
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

  /** Ids of the pods bound to node `id` (a fresh array, in no particular order). */
  podsOn(id: number): number[] {
    const out: number[] = [];
    for (let p = id >= 0 && id < this.nodeHead.length ? this.nodeHead[id] : NIL; p !== NIL; p = this.podNext[p]) out.push(p);
    return out;
  }

  /** A view of the pod with this key, or undefined. */
  pod(key: string): PodRec | undefined {
    const id = this.podIds.find(key);
    return id < 0 ? undefined : new PodRec(this, id);
  }

  /** A view of an indexed pod id. */
  podById(id: number): PodRec {
    return new PodRec(this, id);
  }

  podKey(id: number): string {
    return this.podIds.text(id);
  }

  podNode(id: number): number {
    return this.podNodeOf[id];
  }

  podDeleting(id: number): boolean {
    return (this.podFlags[id] & DELETING) !== 0;
  }

  podTerminal(id: number): boolean {
    return (this.podFlags[id] & TERMINAL) !== 0;
  }

  /** The pod's claim ids (see `claimKey`). */
  podClaimIds(id: number): readonly number[] | Int32Array {
    const one = this.podClaim[id];
    if (one !== NIL) return [one];
    return this.podClaimList.get(id) ?? NO_CLAIMS;
  }

  /** The key (`namespace/claim`) of a claim id. */
  claimKey(c: number): string {
    return this.claims.claimKey(c);
  }

  podCount(): number {
    return this.podTotal;
  }

  randomPod(prng: Prng): PodRec | undefined {
    if (this.podTotal === 0) return undefined;
    return new PodRec(this, this.pickIds[prng.int(this.podTotal)]);
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

  /** Whether every claim of the pod (a view or an id) is bound to a multi-attach-forbidden volume (false without claims). */
  allClaimsRwo(pod: PodRec | number): boolean {
    const claims = this.podClaimIds(idOf(pod));
    if (claims.length === 0) return false;
    for (const c of claims) if (!this.claims.isBound(c) || !this.claims.isRwo(c)) return false;
    return true;
  }

  boundVolumeCount(): number {
    return this.claims.boundCount;
  }

  /** Interned id of a unique volume name. */
  intern(u: string): number {
    return this.claims.intern(u);
  }

  volumeName(vid: number): string {
    return this.claims.volumeName(vid);
  }

  /**
   * Volume ids a pod uses (a fresh array), or undefined if some claim is not bound yet. A
   * pod's claims and their volumes do not change while it lives: a volume whose claim or PV is
   * deleted under a running pod stays in use, as a kubelet keeps it mounted. So once a pod's
   * volumes resolved, a claim whose PV is gone still answers the volume it had, until the pod's
   * claims change or a claim is bound to another volume (`volumeGeneration`).
   */
  podVolumes(pod: PodRec | number): number[] | undefined {
    const id = idOf(pod);
    const claims = this.claims;
    const resolved = this.podResolvedGen[id] === claims.volumeGeneration;
    const out: number[] = [];
    for (const c of this.podClaimIds(id)) {
      if (!claims.isResolved(c) || (!claims.isBound(c) && !resolved)) return undefined;
      const vid = claims.volumeOf(c);
      if (vid >= 0) out.push(vid);
    }
    this.podResolvedGen[id] = claims.volumeGeneration;
    return out;
  }

  /** Changes whenever a resolution of pod volumes a caller keeps may be stale (see podVolumes). */
  volumeGeneration(): number {
    return this.claims.volumeGeneration;
  }

  /** The key of a claim of the pod that is not bound yet, if any. */
  unboundClaim(pod: PodRec | number): string | undefined {
    for (const c of this.podClaimIds(idOf(pod))) if (!this.claims.isBound(c)) return this.claims.claimKey(c);
    return undefined;
  }

  /**
   * Interned ids of `names`, reusing `prev` (ids of the same node's previous list) where the
   * names are unchanged: a node's lists are sorted and change one entry at a time, so a name is
   * at its old position or one off it, and comparing it with the interned bytes there costs
   * less than hashing a freshly parsed one.
   */
  internAll(names: readonly string[], prev: ArrayLike<number> | undefined): number[] {
    const out = new Array<number>(names.length);
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      const kept = prev && (this.sameAt(prev, i, name) ?? this.sameAt(prev, i + 1, name) ?? this.sameAt(prev, i - 1, name));
      out[i] = kept ?? this.intern(name);
    }
    return out;
  }

  /** `prev[i]` when it is the id of `name`. */
  private sameAt(prev: ArrayLike<number>, i: number, name: string): number | undefined {
    const p = i >= 0 && i < prev.length ? prev[i] : -1;
    return p >= 0 && this.claims.isVolume(p, name) ? p : undefined;
  }
}

const NO_CLAIMS: readonly number[] = Object.freeze([]);

const idOf = (pod: PodRec | number): number => (typeof pod === 'number' ? pod : pod.id);
