/**
 * D3: a node's volumesInUse and the PF_MOUNTED flag of its pairs. The list is kept as last
 * given, as bytes (WorldCore.inUse): a repeat is recognised by comparing it in place, and a
 * pair created later takes its flag from it by comparing its volume's name bytes (a volume in
 * the list need not be interned yet).
 *
 * The kubelet reports the list sorted, and between two reports it usually gains or loses a
 * volume or two: when both lists are strictly ascending, the update skips their common prefix,
 * walks the rest side by side and touches only the pairs of the names that came or went (one
 * lookup each), instead of re-deriving the flag of every pair of the node. Any other list is
 * applied in full.
 */
import { NF_IN_USE_OBSERVED, PF_MOUNTED } from '../kernel/abi.js';
import type { WorldCore } from './world-core.js';

export function applyVolumesInUse(c: WorldCore, node: number, names: readonly string[] | null): void {
  const flags = c.t.nodeFlags;
  if (names === null || !c.inUse.has(node)) {
    if (names === null) {
      if (!c.inUse.has(node)) return;
      c.inUse.clear(node);
      flags[node] &= ~NF_IN_USE_OBSERVED;
      c.refreshMountedOfNode(node);
      return;
    }
    rebuild(c, node, names);
    return;
  }
  // The common prefix is unchanged; a repeated list (most node updates) ends here.
  const p = c.inUse.commonPrefix(node, names);
  if (p === names.length && p === c.inUse.count(node)) return;
  if (c.inUseSorted[node] === 1 && mergeSorted(c, node, c.inUse.get(node) as string[], names, p)) {
    c.inUse.set(node, names);
  } else {
    rebuild(c, node, names);
  }
}

function rebuild(c: WorldCore, node: number, names: readonly string[]): void {
  c.inUse.set(node, names);
  if (node >= c.inUseSorted.length) {
    const sorted = new Uint8Array(Math.max(node + 1, c.inUseSorted.length * 2));
    sorted.set(c.inUseSorted);
    c.inUseSorted = sorted;
  }
  c.inUseSorted[node] = ascending(names, 1) ? 1 : 0;
  c.t.nodeFlags[node] |= NF_IN_USE_OBSERVED;
  c.refreshMountedOfNode(node);
}

/**
 * Applies the difference from `a` to `b`, which agree on their first `p` names, to the node's
 * pairs; `a` is strictly ascending. Returns false when `b` is not (what was applied is then
 * redone in full by the caller).
 */
function mergeSorted(c: WorldCore, node: number, a: readonly string[], b: readonly string[], p: number): boolean {
  if (!ascending(b, Math.max(1, p))) return false;
  let i = p;
  let j = p;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (j === b.length || (i < a.length && a[i] < b[j])) {
      setMounted(c, a[i], node, false);
      i++;
    } else {
      setMounted(c, b[j], node, true);
      j++;
    }
  }
  return true;
}

/** Whether names[from - 1] < names[from] < ... (strictly ascending from there on). */
function ascending(names: readonly string[], from: number): boolean {
  for (let j = from; j < names.length; j++) if (!(names[j - 1] < names[j])) return false;
  return true;
}

function setMounted(c: WorldCore, name: string, node: number, mounted: boolean): void {
  const volume = c.volumes.find(name);
  const slot = volume === undefined ? -1 : c.findPair(volume, node);
  if (slot < 0) return;
  const f = c.t.pairFlags;
  f[slot] = mounted ? f[slot] | PF_MOUNTED : f[slot] & ~PF_MOUNTED;
}
