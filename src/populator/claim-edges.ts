/**
 * ClaimEdges: the claim index of the pod tracker, off the JavaScript heap. It relates pod keys
 * (ids the caller holds in its own StringTable) to the claims their volumes name (`namespace/
 * claimName`, held here as ids of a refcounted StringTable), one edge per (pod, volume naming a
 * claim), in typed arrays:
 * - a pod key chains its edges in volume order, so that re-processing a pod compares its claims
 *   without allocating (`same`);
 * - a claim lists the pod keys naming it, doubly linked, so a pod leaves a claim shared by
 *   thousands of pods in O(1). A pod naming one claim twice is listed once: its second edge is
 *   kept in the pod's chain only.
 */
import { grownInt32 } from '../packed/byte-arena.js';
import { StringTable } from '../packed/string-table.js';

const NONE = -1;
/** `prev` of an edge that is in its pod's chain but not in its claim's list (a repeat). */
const UNLINKED = -2;

type Volumes = ReadonlyArray<{ readonly claimName?: string | undefined }>;

export class ClaimEdges {
  private readonly claimKeys = new StringTable();
  /** By claim id: its newest edge. */
  private claimHead = new Int32Array(64).fill(NONE);
  /** By pod key id: its first edge. */
  private keyHead = new Int32Array(64).fill(NONE);
  // By edge: its pod key, its claim, the pod's next edge, the claim's next (older) and previous edges.
  private eKey = new Int32Array(64);
  private eClaim = new Int32Array(64);
  private eNextOfKey = new Int32Array(64);
  private eNext = new Int32Array(64);
  private ePrev = new Int32Array(64);
  private edgesIssued = 0;
  /** Freed edges, chained through `eNextOfKey`. */
  private freeEdge = NONE;

  /** Claims with at least one edge. */
  get claimCount(): number {
    return this.claimKeys.size;
  }

  /** Whether pod key `k` names claims. */
  has(k: number): boolean {
    return k < this.keyHead.length && this.keyHead[k] !== NONE;
  }

  /** Whether the non-empty `claimName`s of `volumes` are, in order, the claims of `k`. Allocates nothing. */
  same(k: number, namespace: string, volumes: Volumes): boolean {
    let e = this.has(k) ? this.keyHead[k] : NONE;
    for (let i = 0; i < volumes.length; i++) {
      const name = volumes[i].claimName;
      if (!name) continue;
      if (e === NONE || !this.claimKeys.equalsJoined(this.eClaim[e], namespace, '/', name)) return false;
      e = this.eNextOfKey[e];
    }
    return e === NONE;
  }

  /** Records the claims of `volumes` for pod key `k`, which names none. */
  set(k: number, namespace: string, volumes: Volumes): void {
    if (k >= this.keyHead.length) this.keyHead = grownFilled(this.keyHead, k + 1);
    let last = NONE;
    for (let i = 0; i < volumes.length; i++) {
      const name = volumes[i].claimName;
      if (!name) continue;
      const c = this.claimKeys.acquire(`${namespace}/${name}`);
      if (c >= this.claimHead.length) this.claimHead = grownFilled(this.claimHead, c + 1);
      const e = this.newEdge();
      this.eKey[e] = k;
      this.eClaim[e] = c;
      this.eNextOfKey[e] = NONE;
      if (this.chainHolds(k, c)) this.ePrev[e] = UNLINKED;
      else {
        const head = this.claimHead[c];
        this.eNext[e] = head;
        this.ePrev[e] = NONE;
        if (head !== NONE) this.ePrev[head] = e;
        this.claimHead[c] = e;
      }
      if (last === NONE) this.keyHead[k] = e;
      else this.eNextOfKey[last] = e;
      last = e;
    }
  }

  /** Forgets the claims of pod key `k`. */
  clear(k: number): void {
    if (!this.has(k)) return;
    let e = this.keyHead[k];
    this.keyHead[k] = NONE;
    while (e !== NONE) {
      const next = this.eNextOfKey[e];
      const c = this.eClaim[e];
      const p = this.ePrev[e];
      if (p !== UNLINKED) {
        const n = this.eNext[e];
        if (p === NONE) this.claimHead[c] = n;
        else this.eNext[p] = n;
        if (n !== NONE) this.ePrev[n] = p;
      }
      this.claimKeys.release(c);
      this.eNextOfKey[e] = this.freeEdge;
      this.freeEdge = e;
      e = next;
    }
  }

  /** Pod key ids naming `claimKey`, in the order they came to name it. */
  podsOf(claimKey: string): number[] {
    const c = this.claimKeys.find(claimKey);
    if (c < 0) return [];
    const out: number[] = [];
    for (let e = this.claimHead[c]; e !== NONE; e = this.eNext[e]) out.push(this.eKey[e]);
    return out.reverse();
  }

  private chainHolds(k: number, c: number): boolean {
    if (!this.has(k)) return false;
    for (let e = this.keyHead[k]; e !== NONE; e = this.eNextOfKey[e]) if (this.eClaim[e] === c) return true;
    return false;
  }

  private newEdge(): number {
    if (this.freeEdge !== NONE) {
      const e = this.freeEdge;
      this.freeEdge = this.eNextOfKey[e];
      return e;
    }
    const e = this.edgesIssued++;
    if (e === this.eKey.length) {
      const n = e * 2;
      this.eKey = grownInt32(this.eKey, n);
      this.eClaim = grownInt32(this.eClaim, n);
      this.eNextOfKey = grownInt32(this.eNextOfKey, n);
      this.eNext = grownInt32(this.eNext, n);
      this.ePrev = grownInt32(this.ePrev, n);
    }
    return e;
  }
}

function grownFilled(a: Int32Array, min: number) {
  const b = new Int32Array(Math.max(min, a.length * 2)).fill(NONE);
  b.set(a);
  return b;
}
