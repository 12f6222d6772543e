/**
 * The transitions of one pair's desired and actual state, with everything they drag along:
 * the counters (and the per-plugin totals), the report set (D6), the multi-attach error flag (H4), the conflict set (G3)
 * and the volume's confirmed-attachment bit (D7). Each takes
 * a live pair slot; freeing the slot when nothing holds it any more is part of the transition.
 */
import {
  PF_ATTACHED, PF_DESIRED, PF_MAE_REPORTED, PF_TIMER_SET, PF_UNCERTAIN,
} from '../kernel/abi.js';
import type { PodSets } from './pod-sets.js';
import type { WorldCore } from './world-core.js';
import type { EntrySpec } from './world-state.js';

/** C1: adds a pod; the first one creates the desired entry (H4 flag cleared) with its spec. */
export function addPod(c: WorldCore, pods: PodSets, slot: number, uid: string, spec?: EntrySpec): boolean {
  if (!pods.add(slot, uid)) return false;
  if ((c.t.pairFlags[slot] & PF_DESIRED) === 0) {
    c.t.pairFlags[slot] = (c.t.pairFlags[slot] | PF_DESIRED) & ~PF_MAE_REPORTED;
    c.setPairSpec(slot, spec);
    c.counters.desiredPairs++;
    if (c.t.pairFlags[slot] & PF_ATTACHED) c.counters.desiredAttached++;
    c.pluginTotals.add(c.pairVolume(slot), 1, 0);
    c.refreshConflict(slot);
  }
  return true;
}

/** C1/H4: removes a pod; the last one removes the entry, its multi-attach error flag and its spec. */
export function removePod(c: WorldCore, pods: PodSets, slot: number, uid: string): boolean {
  if (!pods.remove(slot, uid)) return false;
  if (!c.podFirst.has(slot)) {
    c.t.pairFlags[slot] &= ~(PF_DESIRED | PF_MAE_REPORTED);
    c.records.pairSpecs.delete(slot);
    c.counters.desiredPairs--;
    if (c.t.pairFlags[slot] & PF_ATTACHED) c.counters.desiredAttached--;
    c.pluginTotals.add(c.pairVolume(slot), -1, 0);
    c.refreshConflict(slot);
    const node = c.pairNode(slot);
    c.maybeFreePair(slot);
    c.desiredLeft(node);
  }
  return true;
}

/** D2: Attached, and reported (D6). */
export function markAttached(c: WorldCore, slot: number): void {
  const f = c.t.pairFlags[slot];
  if (f & PF_UNCERTAIN) c.counters.uncertain--;
  if ((f & PF_ATTACHED) === 0) {
    c.counters.attached++;
    if (f & PF_DESIRED) c.counters.desiredAttached++;
  }
  if ((f & (PF_ATTACHED | PF_UNCERTAIN)) === 0) c.pluginTotals.add(c.pairVolume(slot), 0, 1);
  c.t.pairFlags[slot] = (f & ~PF_UNCERTAIN) | PF_ATTACHED;
  c.addToReport(slot);
  c.refreshConflict(slot);
  c.setAttachedAny(c.pairVolume(slot), true);
}

/** D2: Uncertain, and never reported (D6, Q2). The detach timer stays. */
export function markUncertain(c: WorldCore, slot: number): void {
  const f = c.t.pairFlags[slot];
  c.removeFromReport(slot);
  if ((f & PF_UNCERTAIN) === 0) c.counters.uncertain++;
  if ((f & (PF_ATTACHED | PF_UNCERTAIN)) === 0) c.pluginTotals.add(c.pairVolume(slot), 0, 1);
  c.t.pairFlags[slot] = (c.t.pairFlags[slot] & ~PF_ATTACHED) | PF_UNCERTAIN;
  if (f & PF_ATTACHED) leftAttached(c, slot);
}

/** D2: the actual entry goes, with its timer and report membership. */
export function markDetached(c: WorldCore, slot: number): void {
  const f = c.t.pairFlags[slot];
  if ((f & (PF_ATTACHED | PF_UNCERTAIN)) === 0) return;
  c.removeFromReport(slot);
  if (f & PF_UNCERTAIN) c.counters.uncertain--;
  c.pluginTotals.add(c.pairVolume(slot), 0, -1);
  c.t.pairFlags[slot] &= ~(PF_ATTACHED | PF_UNCERTAIN | PF_TIMER_SET);
  if (f & PF_ATTACHED) leftAttached(c, slot);
  c.maybeFreePair(slot);
}

function leftAttached(c: WorldCore, slot: number): void {
  c.counters.attached--;
  if (c.t.pairFlags[slot] & PF_DESIRED) c.counters.desiredAttached--;
  // The volume's summary first, so the pair never enters the conflict set only to leave it.
  c.refreshAttachedAny(c.pairVolume(slot));
  c.refreshConflict(slot);
}
