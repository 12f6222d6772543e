/**
 * PodSets: the pods wanting each desired pair (C1), by interned pod UID. The count lives in the
 * packed pairPods table (u16, so at most 65535 pods per pair); the members live here, host-side:
 * the first pod of a pair in a typed array, any further ones in a map (rare).
 */
import { fleetError } from '../errors/index.js';
import type { WorldCore } from './world-core.js';

const MAX_PODS_PER_PAIR = 0xffff;

export class PodSets {
  constructor(private readonly core: WorldCore) {}

  /** Adds the pod to the pair's set; false if it was already there. */
  add(slot: number, uid: string): boolean {
    const c = this.core;
    const known = c.pods.find(uid);
    if (known !== undefined && this.has(slot, known)) return false;
    if (c.t.pairPods[slot] === MAX_PODS_PER_PAIR) {
      throw fleetError('FA_ERR_STATE_CAPACITY', `more than ${MAX_PODS_PER_PAIR} pods want one volume on one node`);
    }
    const pod = known ?? c.pods.intern(uid).id;
    c.podRefs[pod] = (c.podRefs[pod] ?? 0) + 1;
    if (c.podFirst[slot] < 0) c.podFirst[slot] = pod;
    else {
      const more = c.morePods.get(slot);
      if (more) more.push(pod);
      else c.morePods.set(slot, [pod]);
    }
    c.t.pairPods[slot]++;
    return true;
  }

  /** Removes the pod from the pair's set; false if it was not there. */
  remove(slot: number, uid: string): boolean {
    const c = this.core;
    const pod = c.pods.find(uid);
    if (pod === undefined) return false;
    const more = c.morePods.get(slot);
    if (c.podFirst[slot] === pod) {
      c.podFirst[slot] = more && more.length > 0 ? (more.shift() as number) : -1;
    } else {
      const i = more ? more.indexOf(pod) : -1;
      if (i < 0) return false;
      (more as number[]).splice(i, 1);
    }
    if (more && more.length === 0) c.morePods.delete(slot);
    c.t.pairPods[slot]--;
    if (--c.podRefs[pod] === 0) c.pods.release(pod);
    return true;
  }

  list(slot: number): string[] {
    const c = this.core;
    const out: string[] = [];
    if (c.podFirst[slot] >= 0) out.push(c.pods.name(c.podFirst[slot]) as string);
    for (const pod of c.morePods.get(slot) ?? []) out.push(c.pods.name(pod) as string);
    return out;
  }

  private has(slot: number, pod: number): boolean {
    return this.core.podFirst[slot] === pod || (this.core.morePods.get(slot)?.includes(pod) ?? false);
  }
}
