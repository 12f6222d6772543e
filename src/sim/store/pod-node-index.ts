/**
 * Pods by spec.nodeName: the index behind `fieldSelector=spec.nodeName=X`, the query kubelets
 * and the attach/detach controller's per-node lookups make. Holds the pods' arena slots in one
 * doubly linked list per node, threaded through typed arrays indexed by slot; node names are
 * interned in an arena of their own (an id per node with pods, freed when its last pod leaves).
 * No JavaScript object per pod or per node.
 */
import { ByteArena, grownInt32 } from '../../packed/byte-arena.js';
import { KeyIndex } from '../../packed/key-index.js';

const NIL = -1;

export class PodNodeIndex {
  private readonly names = new ByteArena({ chunkBytes: 1 << 16 });
  private readonly ids = new KeyIndex(this.names);
  private head = new Int32Array(16).fill(NIL);
  private podCount = new Int32Array(16);
  /** Per pod slot: its node id, and its neighbours in that node's list. */
  private nodeOf = new Int32Array(64).fill(NIL);
  private next = new Int32Array(64);
  private prev = new Int32Array(64);

  /** Moves pod `slot` from `oldNode` to `newNode` (either undefined for unbound or removed). */
  move(slot: number, oldNode: string | undefined, newNode: string | undefined): void {
    if (oldNode === newNode) return;
    if (slot >= this.nodeOf.length) this.growPods(slot + 1);
    if (this.nodeOf[slot] !== NIL) this.unlink(slot);
    if (newNode !== undefined) this.link(slot, this.intern(newNode));
  }

  /** Drops pod `slot` from the index, wherever it is (its slot is about to be freed). */
  forget(slot: number): void {
    if (slot < this.nodeOf.length && this.nodeOf[slot] !== NIL) this.unlink(slot);
  }

  /** Slots of the pods bound to `node`, in no particular order. */
  slotsOn(node: string): number[] {
    const id = this.ids.find(node);
    const out: number[] = [];
    if (id < 0) return out;
    for (let s = this.head[id]; s !== NIL; s = this.next[s]) out.push(s);
    return out;
  }

  private link(slot: number, id: number): void {
    const h = this.head[id];
    this.nodeOf[slot] = id;
    this.prev[slot] = NIL;
    this.next[slot] = h;
    if (h !== NIL) this.prev[h] = slot;
    this.head[id] = slot;
    this.podCount[id]++;
  }

  private unlink(slot: number): void {
    const id = this.nodeOf[slot];
    const p = this.prev[slot];
    const n = this.next[slot];
    if (p === NIL) this.head[id] = n;
    else this.next[p] = n;
    if (n !== NIL) this.prev[n] = p;
    this.nodeOf[slot] = NIL;
    if (--this.podCount[id] === 0) {
      this.ids.remove(id);
      this.names.releaseSlot(id);
    }
  }

  private intern(node: string): number {
    const found = this.ids.find(node);
    if (found >= 0) return found;
    const id = this.names.newSlot();
    this.names.set(id, node, '');
    this.ids.insert(id);
    if (id >= this.head.length) {
      const n = Math.max(id + 1, this.head.length * 2);
      const head = grownInt32(this.head, n);
      head.fill(NIL, this.head.length);
      this.head = head;
      this.podCount = grownInt32(this.podCount, n);
    }
    this.head[id] = NIL;
    this.podCount[id] = 0;
    return id;
  }

  private growPods(min: number): void {
    const n = Math.max(min, this.nodeOf.length * 2);
    const nodeOf = grownInt32(this.nodeOf, n);
    nodeOf.fill(NIL, this.nodeOf.length);
    this.nodeOf = nodeOf;
    this.next = grownInt32(this.next, n);
    this.prev = grownInt32(this.prev, n);
  }
}
