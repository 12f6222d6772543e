/**
 * D3: a node's volumesInUse and the PF_MOUNTED flag of its pairs. The list is kept as last
 * given, to recognise a repeat without hashing a name, and as a Set of names, so that a pair
 * created later takes its flag from it (a volume in the list need not be interned yet).
 *
 * The kubelet reports the list sorted, and between two reports it usually gains or loses a
 * volume or two: when both lists are strictly ascending, the update walks them side by side
 * and touches only the pairs of the names that came or went (one lookup each), instead of
 * rebuilding the Set and re-deriving the flag of every pair of the node. Any other list is
 * applied in full.
 */
import { NF_IN_USE_OBSERVED, PF_MOUNTED } from '../kernel/abi.js';
import type { WorldCore } from './world-core.js';

export function applyVolumesInUse(c: WorldCore, node: number, names: readonly string[] | null): void {
  const old = c.inUseList[node];
  if (sameList(old, names)) return;
  const flags = c.t.nodeFlags;
  if (names === null) {
    c.inUse[node] = null;
    c.inUseList[node] = null;
    flags[node] &= ~NF_IN_USE_OBSERVED;
    c.refreshMountedOfNode(node);
    return;
  }
  const set = c.inUse[node];
  if (old === null || old === undefined || set === null || set === undefined || !mergeSorted(c, node, set, old, names)) {
    c.inUse[node] = new Set(names);
    c.refreshMountedOfNode(node);
  }
  c.inUseList[node] = names.slice();
  flags[node] |= NF_IN_USE_OBSERVED;
}

/**
 * Applies the difference from `a` to `b` to the set and the node's pairs. Returns false when
 * either list is not strictly ascending (what was applied is then redone in full by the caller).
 */
function mergeSorted(c: WorldCore, node: number, set: Set<string>, a: readonly string[], b: readonly string[]): boolean {
  for (let j = 1; j < b.length; j++) if (!(b[j - 1] < b[j])) return false;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i > 0 && i < a.length && !(a[i - 1] < a[i])) return false;
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (j === b.length || (i < a.length && a[i] < b[j])) {
      set.delete(a[i]);
      setMounted(c, a[i], node, false);
      i++;
    } else {
      set.add(b[j]);
      setMounted(c, b[j], node, true);
      j++;
    }
  }
  return true;
}

function setMounted(c: WorldCore, name: string, node: number, mounted: boolean): void {
  const volume = c.volumes.find(name);
  const slot = volume === undefined ? -1 : c.findPair(volume, node);
  if (slot < 0) return;
  const f = c.t.pairFlags;
  f[slot] = mounted ? f[slot] | PF_MOUNTED : f[slot] & ~PF_MOUNTED;
}

/** Same names in the same order (null for never observed). */
function sameList(a: readonly string[] | null | undefined, b: readonly string[] | null): boolean {
  if (a === null || a === undefined || b === null) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
