/**
 * Planner: runs the plan kernel over the world state, one call per shard, on the main thread
 * (`workers: 0`, the test configuration) or in a Piscina pool, and decodes the result.
 *
 * A plan is computed from the state as it is when `plan()` starts: the state refuses mutations
 * until the returned promise settles (wrap event handlers in `state.whenIdle`). The kernel
 * itself writes only the detach timers (F4 start, G2 reset) of the pairs in its shard.
 *
 * Same-pass operations. Upstream runs its detach and attach loops one pair at a time, and an
 * operation started for one pair is visible to the next. A plan instead decides every pair
 * from the state at plan start, so the reconciler, acting on the plan in order (detaches, then
 * attaches), re-checks at action time what an earlier action of the same pass may have changed:
 *   - detach: before F8, `isSafeToRetry(volume, node, 'detach', now)` (F2). If false, skip the
 *     action quietly, and if its `timerStarted` is set call `resetDetachTimer` (upstream's F2
 *     would have skipped the pair before starting its timer);
 *   - attach: `tryStartOperation` refuses a key an earlier action made pending (G1/I2): skip;
 *   - conflict: report only if `isOperationPending(volume, node)` is still false (H5).
 * One difference remains: a desired, attached pair of a forbidden volume whose operation was
 * started earlier in the same pass gets its timer reset (G2) one pass earlier than upstream;
 * that timer only matters once the pair is undesired again, and it then restarts from zero.
 * At the end of the pass, `state.nodesNeedingStatusUpdate()` lists every flagged node (K3),
 * including those flagged by the pass itself; `plan.statusNodes` is the snapshot at plan start.
 */
import { fleetError } from '../errors/index.js';
import type { KernelAccess } from '../cache/kernel-access.js';
import type { WorldState } from '../cache/world-state.js';
import {
  DESC_ALIGN, DESC_SIZE, D_MAX_WAIT, D_NODE_BEGIN, D_NODE_CURSOR, D_NODE_END, D_NOW, D_OPTIONS, D_OUT, D_OUT_CAPACITY,
  D_OUT_LENGTH, D_PAIR_BEGIN, D_PAIR_CURSOR, D_PAIR_END, OPT_DISABLE_FORCE_DETACH, OUT_RECORD_SIZE, STATUS_OK,
  STATUS_OUTPUT_FULL, ABI_VERSION, D_ATTACH_ROOM, D_ATTACH_SKIP, D_ATTACH_OMITTED,
} from './abi.js';
import { createKernelPool, defaultWorkerCount, type KernelPool } from './kernel-pool.js';
import { instantiateKernel, loadKernelModule, type KernelBuild, type KernelExports } from './kernel-module.js';
import { PlanBuilder, type Plan } from './plan-result.js';
import { logger } from '../log/logger.js';

const log = logger('planner');

export interface PlanOptions {
  /** F4: the force-detach timer (upstream: 6 min). At most 2^30 ms. */
  maxWaitForUnmountMs: number;
  /** P2: `--disable-force-detach-on-timeout`. */
  disableForceDetachOnTimeout: boolean;
  /**
   * Lists only the `index`-th window of `room` attach candidates (0: the first; each shard
   * lists its share, ceil(room / shards), of its own candidates); the others are counted in
   * `plan.attachesOmitted`. Default: all. A pass that starts a few thousand operations gains
   * nothing from a list of a million.
   */
  attachWindow?: { index: number; room: number };
}

export interface PlannerOptions {
  state: WorldState;
  /** Worker threads; 0 runs the kernel on the main thread. Default: cores - 1, at least 1. */
  workers?: number;
  /** Shards per plan (one kernel call each). Default: max(1, workers). */
  shards?: number;
  /** Kernel build: 'release' (default) or 'debug' (tests). */
  build?: KernelBuild;
  /** Initial output room per shard, in records (grows on demand). Tests set it tiny to
   * exercise the kernel's resumption; the default suits production. */
  outputRecords?: number;
  /**
   * With workers, plans over fewer pair slots than this run on the main thread anyway (default
   * 0: always in the pool). A pool plan returns through the main thread's event loop, so on a
   * busy controller it waits behind I/O callbacks and holds state mutations back meanwhile;
   * below a few million pairs the kernel costs less than that wait (about 1 ms per million).
   */
  inlineBelowPairs?: number;
  /**
   * A pool plan still running after this long is abandoned, at the watchdog's next look (a
   * quarter of it later at most; default 30 s; plans take milliseconds): the workers are restarted, which stops a kernel call that hangs, and the
   * plan fails once every shard has settled, so the state reopens and the next pass plans again.
   */
  planDeadlineMs?: number;
  /** The monotonic clock (ms) the deadline is measured on; default `performance.now`. Tests drive it. */
  monotonicNow?: () => number;
}

export interface Planner {
  /**
   * Plans one reconcile pass at host time `now` (ms). Rejects (FA_ERR_KERNEL) if a plan is
   * already running, the planner is closed, or the kernel reports a bad layout; rejects with
   * what `act` threw.
   *
   * `act` runs with the plan once the kernel is done and before the mutations that `whenIdle`
   * queued while it ran (events, operation outcomes, verification slices): a pass that acts
   * there acts on exactly the state it planned over. Acting after the returned promise settles
   * instead sees those mutations applied under decisions made without them (a detach planned
   * before its pod came back, a forced detach planned before the out-of-service taint went).
   */
  plan(now: number, options: PlanOptions, act?: (plan: Plan) => void): Promise<Plan>;
  readonly planning: boolean;
  readonly workers: number;
  readonly shards: number;
  /** Plans that ran in the pool (the others ran on the main thread). */
  readonly poolPlans: number;
  /** The worker pool (absent with `workers: 0`), shared with other off-thread tasks (list pages). */
  readonly pool: KernelPool | undefined;
  /** Stops the workers. Further plans reject. */
  close(): Promise<void>;
}

export function createPlanner(options: PlannerOptions): Planner {
  const workers = options.workers ?? defaultWorkerCount();
  if (!Number.isInteger(workers) || workers < 0) throw new RangeError('options.workers must be a non-negative integer');
  const shards = options.shards ?? Math.max(1, workers);
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError('options.shards must be a positive integer');
  const outputRecords = options.outputRecords ?? INITIAL_OUTPUT_RECORDS;
  if (!Number.isInteger(outputRecords) || outputRecords < 1) throw new RangeError('options.outputRecords must be a positive integer');
  const inlineBelowPairs = options.inlineBelowPairs ?? 0;
  if (!(inlineBelowPairs >= 0)) throw new RangeError('options.inlineBelowPairs must be a non-negative number');
  const deadline = options.planDeadlineMs ?? 30_000;
  if (!(deadline > 0 && deadline <= 2 ** 31 - 1)) throw new RangeError('options.planDeadlineMs must be within (0, 2^31-1] ms');
  const now = options.monotonicNow ?? (() => performance.now());
  return new KernelPlanner(options.state.kernelAccess(), workers, shards, options.build ?? 'release', outputRecords, inlineBelowPairs, deadline, now);
}

const INITIAL_OUTPUT_RECORDS = 4096;

/** One plan's failure mark: set when a shard fails or the deadline passes (then with the restart). */
interface Abandoned {
  failed: boolean;
  restart?: Promise<void>;
}

class KernelPlanner implements Planner {
  private readonly kernel: KernelExports;
  readonly pool: KernelPool | undefined;
  private closed = false;
  private watchdog: NodeJS.Timeout | undefined;
  /** The pool plan under way, for the deadline watchdog. */
  private inPool: { abandoned: Abandoned; startedAt: number } | undefined;
  planning = false;
  poolPlans = 0;

  constructor(
    private readonly access: KernelAccess,
    readonly workers: number,
    readonly shards: number,
    build: KernelBuild,
    private outputRecords: number,
    private readonly inlineBelowPairs: number,
    private readonly planDeadlineMs: number,
    private readonly monotonicNow: () => number,
  ) {
    const module = loadKernelModule(build);
    this.kernel = instantiateKernel(module, access.memory);
    this.pool = workers > 0
      ? createKernelPool({ threads: workers, data: { module, memory: access.memory, abiVersion: ABI_VERSION } })
      : undefined;
    // Checked at a quarter of the deadline: a plan is abandoned within 1.25 deadlines.
    if (this.pool) this.watchdog = setInterval(() => this.watchDeadline(), Math.max(1, planDeadlineMs / 4)).unref();
  }

  async plan(now: number, options: PlanOptions, act?: (plan: Plan) => void): Promise<Plan> {
    if (this.closed) throw fleetError('FA_ERR_KERNEL', 'planner is closed');
    if (this.planning) throw fleetError('FA_ERR_KERNEL', 'a plan is already running');
    const maxWait = options.maxWaitForUnmountMs;
    if (!Number.isFinite(maxWait) || maxWait < 0 || maxWait > 2 ** 30) {
      throw fleetError('FA_ERR_KERNEL', 'maxWaitForUnmountMs must be within [0, 2^30] ms');
    }
    // Every descriptor is DESC_ALIGN-aligned whatever the output room (an odd record count
    // would misplace the fields written through typed-array indices: the kernel refuses it).
    const shardBytes = Math.ceil((DESC_SIZE + this.outputRecords * OUT_RECORD_SIZE) / DESC_ALIGN) * DESC_ALIGN;
    const frame = this.access.beginPlan(now, this.shards * shardBytes);
    this.planning = true;
    let plan: Plan | undefined;
    try {
      const mem = this.access.memory.buffer;
      const u32 = new Uint32Array(mem);
      const view = new DataView(mem);
      const pairChunk = Math.ceil(frame.pairEnd / this.shards / 8) * 8;
      const nodeChunk = Math.ceil(frame.nodeEnd / this.shards / 16) * 16;
      const room = options.attachWindow ? Math.ceil(options.attachWindow.room / this.shards) : 0xffffffff;
      const skip = options.attachWindow ? options.attachWindow.index * room : 0;
      if (!(room >= 0 && room <= 0xffffffff && skip >= 0 && skip <= 0xffffffff)) {
        throw fleetError('FA_ERR_KERNEL', 'attachWindow index and room must be non-negative, index × room below 2^32');
      }
      const descs: number[] = [];
      for (let s = 0; s < this.shards; s++) {
        const desc = frame.scratch + s * shardBytes;
        const w = desc >>> 2;
        const pairBegin = Math.min(frame.pairEnd, s * pairChunk);
        const nodeBegin = Math.min(frame.nodeEnd, s * nodeChunk);
        u32[w + D_PAIR_BEGIN / 4] = u32[w + D_PAIR_CURSOR / 4] = pairBegin;
        u32[w + D_PAIR_END / 4] = Math.min(frame.pairEnd, pairBegin + pairChunk);
        u32[w + D_NODE_BEGIN / 4] = u32[w + D_NODE_CURSOR / 4] = nodeBegin;
        u32[w + D_NODE_END / 4] = Math.min(frame.nodeEnd, nodeBegin + nodeChunk);
        u32[w + D_OUT / 4] = desc + DESC_SIZE;
        u32[w + D_OUT_CAPACITY / 4] = this.outputRecords;
        u32[w + D_OUT_LENGTH / 4] = 0;
        u32[w + D_NOW / 4] = frame.nowRel;
        u32[w + D_OPTIONS / 4] = options.disableForceDetachOnTimeout ? OPT_DISABLE_FORCE_DETACH : 0;
        view.setFloat64(desc + D_MAX_WAIT, maxWait, true);
        u32[w + D_ATTACH_ROOM / 4] = room;
        u32[w + D_ATTACH_SKIP / 4] = skip;
        u32[w + D_ATTACH_OMITTED / 4] = 0;
        descs.push(desc);
      }
      const inline = !this.pool || frame.pairEnd < this.inlineBelowPairs;
      if (!inline) this.poolPlans++;
      // Every shard settles before the state reopens: a shard that failed must not leave the
      // others writing pair flags and timers into tables the main thread may mutate (or relay
      // out) once the plan has ended. After a failure the others dispatch no further task.
      const abandoned: Abandoned = { failed: false };
      // Pool plans only: an inline one cannot hang without the thread (the watchdog) hanging too.
      if (!inline) {
        this.inPool = { abandoned, startedAt: this.monotonicNow() };
        this.watchdog?.ref(); // a pool plan under way keeps the process up until its deadline
      }
      const settled = await Promise.allSettled(descs.map((desc) => this.runShard(desc, u32, inline, abandoned)));
      if (abandoned.restart) {
        // Terminated workers may still run a moment after their tasks were rejected: the state
        // reopens only once they have exited.
        await abandoned.restart;
        throw fleetError('FA_ERR_KERNEL', `plan exceeded its deadline of ${this.planDeadlineMs} ms; the plan workers were restarted`);
      }
      const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failure) throw failure.reason;
      const chunks = settled.map((r) => (r as PromiseFulfilledResult<Uint32Array[]>).value);
      const builder = new PlanBuilder();
      for (const shardChunks of chunks) for (const c of shardChunks) builder.append(c, 0, c.length / 3);
      let omitted = 0;
      let windowFull = false;
      for (const desc of descs) {
        const w = desc >>> 2;
        const shardOmitted = u32[w + D_ATTACH_OMITTED / 4];
        omitted += shardOmitted;
        // Full: candidates were left out after the skip, for want of room.
        if (u32[w + D_ATTACH_ROOM / 4] === 0 && shardOmitted > skip - u32[w + D_ATTACH_SKIP / 4]) windowFull = true;
      }
      plan = builder.build(Math.floor(now), omitted, windowFull);
    } finally {
      this.inPool = undefined;
      this.watchdog?.unref();
      this.planning = false;
      const built = plan;
      this.access.endPlan(built && act ? () => act(built) : undefined);
    }
    return plan;
  }

  /**
   * One timer for the planner's life, not one per plan (a plan every few milliseconds): it
   * checks the pool plan under way, if any, against the deadline.
   */
  private watchDeadline(): void {
    const p = this.inPool;
    if (p && !p.abandoned.restart && this.monotonicNow() - p.startedAt > this.planDeadlineMs) this.abandon(p.abandoned);
  }

  /** The deadline passed: no shard dispatches again, and the restart rejects the tasks under way. */
  private abandon(abandoned: Abandoned): void {
    abandoned.failed = true;
    log.error({ deadlineMs: this.planDeadlineMs }, 'plan exceeded its deadline; restarting the plan workers');
    abandoned.restart = this.pool?.restart().catch((err: unknown) => log.error({ err }, 'plan worker restart failed'));
  }

  /**
   * Runs one shard to completion, draining its output whenever it fills up. A failure marks the
   * plan `abandoned`; a shard that sees the mark dispatches nothing more.
   */
  private async runShard(desc: number, u32: Uint32Array, inline: boolean, abandoned: Abandoned): Promise<Uint32Array[]> {
    const chunks: Uint32Array[] = [];
    const w = desc >>> 2;
    try {
      for (;;) {
        if (abandoned.failed) throw fleetError('FA_ERR_KERNEL', 'plan abandoned: another shard failed');
        const status = this.pool && !inline ? (await this.pool.run('planShard', { desc })).status : this.kernel.planShard(desc) >>> 0;
        if (status !== STATUS_OK && status !== STATUS_OUTPUT_FULL) {
          throw fleetError('FA_ERR_KERNEL', `plan kernel returned status ${status}`);
        }
        const out = u32[w + D_OUT / 4] >>> 2;
        const length = u32[w + D_OUT_LENGTH / 4];
        chunks.push(u32.slice(out, out + length * 3));
        if (status === STATUS_OK) return chunks;
        // Full: the next plans get twice the room; this one continues from the cursors.
        this.outputRecords = Math.min(this.outputRecords * 2, 1 << 22);
        u32[w + D_OUT_LENGTH / 4] = 0;
      }
    } catch (err) {
      abandoned.failed = true;
      throw err;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.watchdog);
    await this.pool?.close();
  }
}
