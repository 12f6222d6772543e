/**
 * The target owner of every bucket: rendezvous (highest random weight) hashing over the members
 * given, which the caller chooses as the Ready and stable ones (membership.ts `readyMembers`).
 *
 * Contract (a pure function of its arguments):
 * - every bucket has exactly one target, one of the members ('' for every bucket when there are
 *   none); the order and duplicates of `members` do not matter;
 * - removing a member moves only the buckets it was the target of, and adding one moves only
 *   buckets to it, about 1/N of them: a member's weight for a bucket does not depend on who else
 *   is a member, so the argmax changes only where the member joining or leaving is the argmax.
 *
 * Replicas that see the same member set compute the same targets. Targets are advice, not
 * ownership: replicas that momentarily disagree cannot both own a bucket, because ownership moves
 * only by compare-and-swap on the bucket's Lease (shard-coordinator.ts).
 */
import { hash53, mix53 } from './bucket-hash.js';

const TWO32 = 4294967296;

/** `targets[b]` = the member that should own bucket b. */
export function assignTargets(members: readonly string[], buckets: number): string[] {
  const ids = [...new Set(members)].sort();
  const seedHi = ids.map((m) => Math.floor(hash53(m) / TWO32));
  const seedLo = ids.map((m) => hash53(m) >>> 0);
  const targets = new Array<string>(buckets).fill('');
  if (ids.length === 0) return targets;
  for (let b = 0; b < buckets; b++) {
    // The bucket's own 64-bit key, mixed so that neighbouring buckets share no bit pattern.
    const key = mix53(b, 0x9e3779b9);
    const kHi = Math.floor(key / TWO32);
    const kLo = key >>> 0;
    let best = -1;
    let bestIdx = 0;
    for (let i = 0; i < ids.length; i++) {
      const w = mix53((seedHi[i] as number) ^ kHi, (seedLo[i] as number) ^ kLo);
      // Ties (2^-53) go to the first member in sorted order: still the same on every replica.
      if (w > best) {
        best = w;
        bestIdx = i;
      }
    }
    targets[b] = ids[bestIdx] as string;
  }
  return targets;
}
