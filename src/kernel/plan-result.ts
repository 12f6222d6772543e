/**
 * Plan: what one reconcile pass should do, decoded from the kernel's output records. Lists are
 * compact (three u32 per entry) and owned by the Plan, so it stays valid after the next plan or
 * any mutation; ids are those of the state at plan start (re-resolve names if you await between).
 */
import {
  ACTION_ATTACH, ACTION_CONFLICT, ACTION_DETACH, ACTION_MASK, ACTION_STATUS, DF_FORCED_TIMEOUT, DF_OUT_OF_SERVICE,
  DF_TIMER_STARTED, DF_VERIFY_SAFE, OUT_CODE, OUT_NODE, OUT_RECORD_SIZE, OUT_VOLUME,
} from './abi.js';
import type { NodeId, VolumeId } from '../cache/world-state.js';

// The decoding here and in the planner reads records as three words (volume, node, code) and
// sorts them into one list per action 0..4: the ABI must say the same, or nothing is planned.
if (OUT_RECORD_SIZE !== 12 || OUT_VOLUME !== 0 || OUT_NODE !== 4 || OUT_CODE !== 8 || ACTION_STATUS !== 4 || ACTION_MASK < ACTION_STATUS) {
  throw new Error('plan-result.ts: the output record layout in abi.ts changed; update the decoding');
}

export interface PairAction {
  readonly volume: VolumeId;
  readonly node: NodeId;
}

export interface DetachAction extends PairAction {
  /** F5 forceDetachTimeoutExpired: F11 reason `timeout` when the detach is forced. */
  readonly forcedTimeout: boolean;
  /** F5: the node has the out-of-service taint (F11 reason `out-of-service` unless timeout). */
  readonly outOfService: boolean;
  /** F9: the detach must first check the live Node's volumesInUse. False = forced (F11). */
  readonly verifySafeToDetach: boolean;
  /** F4: this pass started the pair's detach timer (see Planner, "same-pass operations"). */
  readonly timerStarted: boolean;
}

/** A list of (volume, node, flags) entries; index accessors avoid allocating per entry. */
export class ActionList<A extends PairAction = PairAction> implements Iterable<A> {
  constructor(
    private readonly data: Uint32Array,
    private readonly decode: (volume: number, node: number, flags: number) => A,
  ) {}
  get length(): number {
    return this.data.length / 3;
  }
  volume(i: number): VolumeId {
    return this.data[i * 3];
  }
  node(i: number): NodeId {
    return this.data[i * 3 + 1];
  }
  /** The raw code: action | DF_* flags (src/kernel/abi.ts). */
  code(i: number): number {
    return this.data[i * 3 + 2];
  }
  at(i: number): A {
    return this.decode(this.data[i * 3], this.data[i * 3 + 1], this.data[i * 3 + 2]);
  }
  *[Symbol.iterator](): Iterator<A> {
    for (let i = 0; i < this.length; i++) yield this.at(i);
  }
}

export interface Plan {
  /** The `now` the plan was computed for (ms, floored). */
  readonly now: number;
  /** F1-F9: pairs to detach, in no particular order. Act on these first (E1). */
  readonly detaches: ActionList<DetachAction>;
  /** G4: pairs to attach. */
  readonly attaches: ActionList<PairAction>;
  /** G3/H4: desired pairs blocked by a confirmed attachment elsewhere, not yet reported. */
  readonly conflicts: ActionList<PairAction>;
  /** K3: nodes flagged statusUpdateNeeded at plan start. */
  readonly statusNodes: Uint32Array;
  /** Attach candidates not listed in `attaches` (PlanOptions.attachWindow): skipped or no room. */
  readonly attachesOmitted: number;
  /** Some shard ran out of attach room with candidates left after it. */
  readonly attachWindowFull: boolean;
}

const pairAction = (volume: number, node: number): PairAction => ({ volume, node });
const detachAction = (volume: number, node: number, flags: number): DetachAction => ({
  volume,
  node,
  forcedTimeout: (flags & DF_FORCED_TIMEOUT) !== 0,
  outOfService: (flags & DF_OUT_OF_SERVICE) !== 0,
  verifySafeToDetach: (flags & DF_VERIFY_SAFE) !== 0,
  timerStarted: (flags & DF_TIMER_STARTED) !== 0,
});

/** Collects raw output records (volume, node, code triples) into a Plan. */
export class PlanBuilder {
  private records = new Uint32Array(3 * 1024);
  private length = 0;

  /** Appends `count` records from `source` starting at word index `from`. */
  append(source: Uint32Array, from: number, count: number): void {
    const need = (this.length + count) * 3;
    if (need > this.records.length) {
      const grown = new Uint32Array(Math.max(need, this.records.length * 2));
      grown.set(this.records.subarray(0, this.length * 3));
      this.records = grown;
    }
    this.records.set(source.subarray(from, from + count * 3), this.length * 3);
    this.length += count;
  }

  build(now: number, attachesOmitted = 0, attachWindowFull = false): Plan {
    const counts = [0, 0, 0, 0, 0];
    const r = this.records;
    const n = this.length * 3;
    for (let i = 2; i < n; i += 3) counts[r[i] & ACTION_MASK]++;
    const lists = counts.map((c) => new Uint32Array(c * 3));
    const fill = [0, 0, 0, 0, 0];
    for (let i = 0; i < n; i += 3) {
      const action = r[i + 2] & ACTION_MASK;
      const list = lists[action];
      const at = fill[action];
      list[at] = r[i];
      list[at + 1] = r[i + 1];
      list[at + 2] = r[i + 2];
      fill[action] = at + 3;
    }
    const status = lists[ACTION_STATUS];
    const statusNodes = new Uint32Array(status.length / 3);
    for (let i = 0; i < statusNodes.length; i++) statusNodes[i] = status[i * 3 + 1];
    return {
      now,
      detaches: new ActionList(lists[ACTION_DETACH], detachAction),
      attaches: new ActionList(lists[ACTION_ATTACH], pairAction),
      conflicts: new ActionList(lists[ACTION_CONFLICT], pairAction),
      statusNodes,
      attachesOmitted,
      attachWindowFull,
    };
  }
}
