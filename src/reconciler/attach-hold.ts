/**
 * Which actual entries elsewhere hold off the attach of a multi-attach-forbidden volume: the
 * reconciler's check before it starts an attach, and the inspection API's explanation of it,
 * from one predicate.
 *
 * Upstream (G3, D7) holds the attach only for a confirmed attachment on another node; an
 * Uncertain one (a VolumeAttachment found at start-up, A3; a failed attach, J2; a failed
 * detach, J3) does not hold it, so a ReadWriteOnce volume can get VolumeAttachments on two
 * nodes (kubernetes/kubernetes#124334 discussed it, unmerged). Here, safety first, an Uncertain
 * entry elsewhere holds it too, except where waiting could never end: an Uncertain entry that
 * pods want is never detached (F1), so when the attaching node's own entry is Uncertain as
 * well, each would wait for the other for good. Then the two are retried in turn under the
 * volume-wide key (I1), as upstream's are, and the first confirmed one holds the other (G3) —
 * mounted ones first: an entry the other node reports in use (D3) keeps holding one that is
 * not, so a node that may be using the volume is never the one left out.
 */
import type { NodeId, PairState, VolumeId, WorldState } from '../cache/world-state.js';

/** The attaching node's own entry, as the hold reads it. */
export interface OwnEntry {
  readonly uncertain: boolean;
  readonly mounted: boolean;
}

/** Whether `other` (an entry of the volume on another node) holds off the attach. */
export function holdsAttach(other: PairState, own: OwnEntry): boolean {
  if (other.attachState === 'attached') return true;
  if (other.attachState !== 'uncertain') return false;
  // Not wanted there: the detach pass takes it away as soon as the rules allow (F6/F7).
  if (other.desiredPods === 0 || !own.uncertain) return true;
  return other.mounted && !own.mounted;
}

/** The attaching node's own entry of `volume`. */
export function ownEntry(state: WorldState, volume: VolumeId, node: NodeId): OwnEntry {
  const p = state.pair(volume, node);
  return { uncertain: p?.attachState === 'uncertain', mounted: p?.mounted ?? false };
}

/**
 * True when an entry on another node holds off attaching `volume` to `node`. O(pairs of the
 * volume); the own entry is read only when another one is Uncertain (a ReadWriteOnce volume's
 * attach usually meets no other pair at all).
 */
export function attachHeld(state: WorldState, volume: VolumeId, node: NodeId): boolean {
  let own: OwnEntry | undefined;
  let held = false;
  state.forEachPairOfVolume(volume, (p) => {
    if (held || p.node === node || p.attachState === 'detached') return;
    held = holdsAttach(p, (own ??= ownEntry(state, volume, node)));
  });
  return held;
}

/** The nodes whose Uncertain entries hold off attaching `volume` to `node` (confirmed ones aside). */
export function uncertainHolders(state: WorldState, volume: VolumeId, node: NodeId): NodeId[] {
  const own = ownEntry(state, volume, node);
  const out: NodeId[] = [];
  state.forEachPairOfVolume(volume, (p) => {
    if (p.node !== node && p.attachState === 'uncertain' && holdsAttach(p, own)) out.push(p.node);
  });
  return out;
}
