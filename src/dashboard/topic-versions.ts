/**
 * Versions of the stream topics the not-converged index does not version: `conflicts`,
 * `operations`, `nodes`, `node:<name>` and `volume:<uniqueName>`. A topic's version is a counter that
 * moves when a fingerprint of what its page shows changes; fingerprints are computed on demand
 * (the stream asks once a second, for the topics someone subscribed to). Cost per call:
 * O(conflicts), O(operations), O(1), O(pairs of the node), O(pairs of the volume). `nodes` (the node
 * list) moves with the fleet's counts (nodes, managed, pairs desired and attached, status writes
 * pending), not with every node's health: a list window at 100k nodes is refetched when they move.
 */
import type { PairState, WorldState } from '../cache/world-state.js';
import type { Timeline } from './timeline.js';

/** Topics tracked at most; a topic over this forgets the least recently asked ones. */
const MAX_TOPICS = 10_000;

export interface TopicVersions {
  /** The topic's version now; undefined for a topic not versioned here. */
  version(topic: string): number | undefined;
}

export interface TopicVersionsDeps {
  readonly state: WorldState;
  readonly timeline: Timeline;
}

export function createTopicVersions(deps: TopicVersionsDeps): TopicVersions {
  return new Fingerprints(deps.state, deps.timeline);
}

class Fingerprints implements TopicVersions {
  private readonly known = new Map<string, { fp: number; version: number }>();

  constructor(private readonly state: WorldState, private readonly timeline: Timeline) {}

  version(topic: string): number | undefined {
    const fp = this.fingerprint(topic);
    if (fp === undefined) return undefined;
    const k = this.known.get(topic);
    if (k) {
      this.known.delete(topic); // re-inserted: most recently asked last
      if (k.fp !== fp) k.version++;
      k.fp = fp;
      this.known.set(topic, k);
      return k.version;
    }
    if (this.known.size >= MAX_TOPICS) this.known.delete(this.known.keys().next().value as string);
    this.known.set(topic, { fp, version: 1 });
    return 1;
  }

  private fingerprint(topic: string): number | undefined {
    const { state } = this;
    if (topic === 'conflicts') {
      let h = 0;
      for (const c of state.conflicts()) h = mix(h, c.volume * 4_194_304 + c.node);
      return mix(h, state.counts().conflicts);
    }
    if (topic === 'operations') {
      let h = 0;
      for (const p of state.pendingOperations()) h = mix(mix(h, p.volume * 4_194_304 + p.node), p.startedAt + (p.op === 'attach' ? 1 : 2));
      // A key failing again within a second leaves the counts as they were; its new window does not.
      for (const b of state.backoffOperations(Number.NEGATIVE_INFINITY)) h = mix(mix(h, b.volume * 4_194_304 + b.node), b.lastErrorAt + b.durationMs);
      const c = state.counts();
      return mix(mix(h, c.pendingOperations), c.backoffOperations);
    }
    if (topic === 'nodes') {
      const c = state.counts();
      return [c.nodes, c.managedNodes, c.desiredPairs, c.attached, c.uncertain, c.statusUpdatesNeeded].reduce(mix, 0);
    }
    if (topic.startsWith('node:')) {
      const id = state.findNode(topic.slice(5));
      const n = id === undefined ? undefined : state.node(id);
      if (id === undefined || !n) return 0;
      let h = mix(mix(0, n.healthy ? 1 : 2), n.outOfService ? 3 : 4);
      state.forEachPairOfNode(id, (p) => (h = mix(h, pairPrint(p))));
      return h;
    }
    if (topic.startsWith('volume:')) {
      const name = topic.slice(7);
      const id = state.findVolume(name);
      let h = mix(0, this.timeline.version(name));
      if (id !== undefined) state.forEachPairOfVolume(id, (p) => (h = mix(h, pairPrint(p))));
      return h;
    }
    return undefined;
  }
}

function pairPrint(p: PairState): number {
  const state = p.attachState === 'attached' ? 1 : p.attachState === 'uncertain' ? 2 : 3;
  return ((p.volume * 31 + p.node) * 7 + state) * 8 + (p.mounted ? 4 : 0) + (p.reportedAttached ? 2 : 0) + (p.desiredPods > 0 ? 1 : 0) + (p.detachRequestedAt ?? 0);
}

/** A 32-bit mixing step (FNV-like), order-sensitive. */
function mix(h: number, v: number): number {
  let x = (h ^ (v | 0) ^ Math.floor(v / 4_294_967_296)) >>> 0;
  x = Math.imul(x, 16_777_619) >>> 0;
  return (x ^ (x >>> 15)) >>> 0;
}
