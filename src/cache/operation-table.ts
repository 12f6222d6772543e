/**
 * OperationTable: the pending operations and exponential backoff of the operation executor
 * (upstream `nestedpendingoperations.go` + `exponential_backoff.go`, rules I1-I4), kept as
 * host-side maps plus the bits the plan kernel reads (PF_PENDING, PF_BACKOFF_*, VF_WIDE_*,
 * VF_PAIR_PENDING_ANY).
 *
 * Keys (I1): a volume-wide key for multi-attach-forbidden volumes, (volume, node) otherwise,
 * decided when the operation starts. Backoff is per exact key and operation name (I3). The
 * backoff bits say "inside the window as of the last expire(now)"; the planner expires them
 * at the start of every plan, so the kernel compares no clocks.
 */
import {
  PF_BACKOFF_ATTACH, PF_BACKOFF_DETACH, PF_BACKOFF_ENTRY, PF_OP_HOLD, PF_PENDING, VF_FORBIDDEN, VF_PAIR_PENDING_ANY,
  VF_WIDE_BACKOFF_ATTACH, VF_WIDE_BACKOFF_DETACH, VF_WIDE_BACKOFF_ENTRY, VF_WIDE_PENDING,
} from '../kernel/abi.js';
import { BackoffHeap, INITIAL_BACKOFF_MS, MAX_BACKOFF_MS } from './backoff-heap.js';
import { PendingTable } from './pending-table.js';
import type { WorldCore } from './world-core.js';
import type { BackoffEntry, OperationKind, PendingOperation, StartResult } from './world-state.js';

interface Backoff {
  volume: number;
  node: number;
  op: OperationKind;
  wide: boolean;
  slot: number;
  lastErrorAt: number;
  durationMs: number;
  active: boolean;
}

// Key numbering: a pair slot s is key 2s, a volume-wide key of volume v is 2v+1;
// a backoff key appends the operation bit: key*2 + (detach ? 1 : 0).
const pairKey = (slot: number) => slot * 2;
const wideKey = (volume: number) => volume * 2 + 1;
const opBit = (op: OperationKind) => (op === 'detach' ? 1 : 0);

export class OperationTable {
  private readonly pending = new PendingTable();
  private readonly backoff = new Map<number, Backoff>();
  private readonly heap = new BackoffHeap();

  constructor(private readonly core: WorldCore) {}

  holdsPair(slot: number): boolean {
    return (this.core.t.pairFlags[slot] & PF_BACKOFF_ENTRY) !== 0;
  }

  holdsVolume(volume: number): boolean {
    return (this.core.t.vflags(volume) & (VF_WIDE_PENDING | VF_WIDE_BACKOFF_ENTRY)) !== 0;
  }

  tryStart(volume: number, node: number, op: OperationKind, now: number): StartResult {
    const c = this.core;
    const vf = c.t.vflags(volume);
    if (vf & VF_FORBIDDEN) {
      // I2: a volume-wide key matches every key of the volume.
      if (vf & (VF_WIDE_PENDING | VF_PAIR_PENDING_ANY)) return 'pending';
      if (vf & VF_WIDE_BACKOFF_ENTRY && this.inWindow(wideKey(volume) * 2 + opBit(op), now)) return 'backoff';
      // The key is the volume's alone, so nothing else keeps its node: hold the pair, or a
      // deleted node's id could be freed and reused before the outcome is recorded (J1-J3).
      // The pair first: creating it may grow the tables (new views) or throw, before any bit is set.
      const held = c.getOrCreatePair(volume, node);
      c.t.pairFlags[held] |= PF_OP_HOLD;
      c.t.setVflags(volume, c.t.vflags(volume) | VF_WIDE_PENDING);
      this.pending.start(wideKey(volume), volume, node, op, true, now);
    } else {
      const found = c.findPair(volume, node);
      if (vf & VF_WIDE_PENDING || (found >= 0 && c.t.pairFlags[found] & PF_PENDING)) return 'pending';
      if (found >= 0 && c.t.pairFlags[found] & PF_BACKOFF_ENTRY && this.inWindow(pairKey(found) * 2 + opBit(op), now)) return 'backoff';
      const slot = found >= 0 ? found : c.getOrCreatePair(volume, node);
      c.t.pairFlags[slot] |= PF_PENDING;
      c.t.setVflags(volume, c.t.vflags(volume) | VF_PAIR_PENDING_ANY);
      this.pending.start(pairKey(slot), volume, node, op, false, now);
    }
    c.counters.pendingOperations++;
    return 'started';
  }

  complete(volume: number, node: number, op: OperationKind, ok: boolean | 'released', now: number): boolean {
    const c = this.core;
    // No pair of the volume is pending while VF_PAIR_PENDING_ANY is clear (the bit may be
    // stale only when set), so the pair lookup is skipped for a volume-wide operation.
    const slot = node < 0 || (c.t.vflags(volume) & VF_PAIR_PENDING_ANY) === 0 ? -1 : c.findPair(volume, node);
    let key = slot >= 0 && (c.t.pairFlags[slot] & PF_PENDING) !== 0 ? pairKey(slot) : -1;
    // The node a volume-wide operation started on, whose pair it holds (`node` may differ).
    let heldNode = -1;
    if (key < 0 || !this.pending.end(key, op)) {
      // The volume-wide key has one lane per volume, so (volume, op) identifies it.
      key = wideKey(volume);
      heldNode = this.pending.get(key)?.node ?? -1;
      if (!this.pending.end(key, op)) return false;
    }
    const wide = key === wideKey(volume);
    c.counters.pendingOperations--;
    if (wide) {
      c.t.setVflags(volume, c.t.vflags(volume) & ~VF_WIDE_PENDING);
    } else {
      c.t.pairFlags[slot] &= ~PF_PENDING;
      // The bit matters only while the volume is forbidden (G1, I2); an allowed volume keeps a
      // possibly stale bit until setMultiAttachForbidden refreshes it, sparing a list walk.
      if (c.t.vflags(volume) & VF_FORBIDDEN) this.refreshPairPendingAny(volume);
    }
    if (ok === 'released') {
      // Never sent: the key's backoff stays as it was (upstream never started the operation).
    } else if (ok) {
      // I3: success deletes the key, which resets its backoff for both operation names.
      if (this.hasEntries(wide, volume, slot)) {
        this.drop(key * 2);
        this.drop(key * 2 + 1);
        this.setEntries(wide, volume, slot, false);
      }
    } else {
      this.fail(key * 2 + opBit(op), { volume, node, op, wide, slot }, now);
    }
    if (wide) {
      const held = heldNode < 0 ? -1 : c.findPair(volume, heldNode);
      if (held >= 0) {
        c.t.pairFlags[held] &= ~PF_OP_HOLD;
        c.maybeFreePair(held); // frees the volume too when that was its last pair
      } else {
        c.maybeFreeVolume(volume);
      }
    } else {
      c.maybeFreePair(slot);
    }
    return true;
  }

  /** Recomputes VF_PAIR_PENDING_ANY: O(pairs of the volume). */
  refreshPairPendingAny(volume: number): void {
    if (!this.core.anyPairOfVolume(volume, PF_PENDING)) this.core.t.setVflags(volume, this.core.t.vflags(volume) & ~VF_PAIR_PENDING_ANY);
  }

  /** I4: false while the exact key is pending or (key, op) is inside its backoff window. The
   * backoff map is consulted only when the key's entry bit says it holds an entry. */
  isSafeToRetry(volume: number, node: number, op: OperationKind, now: number): boolean {
    const c = this.core;
    const vf = c.t.vflags(volume);
    if (vf & VF_FORBIDDEN) {
      return (vf & VF_WIDE_PENDING) === 0 && ((vf & VF_WIDE_BACKOFF_ENTRY) === 0 || !this.inWindow(wideKey(volume) * 2 + opBit(op), now));
    }
    const slot = node < 0 ? -1 : c.findPair(volume, node);
    if (slot < 0) return true;
    const f = c.t.pairFlags[slot];
    return (f & PF_PENDING) === 0 && ((f & PF_BACKOFF_ENTRY) === 0 || !this.inWindow(pairKey(slot) * 2 + opBit(op), now));
  }

  /** G1 matching. */
  isPending(volume: number, node: number): boolean {
    const c = this.core;
    const vf = c.t.vflags(volume);
    if (vf & VF_FORBIDDEN) return (vf & (VF_WIDE_PENDING | VF_PAIR_PENDING_ANY)) !== 0;
    if (vf & VF_WIDE_PENDING) return true;
    const slot = node < 0 ? -1 : c.findPair(volume, node);
    return slot >= 0 && (c.t.pairFlags[slot] & PF_PENDING) !== 0;
  }

  pendingList(): PendingOperation[] {
    return this.pending.list();
  }

  /**
   * The pending operation G1 matches for (volume, node): the volume-wide key, else the pair's
   * own key. O(1); a forbidden volume with pair-keyed operations (started while it was allowed)
   * falls back to a scan of the pending list.
   */
  pendingFor(volume: number, node: number): PendingOperation | undefined {
    const c = this.core;
    const vf = c.t.vflags(volume);
    if (vf & VF_WIDE_PENDING) return this.pending.get(wideKey(volume));
    if (vf & VF_FORBIDDEN) return vf & VF_PAIR_PENDING_ANY ? this.pending.list().find((p) => p.volume === volume) : undefined;
    const slot = node < 0 ? -1 : c.findPair(volume, node);
    return slot >= 0 && c.t.pairFlags[slot] & PF_PENDING ? this.pending.get(pairKey(slot)) : undefined;
  }

  /** I3 windows open at `now` on the keys (volume, node) uses (pair key, volume-wide key; both operations). O(1). */
  backoffFor(volume: number, node: number, now: number): BackoffEntry[] {
    const out: BackoffEntry[] = [];
    const slot = node < 0 ? -1 : this.core.findPair(volume, node);
    // The entry bits say whether any entry exists: most pairs have none, and need no lookup.
    if (slot >= 0 && this.hasEntries(false, volume, slot)) this.openWindows(pairKey(slot), now, out);
    if (this.hasEntries(true, volume, slot)) this.openWindows(wideKey(volume), now, out);
    return out;
  }

  private openWindows(key: number, now: number, out: BackoffEntry[]): void {
    for (let bit = 0; bit < 2; bit++) {
      const b = this.backoff.get(key * 2 + bit);
      if (b === undefined || now - b.lastErrorAt > b.durationMs) continue;
      out.push({
        volume: b.volume, node: b.node, op: b.op, volumeWide: b.wide, lastErrorAt: b.lastErrorAt,
        durationMs: b.durationMs, retryAt: b.lastErrorAt + b.durationMs + 1,
      });
    }
  }

  backoffList(now: number): BackoffEntry[] {
    const out: BackoffEntry[] = [];
    for (const b of this.backoff.values()) {
      if (now - b.lastErrorAt > b.durationMs) continue;
      out.push({
        volume: b.volume, node: b.node, op: b.op, volumeWide: b.wide, lastErrorAt: b.lastErrorAt,
        durationMs: b.durationMs, retryAt: b.lastErrorAt + b.durationMs + 1,
      });
    }
    return out;
  }

  /** Clears the backoff bits of every window that has ended by `now`. */
  expire(now: number): void {
    for (let key = this.heap.popDue(now); key >= 0; key = this.heap.popDue(now)) {
      const b = this.backoff.get(key);
      if (b && b.active && now - b.lastErrorAt > b.durationMs) this.setActive(b, false);
    }
  }

  private hasEntries(wide: boolean, volume: number, slot: number): boolean {
    return wide ? (this.core.t.vflags(volume) & VF_WIDE_BACKOFF_ENTRY) !== 0 : (this.core.t.pairFlags[slot] & PF_BACKOFF_ENTRY) !== 0;
  }

  private setEntries(wide: boolean, volume: number, slot: number, on: boolean): void {
    const t = this.core.t;
    if (wide) t.setVflags(volume, on ? t.vflags(volume) | VF_WIDE_BACKOFF_ENTRY : t.vflags(volume) & ~VF_WIDE_BACKOFF_ENTRY);
    else t.pairFlags[slot] = on ? t.pairFlags[slot] | PF_BACKOFF_ENTRY : t.pairFlags[slot] & ~PF_BACKOFF_ENTRY;
  }

  private inWindow(key: number, now: number): boolean {
    const b = this.backoff.get(key);
    return b !== undefined && now - b.lastErrorAt <= b.durationMs;
  }

  private fail(key: number, who: Pick<Backoff, 'volume' | 'node' | 'op' | 'wide' | 'slot'>, now: number): void {
    let b = this.backoff.get(key);
    if (b === undefined) {
      b = { ...who, lastErrorAt: now, durationMs: 0, active: false };
      this.backoff.set(key, b);
      this.setEntries(who.wide, who.volume, who.slot, true);
    }
    b.node = who.node;
    b.durationMs = b.durationMs === 0 ? INITIAL_BACKOFF_MS : Math.min(2 * b.durationMs, MAX_BACKOFF_MS);
    b.lastErrorAt = now;
    this.setActive(b, true);
    this.heap.push(key, now + b.durationMs);
  }

  private drop(key: number): void {
    const b = this.backoff.get(key);
    if (b === undefined) return;
    this.setActive(b, false);
    this.backoff.delete(key);
  }

  private setActive(b: Backoff, active: boolean): void {
    if (b.active === active) return;
    b.active = active;
    this.core.counters.backoffOperations += active ? 1 : -1;
    const t = this.core.t;
    if (b.wide) {
      const bit = b.op === 'detach' ? VF_WIDE_BACKOFF_DETACH : VF_WIDE_BACKOFF_ATTACH;
      t.setVflags(b.volume, active ? t.vflags(b.volume) | bit : t.vflags(b.volume) & ~bit);
    } else {
      const bit = b.op === 'detach' ? PF_BACKOFF_DETACH : PF_BACKOFF_ATTACH;
      t.pairFlags[b.slot] = active ? t.pairFlags[b.slot] | bit : t.pairFlags[b.slot] & ~bit;
    }
  }
}
