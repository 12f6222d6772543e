/**
 * WorldCore: the tables, the interners and the invariants that tie them together: pair
 * records linked into their volume's and their node's list (pair-links.ts), ids freed only
 * when nothing references them, the counters, the conflict set (G3), the VF_ATTACHED_ANY bit
 * (D7) and the report sets (D6). WorldStateImpl (the public API) and OperationTable build on it.
 *
 * Pair slots: slot v (for v below the volume capacity) is the home slot of volume id v, and a
 * volume's pair goes there whenever it is free; other pairs (the second and further pairs of a
 * volume, or a volume whose home slot an older pair holds) go to the overflow slots, at or
 * above the volume capacity. Most volumes have one pair, so most lookups find the pair at its
 * home slot, whose address is known from the volume id alone: the pair's record, flags and pod
 * are fetched at once, beside the volume word, instead of after it (one cache miss fewer on a
 * cold pair, the common case at a million pairs). A home slot nothing uses is a hole the plan
 * kernel skips like any free slot; the volume capacity's headroom bounds the holes.
 *
 * Pair table size: the home region [0, volume capacity) and the overflow region above it are
 * sized apart, so the volume capacity's slack does not double as overflow room. Capacity hints
 * size the overflow region for `pairs - volumes` pairs (one pair per volume at home, the rest
 * overflow); a full overflow region grows by half of itself (at least an eighth of the table),
 * not the whole table by half.
 */
import {
  NF_HEALTHY, NF_LIVE, NF_MANAGED, NF_OUT_OF_SERVICE, NF_REMOVED, NF_STATUS_NEEDED, NF_TRACKED, PF_ATTACHED, PF_CONFLICT, PF_DESIRED, PF_LIVE,
  PF_MOUNTED, PF_OP_HOLD, PF_PENDING, PF_REPORTED, PF_UNCERTAIN, PR_NODE, PR_TIMER, PR_VOLUME,
  VF_ATTACHED_ANY, VF_FORBIDDEN, VF_LIVE,
} from '../kernel/abi.js';
import { StringListColumn } from '../packed/string-list-column.js';
import { StringColumn } from '../packed/string-column.js';
import { Interner } from './interner.js';
import { END, linkPair, nextOfNode, nextOfVolume, unlinkPair } from './pair-links.js';
import { alignCapacity, PAIR_RECORD_WORDS, SharedTables, type Capacities } from './shared-tables.js';
import { PluginTotals } from './plugin-totals.js';
import { VolumeRecords } from './volume-records.js';
import type { EntrySpec } from './world-state.js';

const W = PAIR_RECORD_WORDS;
const VOL = PR_VOLUME / 4;
const NODE = PR_NODE / 4;

export interface Counters {
  managedNodes: number;
  pairs: number;
  desiredPairs: number;
  desiredAttached: number;
  attached: number;
  uncertain: number;
  reportedAttached: number;
  pendingOperations: number;
  backoffOperations: number;
  statusUpdatesNeeded: number;
}

/** Asks whether operation state still references a pair slot or a volume (OperationTable). */
export interface OperationRefs {
  holdsPair(slot: number): boolean;
  holdsVolume(volume: number): boolean;
}

export class WorldCore {
  readonly t: SharedTables;
  readonly nodes = new Interner();
  readonly volumes = new Interner();
  /** First pod UID of each pair slot, as bytes; further pods in `morePods` (see PodSets). */
  readonly podFirst = new StringColumn();
  readonly morePods = new Map<number, string[]>();
  /** Per node: last observed volumesInUse as given, as bytes; none = never observed (D3). */
  readonly inUse = new StringListColumn();
  /** Per node: that list is strictly ascending (see volumes-in-use.ts). */
  inUseSorted = new Uint8Array(64);
  /**
   * Per volume id, its opaque host metadata and the spec of its desired entries, as bytes
   * (VolumeRecords). The spec of each desired entry (§C: upstream keeps the spec per (U,node)
   * entry, from the pod that created it, and attaches with it): per volume id the spec of the
   * first entry that was given one since the id went live, and per pair slot, in
   * `records.pairSpecs`, only a spec other than its volume's (two PVs with one CSI handle, a pod
   * with a read-only claim, a PV edited since). "Other" is by value (the spec's JSON). Most
   * volumes have one spec for all their entries, the one their info holds, so most pairs and
   * volumes cost nothing here beyond the info's record.
   */
  readonly records = new VolumeRecords(this.volumes);
  /** Desired and actual pairs per volume plugin label (O: total_volumes). */
  readonly pluginTotals = new PluginTotals();
  /**
   * Per volume, the devicePath its node status entries carry, when not '' (A2 from node status;
   * an attach or an Uncertain mark sets it again, to '' for every plugin here). Per volume, as
   * upstream's actual state keeps it.
   */
  readonly devicePaths = new StringColumn();
  readonly conflictSlots = new Set<number>();
  readonly counters: Counters = {
    managedNodes: 0, pairs: 0, desiredPairs: 0, desiredAttached: 0, attached: 0, uncertain: 0, reportedAttached: 0,
    pendingOperations: 0, backoffOperations: 0, statusUpdatesNeeded: 0,
  };
  /** One past the highest pair slot ever used. */
  pairHighWater = 0;
  /** One past the highest overflow slot ever used (0 = none yet). */
  private overflowHighWater = 0;
  /** Freed overflow slots; entries now below the volume capacity (home slots) are dropped when popped. */
  private readonly freeOverflow: number[] = [];
  /** Nodes deleted while pods still wanted volumes on them (B2): removed when the last goes. */
  private readonly removalDeferred = new Set<number>();
  ops!: OperationRefs;

  constructor(caps: Partial<Capacities>) {
    const { volumes, pairs } = caps;
    const overflow = volumes !== undefined && pairs !== undefined ? pairs - volumes : 0;
    this.t = new SharedTables(overflow > 0 ? { ...caps, pairs: alignCapacity(volumes as number) + overflow } : caps);
  }

  // ---- nodes and volumes -------------------------------------------------------------------
  /** Whether `id` is a live node id (any other number, including -1 and NaN, is not). */
  nodeLive(id: number): boolean {
    return (this.t.nodeFlags[id] & NF_LIVE) !== 0;
  }

  volumeLive(id: number): boolean {
    return (this.t.vflags(id) & VF_LIVE) !== 0;
  }

  // Room before the id: a table that cannot grow (memory refused, or the 2 GiB maximum) must
  // refuse the name before it takes an id, or the id would stay live with no row behind it and
  // every plan after would fail on a node or volume range past the table's end.
  internNode(name: string): number {
    if (this.nodes.highWater >= this.t.caps.nodes && this.nodes.wouldExtend(name)) this.t.ensure('nodes', this.nodes.highWater);
    const id = this.nodes.intern(name);
    if (this.nodes.created) {
      this.t.ensure('nodes', id);
      this.t.nodeFlags[id] = NF_LIVE;
      this.t.nodeHead[id] = END;
      this.inUse.clear(id);
    } else {
      this.t.nodeFlags[id] &= ~NF_REMOVED;
      this.removalDeferred.delete(id); // the node is back (an event names it again)
    }
    return id;
  }

  internVolume(name: string): number {
    if (this.volumes.highWater >= this.t.caps.volumes && this.volumes.wouldExtend(name)) this.t.ensure('volumes', this.volumes.highWater);
    const id = this.volumes.intern(name);
    if (this.volumes.created) {
      this.t.ensure('volumes', id);
      this.t.setVflags(id, VF_LIVE);
      this.t.setVhead(id, END);
    }
    return id;
  }

  /**
   * B2: removes a node whose object was deleted, unless pods still want volumes on it; then the
   * removal waits (`deferred`) and happens when the last of them goes (removePod), instead of
   * never: upstream keeps such a node for the life of the process, which on a fleet whose nodes
   * come and go under new names grows without bound (ids, names, the plans' node range).
   * Removed: unmanaged, unhealthy, untainted; its actual pairs and volumesInUse stay (D4) and its
   * id is freed with its last pair. Returns whether it was removed now.
   */
  removeNode(node: number): boolean {
    if (this.nodeHasDesired(node)) {
      this.removalDeferred.add(node);
      return false;
    }
    this.removalDeferred.delete(node);
    const f = this.t.nodeFlags[node];
    if (f & NF_MANAGED) this.counters.managedNodes--;
    this.t.nodeFlags[node] = (f & ~(NF_MANAGED | NF_HEALTHY | NF_OUT_OF_SERVICE)) | NF_REMOVED;
    this.maybeFreeNode(node);
    return true;
  }

  /** After a node lost a desired pair: completes its deferred removal once none is left. */
  desiredLeft(node: number): void {
    if (this.removalDeferred.has(node)) this.removeNode(node);
  }

  /** Frees a removed node nothing references (not even a pending status write, K3/K4). */
  maybeFreeNode(node: number): void {
    const f = this.t.nodeFlags[node];
    if ((f & NF_REMOVED) === 0 || (f & NF_STATUS_NEEDED) !== 0 || this.t.nodeHead[node] !== END) return;
    this.t.nodeFlags[node] = 0;
    this.removalDeferred.delete(node);
    this.inUse.clear(node);
    this.nodes.release(node);
  }

  /** Frees a volume with no pairs and no volume-wide operation state. */
  maybeFreeVolume(volume: number): boolean {
    if (this.t.vhead(volume) !== END || this.ops.holdsVolume(volume)) return false;
    this.t.setVflags(volume, 0);
    this.records.clearVolume(volume);
    this.pluginTotals.clear(volume);
    this.devicePaths.clear(volume);
    this.volumes.release(volume);
    return true;
  }

  // ---- pairs -------------------------------------------------------------------------------
  /** The pair slot of (volume, node), or -1. O(1) at the volume's home slot, else
   * O(min(pairs of volume, pairs of node)). */
  findPair(volume: number, node: number): number {
    const t = this.t;
    const r = t.pairRecords;
    // The home slot first: its loads do not wait for the volume word (see the file comment).
    if (volume < this.pairHighWater && (t.pairFlags[volume] & PF_LIVE) !== 0
      && r[volume * W + VOL] === volume && r[volume * W + NODE] === node) return volume;
    let a = t.vhead(volume);
    if (a === END) return -1;
    // Most volumes have one pair: the volume's first pair settles it without touching the
    // node's list head (one cache miss fewer).
    if (r[a * W + NODE] === node) return a;
    a = nextOfVolume(r, a);
    let b = t.nodeHead[node];
    // A pair is on both lists, so the walk can stop when either list ends.
    while (a !== END && b !== END) {
      if (r[b * W + VOL] === volume) return b;
      if (r[a * W + NODE] === node) return a;
      a = nextOfVolume(r, a);
      b = nextOfNode(r, b);
    }
    return -1;
  }

  getOrCreatePair(volume: number, node: number): number {
    const found = this.findPair(volume, node);
    if (found >= 0) return found;
    const t = this.t;
    const home = volume < t.caps.volumes && (volume >= this.pairHighWater || t.pairFlags[volume] === 0);
    const slot = home ? volume : this.takeOverflowSlot();
    if (slot >= this.pairHighWater) {
      t.ensure('pairs', slot, home ? undefined : this.overflowGrowth());
      this.pairHighWater = slot + 1;
    }
    const r = t.pairRecords;
    r[slot * W + VOL] = volume;
    r[slot * W + NODE] = node;
    r[slot * W + PR_TIMER / 4] = 0;
    linkPair(t, slot, volume, node);
    t.pairFlags[slot] = PF_LIVE | (this.isMounted(volume, node) ? PF_MOUNTED : 0);
    this.counters.pairs++;
    return slot;
  }

  /** A free slot at or above the volume capacity (which only grows: a freed overflow slot the
   * volume table has grown over is a home slot now, left to its volume). */
  private takeOverflowSlot(): number {
    const volumeCap = this.t.caps.volumes;
    while (this.freeOverflow.length > 0) {
      const slot = this.freeOverflow.pop() as number;
      if (slot >= volumeCap) return slot;
    }
    const slot = Math.max(this.overflowHighWater, volumeCap);
    this.overflowHighWater = slot + 1;
    return slot;
  }

  /** The pair capacity to grow to when the overflow region is full: the region grows by half,
   * and the table by at least an eighth (so relayouts stay geometric). */
  private overflowGrowth(): number {
    const { volumes, pairs } = this.t.caps;
    const room = Math.max(0, pairs - volumes);
    return volumes + Math.max(Math.floor(room * 1.5), Math.floor(pairs / 8));
  }

  /** Frees the slot when nothing (desired, actual, operation state) holds it. */
  maybeFreePair(slot: number): void {
    const f = this.t.pairFlags[slot];
    if ((f & (PF_DESIRED | PF_ATTACHED | PF_UNCERTAIN | PF_PENDING | PF_OP_HOLD)) !== 0 || this.ops.holdsPair(slot)) return;
    const t = this.t;
    const r = t.pairRecords;
    const volume = r[slot * W + VOL];
    const node = r[slot * W + NODE];
    unlinkPair(t, slot, volume, node);
    t.pairFlags[slot] = 0;
    if (slot >= t.caps.volumes) this.freeOverflow.push(slot);
    this.counters.pairs--;
    this.maybeFreeVolume(volume);
    this.maybeFreeNode(node);
  }

  /** A new desired entry's spec (undefined: none given, the entry reads its volume's). */
  setPairSpec(slot: number, spec: EntrySpec | undefined): void {
    this.records.setEntrySpec(this.pairVolume(slot), slot, spec);
  }

  /** The spec of a desired entry (a decoded copy), or undefined when none was given. */
  pairSpec(slot: number): EntrySpec | undefined {
    return this.records.entrySpec(this.pairVolume(slot), slot);
  }

  pairVolume(slot: number): number {
    return this.t.pairRecords[slot * W + VOL];
  }

  pairNode(slot: number): number {
    return this.t.pairRecords[slot * W + NODE];
  }

  forEachSlotOfNode(node: number, fn: (slot: number) => void): void {
    const r = this.t.pairRecords;
    for (let p = this.t.nodeHead[node]; p !== END; ) {
      const next = nextOfNode(r, p);
      fn(p);
      p = next;
    }
  }

  forEachSlotOfVolume(volume: number, fn: (slot: number) => void): void {
    const r = this.t.pairRecords;
    for (let p = this.t.vhead(volume); p !== END; ) {
      const next = nextOfVolume(r, p);
      fn(p);
      p = next;
    }
  }

  isMounted(volume: number, node: number): boolean {
    return !this.inUse.has(node) || this.inUse.includes(node, this.volumes, volume);
  }

  /** D3: recomputes PF_MOUNTED of every pair of the node from its volumesInUse. */
  refreshMountedOfNode(node: number): void {
    const flags = this.t.pairFlags;
    const r = this.t.pairRecords;
    for (let p = this.t.nodeHead[node]; p !== END; p = nextOfNode(r, p)) {
      flags[p] = this.isMounted(r[p * W + VOL], node) ? flags[p] | PF_MOUNTED : flags[p] & ~PF_MOUNTED;
    }
  }

  /** B2: whether pods want any volume on the node. O(pairs of the node); node deletion only. */
  nodeHasDesired(node: number): boolean {
    const flags = this.t.pairFlags;
    const r = this.t.pairRecords;
    for (let p = this.t.nodeHead[node]; p !== END; p = nextOfNode(r, p)) if (flags[p] & PF_DESIRED) return true;
    return false;
  }

  // ---- report set and node status (D6, K3) -------------------------------------------------
  setStatusNeeded(node: number, needed: boolean): void {
    const f = this.t.nodeFlags[node];
    if (needed === ((f & NF_STATUS_NEEDED) !== 0)) return;
    this.t.nodeFlags[node] = needed ? f | NF_STATUS_NEEDED : f & ~NF_STATUS_NEEDED;
    this.counters.statusUpdatesNeeded += needed ? 1 : -1;
  }

  addToReport(slot: number): boolean {
    const f = this.t.pairFlags[slot];
    if ((f & PF_REPORTED) !== 0 || (f & PF_ATTACHED) === 0) return false;
    this.t.pairFlags[slot] = f | PF_REPORTED;
    this.counters.reportedAttached++;
    const node = this.pairNode(slot);
    this.t.nodeFlags[node] |= NF_TRACKED;
    this.setStatusNeeded(node, true);
    return true;
  }

  removeFromReport(slot: number): boolean {
    const f = this.t.pairFlags[slot];
    if ((f & PF_REPORTED) === 0) return false;
    this.t.pairFlags[slot] = f & ~PF_REPORTED;
    this.counters.reportedAttached--;
    this.setStatusNeeded(this.pairNode(slot), true);
    return true;
  }

  // ---- attachment summary (D7) and conflicts (G3) ------------------------------------------
  /** Recomputes VF_ATTACHED_ANY after a pair of the volume left Attached. */
  refreshAttachedAny(volume: number): void {
    this.setAttachedAny(volume, this.anyPairOfVolume(volume, PF_ATTACHED));
  }

  /** Whether some pair of the volume has one of the flag `bits`. O(pairs of the volume). */
  anyPairOfVolume(volume: number, bits: number): boolean {
    const flags = this.t.pairFlags;
    const r = this.t.pairRecords;
    for (let p = this.t.vhead(volume); p !== END; p = nextOfVolume(r, p)) if (flags[p] & bits) return true;
    return false;
  }

  setAttachedAny(volume: number, any: boolean): void {
    const f = this.t.vflags(volume);
    if (any === ((f & VF_ATTACHED_ANY) !== 0)) return;
    this.t.setVflags(volume, any ? f | VF_ATTACHED_ANY : f & ~VF_ATTACHED_ANY);
    if (f & VF_FORBIDDEN) this.refreshVolumeConflicts(volume);
  }

  refreshVolumeConflicts(volume: number): void {
    const r = this.t.pairRecords;
    for (let p = this.t.vhead(volume); p !== END; p = nextOfVolume(r, p)) this.refreshConflict(p);
  }

  refreshConflict(slot: number): void {
    const f = this.t.pairFlags[slot];
    const vf = this.t.vflags(this.pairVolume(slot));
    const conflict = (f & PF_DESIRED) !== 0 && (f & PF_ATTACHED) === 0
      && (vf & VF_FORBIDDEN) !== 0 && (vf & VF_ATTACHED_ANY) !== 0;
    if (conflict === ((f & PF_CONFLICT) !== 0)) return;
    this.t.pairFlags[slot] = conflict ? f | PF_CONFLICT : f & ~PF_CONFLICT;
    if (conflict) this.conflictSlots.add(slot);
    else this.conflictSlots.delete(slot);
  }
}
