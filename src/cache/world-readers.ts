/**
 * Read-only views of the world state for the HTTP API, metrics and tests: plain objects built
 * on demand from the packed tables (never cached, so they are never stale).
 */
import {
  NF_HEALTHY, NF_MANAGED, NF_OUT_OF_SERVICE, NF_STATUS_NEEDED, PF_ATTACHED, PF_MAE_REPORTED,
  PF_MOUNTED, PF_REPORTED, PF_TIMER_SET, PF_UNCERTAIN, PR_TIMER, VF_FORBIDDEN,
} from '../kernel/abi.js';
import { podCount } from './pod-sets.js';
import { PAIR_RECORD_WORDS } from './shared-tables.js';
import type { WorldCore } from './world-core.js';
import type { AttachState, NodeState, PairState, VolumeState } from './world-state.js';

const TIMER = PR_TIMER / 4;

export function attachStateOf(flags: number): AttachState {
  if (flags & PF_ATTACHED) return 'attached';
  if (flags & PF_UNCERTAIN) return 'uncertain';
  return 'detached';
}

export function pairState(core: WorldCore, slot: number, timeBase: number): PairState {
  const f = core.t.pairFlags[slot];
  return {
    volume: core.pairVolume(slot),
    node: core.pairNode(slot),
    desiredPods: podCount(core, slot),
    multiAttachErrorReported: (f & PF_MAE_REPORTED) !== 0,
    attachState: attachStateOf(f),
    mounted: (f & PF_MOUNTED) !== 0,
    reportedAttached: (f & PF_REPORTED) !== 0,
    detachRequestedAt: f & PF_TIMER_SET ? timeBase + core.t.pairRecords[slot * PAIR_RECORD_WORDS + TIMER] : null,
  };
}

export function nodeState(core: WorldCore, node: number): NodeState | undefined {
  const name = core.nodes.name(node);
  return name === undefined ? undefined : new NodeView(core, node, name, core.t.nodeFlags[node]);
}

/**
 * A node snapshot whose flags are read at once and whose two costly fields (the pair count,
 * O(pairs of the node), and the volumesInUse copy) are computed when read: the populator asks
 * node(id).managed on every pod event.
 */
class NodeView implements NodeState {
  readonly managed: boolean;
  readonly healthy: boolean;
  readonly outOfService: boolean;
  readonly statusUpdateNeeded: boolean;

  constructor(private readonly core: WorldCore, readonly id: number, readonly name: string, flags: number) {
    this.managed = (flags & NF_MANAGED) !== 0;
    this.healthy = (flags & NF_HEALTHY) !== 0;
    this.outOfService = (flags & NF_OUT_OF_SERVICE) !== 0;
    this.statusUpdateNeeded = (flags & NF_STATUS_NEEDED) !== 0;
  }

  get volumesInUse(): readonly string[] | null {
    const list = this.core.inUse.get(this.id);
    if (!list) return null;
    // A strictly ascending list (the kubelet's) has no repeats to drop.
    return this.core.inUseSorted[this.id] === 1 ? list : [...new Set(list)];
  }

  get pairs(): number {
    let pairs = 0;
    this.core.forEachSlotOfNode(this.id, () => pairs++);
    return pairs;
  }

  toJSON(): NodeState {
    const { id, name, managed, healthy, outOfService, volumesInUse, statusUpdateNeeded, pairs } = this;
    return { id, name, managed, healthy, outOfService, volumesInUse, statusUpdateNeeded, pairs };
  }
}

export function volumeState(core: WorldCore, volume: number): VolumeState | undefined {
  const name = core.volumes.name(volume);
  if (name === undefined) return undefined;
  let pairs = 0;
  let attachedNodes = 0;
  core.forEachSlotOfVolume(volume, (p) => {
    pairs++;
    if (core.t.pairFlags[p] & PF_ATTACHED) attachedNodes++;
  });
  return {
    id: volume,
    name,
    multiAttachForbidden: (core.t.vflags(volume) & VF_FORBIDDEN) !== 0,
    attachedNodes,
    pairs,
    info: core.records.info(volume),
  };
}

/** K3: nodes flagged statusUpdateNeeded. O(nodes), skipped when none is. */
export function flaggedNodes(core: WorldCore): number[] {
  const out: number[] = [];
  if (core.counters.statusUpdatesNeeded === 0) return out;
  const flags = core.t.nodeFlags;
  for (let n = 0, end = core.nodes.highWater; n < end; n++) if (flags[n] & NF_STATUS_NEEDED) out.push(n);
  return out;
}

/** K1: the volumes in a node's report set. */
export function reportSet(core: WorldCore, node: number): number[] {
  const out: number[] = [];
  core.forEachSlotOfNode(node, (p) => {
    if (core.t.pairFlags[p] & PF_REPORTED) out.push(core.pairVolume(p));
  });
  return out;
}

/** Live ids above `after`, ascending, at most `limit`. */
export function liveIds(highWater: number, after: number, limit: number, live: (id: number) => boolean): number[] {
  const out: number[] = [];
  for (let i = Math.max(0, Math.floor(after) + 1); i < highWater && out.length < limit; i++) {
    if (live(i)) out.push(i);
  }
  return out;
}
