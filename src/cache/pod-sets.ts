/**
 * PodSets: the pods wanting each desired pair (C1), by pod UID, host-side: the first pod of a
 * pair in a StringColumn indexed by pair slot (16 bytes, no string), any further ones in a map
 * (rare), flagged by
 * PF_MORE_PODS so that the one-pod case never looks in the map. A pair is desired exactly
 * when it has a first pod. UIDs are compared within the pair's own set, so no global pod index
 * is needed; no count is stored (the set sizes are the counts).
 */
import { PF_MORE_PODS } from '../kernel/abi.js';
import type { WorldCore } from './world-core.js';

export class PodSets {
  constructor(private readonly core: WorldCore) {}

  /** Adds the pod to the pair's set; false if it was already there. */
  add(slot: number, uid: string): boolean {
    const c = this.core;
    if (!c.podFirst.has(slot)) {
      c.podFirst.set(slot, uid);
      return true;
    }
    if (c.podFirst.equals(slot, uid)) return false;
    const flags = c.t.pairFlags;
    if ((flags[slot] & PF_MORE_PODS) === 0) {
      c.morePods.set(slot, [uid]);
      flags[slot] |= PF_MORE_PODS;
      return true;
    }
    const more = c.morePods.get(slot) as string[];
    if (more.includes(uid)) return false;
    more.push(uid);
    return true;
  }

  /** Removes the pod from the pair's set; false if it was not there. */
  remove(slot: number, uid: string): boolean {
    const c = this.core;
    if (!c.podFirst.has(slot)) return false;
    const flags = c.t.pairFlags;
    if ((flags[slot] & PF_MORE_PODS) === 0) {
      // The common case: one pod, no map lookup.
      if (!c.podFirst.equals(slot, uid)) return false;
      c.podFirst.clear(slot);
      return true;
    }
    const more = c.morePods.get(slot) as string[];
    if (c.podFirst.equals(slot, uid)) c.podFirst.set(slot, more.shift() as string);
    else {
      const i = more.indexOf(uid);
      if (i < 0) return false;
      more.splice(i, 1);
    }
    if (more.length === 0) {
      c.morePods.delete(slot);
      flags[slot] &= ~PF_MORE_PODS;
    }
    return true;
  }

  /** Whether the pod is in the pair's set. */
  has(slot: number, uid: string): boolean {
    const c = this.core;
    if (!c.podFirst.has(slot)) return false;
    if (c.podFirst.equals(slot, uid)) return true;
    return (c.t.pairFlags[slot] & PF_MORE_PODS) !== 0 && (c.morePods.get(slot) as string[]).includes(uid);
  }

  list(slot: number): string[] {
    const c = this.core;
    const first = c.podFirst.get(slot);
    if (first === undefined) return [];
    return (c.t.pairFlags[slot] & PF_MORE_PODS) === 0 ? [first] : [first, ...(c.morePods.get(slot) as string[])];
  }
}

/** Number of pods wanting the pair. */
export function podCount(c: WorldCore, slot: number): number {
  if (!c.podFirst.has(slot)) return 0;
  return (c.t.pairFlags[slot] & PF_MORE_PODS) === 0 ? 1 : 1 + (c.morePods.get(slot) as string[]).length;
}
