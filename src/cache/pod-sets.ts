/**
 * PodSets: the pods wanting each desired pair (C1), by pod UID. The count lives in the packed
 * pair record (PR_PODS, u16, so at most 65535 pods per pair); the members live here, host-side: the
 * first pod of a pair in an array indexed by pair slot, any further ones in a map (rare).
 * UIDs are compared within the pair's own set, so no global pod index is needed.
 */
import { fleetError } from '../errors/index.js';
import type { WorldCore } from './world-core.js';

const MAX_PODS_PER_PAIR = 0xffff;

export class PodSets {
  constructor(private readonly core: WorldCore) {}

  /** Adds the pod to the pair's set; false if it was already there. */
  add(slot: number, uid: string): boolean {
    const c = this.core;
    const first = c.podFirst[slot];
    if (first === undefined) {
      c.podFirst[slot] = uid;
    } else {
      if (first === uid) return false;
      const more = c.morePods.get(slot);
      if (more === undefined) c.morePods.set(slot, [uid]);
      else if (more.includes(uid)) return false;
      else {
        if (c.t.pods(slot) === MAX_PODS_PER_PAIR) {
          throw fleetError('FA_ERR_STATE_CAPACITY', `more than ${MAX_PODS_PER_PAIR} pods want one volume on one node`);
        }
        more.push(uid);
      }
    }
    c.t.setPods(slot, c.t.pods(slot) + 1);
    return true;
  }

  /** Removes the pod from the pair's set; false if it was not there. */
  remove(slot: number, uid: string): boolean {
    const c = this.core;
    const count = c.t.pods(slot);
    if (count === 0) return false;
    if (count === 1) {
      // The common case: one pod, no map lookup.
      if (c.podFirst[slot] !== uid) return false;
      c.podFirst[slot] = undefined;
    } else {
      const more = c.morePods.get(slot) as string[];
      if (c.podFirst[slot] === uid) c.podFirst[slot] = more.shift();
      else {
        const i = more.indexOf(uid);
        if (i < 0) return false;
        more.splice(i, 1);
      }
      if (more.length === 0) c.morePods.delete(slot);
    }
    c.t.setPods(slot, count - 1);
    return true;
  }

  list(slot: number): string[] {
    const c = this.core;
    const first = c.podFirst[slot];
    if (first === undefined) return [];
    const more = c.morePods.get(slot);
    return more === undefined ? [first] : [first, ...more];
  }
}
