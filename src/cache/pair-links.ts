/**
 * Pair lists: every live pair slot is on its volume's list and on its node's list. The
 * volume's list is doubly linked, so a pair of a volume shared by thousands of nodes is
 * unlinked in O(1) instead of a walk over thousands of records; a node's list is singly
 * linked, since a node holds few pairs (its attach limit) and a prev link would cost 4 bytes
 * per pair and a write to the old first pair's record on every link. Links are slot numbers in
 * the pair record (PR_NEXT_OF_VOLUME, PR_PREV_OF_VOLUME, PR_NEXT_OF_NODE); END (VW_HEAD_NIL)
 * ends a list. The list heads are the volume word (SharedTables.vhead) and SharedTables.nodeHead.
 *
 * The accessors take the record array and are plain functions so that the hot walks inline
 * them. A free slot reuses the next-of-volume word as the free-list link (see WorldCore).
 */
import { PR_NEXT_OF_NODE, PR_NEXT_OF_VOLUME, PR_PREV_OF_VOLUME, VW_HEAD_NIL } from '../kernel/abi.js';
import { PAIR_RECORD_WORDS, type SharedTables } from './shared-tables.js';

/** No slot: the end of a list, an empty list head. */
export const END = VW_HEAD_NIL;

const W = PAIR_RECORD_WORDS;
const NEXT_V = PR_NEXT_OF_VOLUME / 4;
const PREV_V = PR_PREV_OF_VOLUME / 4;
const NEXT_N = PR_NEXT_OF_NODE / 4;
/** Word offset of the free-list link inside a free slot's record. */
export const FREE_LINK = NEXT_V;

export function nextOfVolume(r: Uint32Array, p: number): number {
  return r[p * W + NEXT_V];
}

export function nextOfNode(r: Uint32Array, p: number): number {
  return r[p * W + NEXT_N];
}

function prevOfVolume(r: Uint32Array, p: number): number {
  return r[p * W + PREV_V];
}

/** Puts `slot` first on the lists of `volume` and `node`. */
export function linkPair(t: SharedTables, slot: number, volume: number, node: number): void {
  const r = t.pairRecords;
  const vfirst = t.vhead(volume);
  r[slot * W + NEXT_V] = vfirst;
  r[slot * W + PREV_V] = END;
  r[slot * W + NEXT_N] = t.nodeHead[node];
  if (vfirst !== END) r[vfirst * W + PREV_V] = slot;
  t.setVhead(volume, slot);
  t.nodeHead[node] = slot;
}

/** Takes `slot` off the lists of `volume` (O(1)) and `node` (O(pairs of the node)). */
export function unlinkPair(t: SharedTables, slot: number, volume: number, node: number): void {
  const r = t.pairRecords;
  const vnext = r[slot * W + NEXT_V];
  const vprev = r[slot * W + PREV_V];
  if (vprev === END) t.setVhead(volume, vnext);
  else r[vprev * W + NEXT_V] = vnext;
  if (vnext !== END) r[vnext * W + PREV_V] = vprev;
  const nnext = r[slot * W + NEXT_N];
  let p = t.nodeHead[node];
  if (p === slot) {
    t.nodeHead[node] = nnext;
    return;
  }
  for (; p !== END; p = r[p * W + NEXT_N]) {
    if (r[p * W + NEXT_N] === slot) {
      r[p * W + NEXT_N] = nnext;
      return;
    }
  }
}

/**
 * Consistency of both lists of every live pair (for tests): each list is acyclic, a volume
 * list's prev links mirror its next links, and every slot is on the lists of its own volume and node
 * exactly once. Returns the problems found, empty when none.
 */
export function checkPairLinks(t: SharedTables, liveSlots: readonly number[], volumeOf: (slot: number) => number, nodeOf: (slot: number) => number): string[] {
  const r = t.pairRecords;
  const problems: string[] = [];
  const seenV = new Set<number>();
  const seenN = new Set<number>();
  const walk = (head: number, next: (p: number) => number, prev: ((p: number) => number) | null, owner: (p: number) => number, id: number, seen: Set<number>, what: string) => {
    let before = END;
    for (let p = head, steps = 0; p !== END; before = p, p = next(p), steps++) {
      if (steps > liveSlots.length) return problems.push(`${what} ${id}: cycle`);
      if (prev && prev(p) !== before) problems.push(`${what} ${id}: slot ${p} prev ${prev(p)}, expected ${before}`);
      if (owner(p) !== id) problems.push(`${what} ${id}: slot ${p} belongs to ${owner(p)}`);
      if (seen.has(p)) problems.push(`${what} ${id}: slot ${p} listed twice`);
      seen.add(p);
    }
    return 0;
  };
  const volumes = new Set(liveSlots.map(volumeOf));
  const nodes = new Set(liveSlots.map(nodeOf));
  for (const v of volumes) walk(t.vhead(v), (p) => nextOfVolume(r, p), (p) => prevOfVolume(r, p), volumeOf, v, seenV, 'volume');
  for (const n of nodes) walk(t.nodeHead[n], (p) => nextOfNode(r, p), null, nodeOf, n, seenN, 'node');
  for (const s of liveSlots) {
    if (!seenV.has(s)) problems.push(`slot ${s} missing from volume ${volumeOf(s)}`);
    if (!seenN.has(s)) problems.push(`slot ${s} missing from node ${nodeOf(s)}`);
  }
  return problems;
}
