/**
 * The attacher's VolumeAttachments and PersistentVolumes, packed: VA names and PV names are
 * interned as ids (StringTable, bytes outside the JavaScript heap) and what the attacher keeps
 * of each is in typed arrays indexed by those ids. Each PV's VolumeAttachments are a list
 * threaded through the VA arrays, so the multi-attach check walks a PV's attachments without
 * a Set per PV. Node names are interned as small ids (one entry per node, not per VA).
 *
 * A VA id is the attachment's while it is in the table; a PV id lives while the PV is known
 * (its access modes seen and not deleted) or some VA names it.
 */
import { grownInt32 } from '../../packed/byte-arena.js';
import { StringTable } from '../../packed/string-table.js';

const NIL = -1;
/** VA flags. */
export const ATTACHED = 1;
export const DELETING = 2;
export const FINALIZED = 4;
const QUEUED_ATTACH = 8;
const QUEUED_DETACH = 16;
const QUEUED = QUEUED_ATTACH | QUEUED_DETACH;
/** PV modes. */
const PV_UNKNOWN = 0;
const PV_SHARED = 1;
const PV_FORBIDDEN = 2;

export type QueuedFor = 'attach' | 'detach' | undefined;

export class AttachmentTable {
  private readonly vaIds = new StringTable();
  private vaNode = new Int32Array(64);
  private vaPv = new Int32Array(64);
  private vaNext = new Int32Array(64);
  private vaPrev = new Int32Array(64);
  private vaFlags = new Uint8Array(64);
  private vaFailures = new Int32Array(64);

  private readonly pvIds = new StringTable();
  private pvMode = new Uint8Array(64);
  private pvHead = new Int32Array(64);

  private readonly nodeIds = new Map<string, number>();
  private readonly nodeNames: string[] = [];

  /** VolumeAttachments in the table. */
  get size(): number {
    return this.vaIds.size;
  }

  /** The id of the VA named `name`, or -1. */
  find(name: string): number {
    return this.vaIds.find(name);
  }

  /** Adds a VA (not in the table) on node `node` for PV `pv` (undefined: no PV source); answers its id. */
  add(name: string, node: string, pv: string | undefined): number {
    const id = this.vaIds.intern(name);
    if (id >= this.vaNode.length) this.growVas(id + 1);
    this.vaNode[id] = this.nodeId(node);
    this.vaFlags[id] = 0;
    this.vaFailures[id] = 0;
    const p = pv === undefined ? NIL : this.pvId(pv);
    this.vaPv[id] = p;
    this.vaPrev[id] = NIL;
    this.vaNext[id] = NIL;
    if (p !== NIL) {
      const head = this.pvHead[p];
      this.vaNext[id] = head;
      if (head !== NIL) this.vaPrev[head] = id;
      this.pvHead[p] = id;
    }
    return id;
  }

  /** Removes VA `id`; answers the name of its PV when that PV has no VA left, else undefined. */
  remove(id: number): string | undefined {
    const p = this.vaPv[id];
    let emptied: string | undefined;
    if (p !== NIL) {
      const prev = this.vaPrev[id];
      const next = this.vaNext[id];
      if (prev !== NIL) this.vaNext[prev] = next;
      else this.pvHead[p] = next;
      if (next !== NIL) this.vaPrev[next] = prev;
      if (this.pvHead[p] === NIL) {
        emptied = this.pvIds.text(p);
        this.releasePvIfUnused(p);
      }
    }
    this.vaIds.release(id);
    return emptied;
  }

  /** Whether `id` is a VA in the table now. */
  live(id: number): boolean {
    return this.vaIds.has(id);
  }

  name(id: number): string {
    return this.vaIds.text(id);
  }

  has(id: number, flag: number): boolean {
    return (this.vaFlags[id] & flag) !== 0;
  }

  set(id: number, flag: number, on: boolean): void {
    this.vaFlags[id] = on ? this.vaFlags[id] | flag : this.vaFlags[id] & ~flag;
  }

  queued(id: number): QueuedFor {
    const q = this.vaFlags[id] & QUEUED;
    return q === QUEUED_ATTACH ? 'attach' : q === QUEUED_DETACH ? 'detach' : undefined;
  }

  setQueued(id: number, q: QueuedFor): void {
    this.vaFlags[id] = (this.vaFlags[id] & ~QUEUED) | (q === 'attach' ? QUEUED_ATTACH : q === 'detach' ? QUEUED_DETACH : 0);
  }

  failures(id: number): number {
    return this.vaFailures[id];
  }

  setFailures(id: number, n: number): void {
    this.vaFailures[id] = n;
  }

  /** The VA's node id (see `nodeName`). */
  node(id: number): number {
    return this.vaNode[id];
  }

  nodeName(node: number): string {
    return this.nodeNames[node];
  }

  /** The VA's PV id, or -1 when it has no PV source. */
  pv(id: number): number {
    return this.vaPv[id];
  }

  pvName(pv: number): string {
    return this.pvIds.text(pv);
  }

  /** Ids of the VAs of PV id `pv` (a fresh array). */
  vasOf(pv: number): number[] {
    const out: number[] = [];
    for (let v = this.pvHead[pv]; v !== NIL; v = this.vaNext[v]) out.push(v);
    return out;
  }

  /** Whether some VA in the table names PV `name`. */
  pvInUse(name: string): boolean {
    const p = this.pvIds.find(name);
    return p >= 0 && this.pvHead[p] !== NIL;
  }

  /** Records a PV's multi-attach ban from its event (undefined: the PV was deleted). */
  setPvMode(name: string, forbidden: boolean | undefined): void {
    if (forbidden === undefined) {
      const p = this.pvIds.find(name);
      if (p < 0) return;
      this.pvMode[p] = PV_UNKNOWN;
      this.releasePvIfUnused(p);
      return;
    }
    this.pvMode[this.pvId(name)] = forbidden ? PV_FORBIDDEN : PV_SHARED;
  }

  /** The PV's multi-attach ban, or undefined when the PV is not known. */
  pvForbidden(pv: number): boolean | undefined {
    const m = this.pvMode[pv];
    return m === PV_UNKNOWN ? undefined : m === PV_FORBIDDEN;
  }

  private pvId(name: string): number {
    const found = this.pvIds.find(name);
    if (found >= 0) return found;
    const p = this.pvIds.intern(name);
    if (p >= this.pvMode.length) {
      const n = Math.max(p + 1, this.pvMode.length * 2);
      const m = new Uint8Array(n);
      m.set(this.pvMode);
      this.pvMode = m;
      this.pvHead = grownInt32(this.pvHead, n);
    }
    this.pvMode[p] = PV_UNKNOWN;
    this.pvHead[p] = NIL;
    return p;
  }

  private releasePvIfUnused(p: number): void {
    if (this.pvMode[p] === PV_UNKNOWN && this.pvHead[p] === NIL) this.pvIds.release(p);
  }

  private nodeId(name: string): number {
    let id = this.nodeIds.get(name);
    if (id === undefined) {
      id = this.nodeNames.length;
      this.nodeIds.set(name, id);
      this.nodeNames.push(name);
    }
    return id;
  }

  private growVas(min: number): void {
    const n = Math.max(min, this.vaNode.length * 2);
    this.vaNode = grownInt32(this.vaNode, n);
    this.vaPv = grownInt32(this.vaPv, n);
    this.vaNext = grownInt32(this.vaNext, n);
    this.vaPrev = grownInt32(this.vaPrev, n);
    this.vaFailures = grownInt32(this.vaFailures, n);
    const f = new Uint8Array(n);
    f.set(this.vaFlags);
    this.vaFlags = f;
  }
}
