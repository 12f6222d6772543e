/**
 * PodTracker: which (volume, node) pairs the populator added each pod to, and which pods name
 * each PVC. It lets a pod's removal undo exactly what its addition did (names, not ids: the
 * state's ids may be recycled), and the PVC worker (C8) find the pods waiting for a claim to bind.
 *
 * Held off the JavaScript heap, as a million pods' worth of it would otherwise be a few million
 * objects for every major collection to mark: a tracked pod is a record (its UID) in a
 * ByteArena, found by a KeyIndex, with its pod key, node and volumes as ids into refcounted
 * StringTables (pod keys, node names, volume names), kept in typed arrays by the record's slot;
 * a pod's second and further volumes are a record of ids in a second arena. The claim index is
 * a table of (pod key, claim) edges in typed arrays: each pod key chains its claims in volume
 * order, each claim lists its pod keys (doubly linked, so a pod leaves a shared claim in O(1)).
 *
 * Strings are made only on the way out: `get` and `values` decode a {@link TrackedPod}, a
 * snapshot that the tracker neither holds nor updates.
 */
import { ByteArena, grownInt32 } from '../packed/byte-arena.js';
import { KeyIndex } from '../packed/key-index.js';
import { StringTable } from '../packed/string-table.js';
import { ClaimEdges } from './claim-edges.js';

/** A tracked pod as decoded at the call that returned it (not updated by later changes). */
export interface TrackedPod {
  readonly uid: string;
  readonly namespace: string;
  /** `namespace/name`, the pod's key in the informer cache. */
  readonly key: string;
  readonly nodeName: string;
  /**
   * Unique volume names added to the desired state for this pod on `nodeName`, without repeats,
   * in the order added; a lone volume (the common case) as the string itself. Read it through
   * {@link trackedVolumes}; change it through the tracker.
   */
  readonly volumes: string | string[] | undefined;
}

/** The volumes of a tracked pod, as a list. */
export function trackedVolumes(t: TrackedPod): readonly string[] {
  const v = t.volumes;
  return v === undefined ? [] : typeof v === 'string' ? [v] : v;
}

const NONE = -1;

export class PodTracker {
  /** One record per tracked pod: its UID (part a). */
  private readonly pods = new ByteArena({ chunkBytes: 1 << 18 });
  private readonly byUid = new KeyIndex(this.pods);
  /** Pod keys, held by a tracked pod and by a pod naming claims (one reference each). */
  private readonly keys = new StringTable();
  private readonly nodes = new StringTable();
  private readonly volumeNames = new StringTable();
  /** Volume ids after a pod's first, as Int32 records by the slot of `more`. */
  private readonly more = new ByteArena({ chunkBytes: 1 << 16 });
  private readonly claims = new ClaimEdges();
  // By pod slot: key id, node id, first volume id (or NONE), slot in `more` (or NONE).
  private podKey = new Int32Array(64);
  private podNode = new Int32Array(64);
  private vol0 = new Int32Array(64);
  private volMore = new Int32Array(64);
  private scratch = Buffer.allocUnsafeSlow(64);
  /** The slot of the pod `create` or `get` last returned (`addVolume` follows them), until it is deleted. */
  private lastUid: string | undefined;
  private lastSlot = NONE;

  /** The pod tracked under `uid`, decoded (a snapshot), or undefined. */
  get(uid: string): TrackedPod | undefined {
    const s = this.byUid.find(uid);
    if (s < 0) return undefined;
    this.lastUid = uid;
    this.lastSlot = s;
    return this.decode(s, uid);
  }

  /**
   * Starts tracking a pod with no volumes (replacing what `uid` had); `key` is its
   * `namespace/name`. Returns its snapshot, to hand to {@link addVolume}.
   */
  create(uid: string, namespace: string, key: string, nodeName: string): TrackedPod {
    const old = this.byUid.find(uid);
    if (old >= 0) this.deleteSlot(old);
    const s = this.pods.newSlot();
    this.pods.set(s, uid, '');
    this.byUid.insert(s);
    if (s >= this.podKey.length) this.grow(s);
    this.podKey[s] = this.keys.acquire(key);
    this.podNode[s] = this.nodes.acquire(nodeName);
    this.vol0[s] = NONE;
    this.volMore[s] = NONE;
    this.lastUid = uid;
    this.lastSlot = s;
    return { uid, namespace, key, nodeName, volumes: undefined };
  }

  delete(uid: string): void {
    const s = this.byUid.find(uid);
    if (s >= 0) this.deleteSlot(s);
  }

  private deleteSlot(s: number): void {
    if (s === this.lastSlot) this.lastUid = undefined;
    this.keys.release(this.podKey[s]);
    this.nodes.release(this.podNode[s]);
    if (this.vol0[s] !== NONE) this.volumeNames.release(this.vol0[s]);
    const m = this.volMore[s];
    if (m !== NONE) {
      const n = this.more.length(m, 0) >> 2;
      const buf = this.more.chunkOf(m);
      const at = this.more.start(m, 0);
      for (let i = 0; i < n; i++) this.volumeNames.release(buf.readInt32LE(at + 4 * i));
      this.more.releaseSlot(m);
    }
    this.byUid.remove(s);
    this.pods.releaseSlot(s);
  }

  /** Records that the pod was added to `unique`'s desired pair; a no-op when already recorded or untracked. */
  addVolume(t: TrackedPod, unique: string): void {
    const s = this.slotOf(t.uid);
    if (s < 0) return;
    let id = this.volumeNames.find(unique);
    if (id < 0) id = this.volumeNames.add(unique);
    else if (this.holds(s, id)) return;
    else this.volumeNames.retain(id);
    if (this.vol0[s] === NONE) {
      this.vol0[s] = id;
      return;
    }
    const ids = this.extraIds(s);
    ids.push(id);
    this.setExtra(s, ids);
  }

  /** Forgets `unique` for the pod. */
  removeVolume(t: TrackedPod, unique: string): void {
    const s = this.slotOf(t.uid);
    const id = s < 0 ? NONE : this.volumeNames.find(unique);
    if (id < 0 || !this.holds(s, id)) return;
    const ids = this.extraIds(s);
    if (this.vol0[s] === id) this.vol0[s] = ids.length > 0 ? (ids.shift() as number) : NONE;
    else ids.splice(ids.indexOf(id), 1);
    this.setExtra(s, ids);
    this.volumeNames.release(id);
  }

  /**
   * Every tracked pod, decoded as it is reached. Live: a pod deleted before the walk reaches it
   * is not yielded; a pod created during the walk may or may not be (slots are reused).
   */
  *values(): IterableIterator<TrackedPod> {
    for (let s = 0; s < this.pods.slotLimit; s++) if (this.pods.has(s)) yield this.decode(s, this.pods.text(s, 0));
  }

  get size(): number {
    return this.byUid.count;
  }

  /**
   * Replaces the claims a pod (by `namespace/name`) names with the `claimName`s of its volumes.
   * Unchanged claims (every re-processing of a pod) cost one lookup and no allocation. Returns
   * whether the claims held for the pod changed.
   */
  setClaims(podKey: string, namespace: string, volumes: ReadonlyArray<{ readonly claimName?: string | undefined }>): boolean {
    let k = this.keys.find(podKey);
    const named = volumes.some(namesClaim);
    if (k >= 0 && this.claims.has(k)) {
      if (this.claims.same(k, namespace, volumes)) return false;
      this.claims.clear(k);
      if (!named) {
        this.keys.release(k);
        return true;
      }
    } else {
      if (!named) return false;
      if (k >= 0) this.keys.retain(k);
      else k = this.keys.add(podKey);
    }
    this.claims.set(k, namespace, volumes);
    return true;
  }

  clearClaims(podKey: string): void {
    const k = this.keys.find(podKey);
    if (k < 0 || !this.claims.has(k)) return;
    this.claims.clear(k);
    this.keys.release(k);
  }

  /** Pod keys naming the claim `namespace/name`, in the order they came to name it. */
  podsOfClaim(claimKey: string): readonly string[] {
    const ids = this.claims.podsOf(claimKey);
    const out = new Array<string>(ids.length);
    for (let i = 0; i < ids.length; i++) out[i] = this.keys.text(ids[i]);
    return out;
  }

  private slotOf(uid: string): number {
    return uid === this.lastUid ? this.lastSlot : this.byUid.find(uid);
  }

  private decode(s: number, uid: string): TrackedPod {
    const key = this.keys.text(this.podKey[s]);
    const slash = key.indexOf('/');
    const v0 = this.vol0[s];
    let volumes: string | string[] | undefined;
    if (v0 !== NONE) {
      const first = this.volumeNames.text(v0);
      if (this.volMore[s] === NONE) volumes = first;
      else {
        volumes = [first];
        for (const id of this.extraIds(s)) volumes.push(this.volumeNames.text(id));
      }
    }
    return { uid, namespace: slash < 0 ? '' : key.slice(0, slash), key, nodeName: this.nodes.text(this.podNode[s]), volumes };
  }

  private holds(s: number, id: number): boolean {
    if (this.vol0[s] === id) return true;
    const m = this.volMore[s];
    if (m === NONE) return false;
    const n = this.more.length(m, 0) >> 2;
    const buf = this.more.chunkOf(m);
    const at = this.more.start(m, 0);
    for (let i = 0; i < n; i++) if (buf.readInt32LE(at + 4 * i) === id) return true;
    return false;
  }

  private extraIds(s: number): number[] {
    const m = this.volMore[s];
    if (m === NONE) return [];
    const n = this.more.length(m, 0) >> 2;
    const buf = this.more.chunkOf(m);
    const at = this.more.start(m, 0);
    const ids = new Array<number>(n);
    for (let i = 0; i < n; i++) ids[i] = buf.readInt32LE(at + 4 * i);
    return ids;
  }

  private setExtra(s: number, ids: readonly number[]): void {
    let m = this.volMore[s];
    if (ids.length === 0) {
      if (m !== NONE) this.more.releaseSlot(m);
      this.volMore[s] = NONE;
      return;
    }
    if (m === NONE) m = this.volMore[s] = this.more.newSlot();
    if (this.scratch.length < ids.length * 4) this.scratch = Buffer.allocUnsafeSlow(ids.length * 8);
    for (let i = 0; i < ids.length; i++) this.scratch.writeInt32LE(ids[i], 4 * i);
    this.more.setBytes(m, this.scratch, 0, ids.length * 4);
  }

  private grow(s: number): void {
    const n = Math.max(s + 1, this.podKey.length * 2);
    this.podKey = grownInt32(this.podKey, n);
    this.podNode = grownInt32(this.podNode, n);
    this.vol0 = grownInt32(this.vol0, n);
    this.volMore = grownInt32(this.volMore, n);
  }
}

function namesClaim(v: { readonly claimName?: string | undefined }): boolean {
  return !!v.claimName;
}
