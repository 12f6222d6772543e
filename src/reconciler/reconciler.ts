/**
 * The reconciler: every `loopPeriodMs` (sliding: measured from the end of one pass to the start
 * of the next, as upstream) it plans the pass in the WASM kernel and acts on the plan:
 *   1. detaches (F8–F11) — before attaches, so a volume moving between nodes is released first;
 *   2. attaches (G1–G4) and multi-attach reports (G3, H3–H5);
 *   3. node status writes for flagged nodes (K3);
 *   4. the periodic verification when due (M1–M2): started by the pass, run in the background
 *      in slices (verify-attached.ts), one walk at a time.
 * It never throws: a failed pass is logged and the next one runs on schedule.
 *
 * A pass is one moment of the world state: it acts on the plan before the events that arrived
 * while the kernel ran are applied (Planner.plan's `act`), so every action is taken on the
 * state it was decided on. Upstream reads its caches item by item, each decision on the state
 * of that moment; acting on a plan after such events would take a detach decided before its
 * pod came back, or a forced detach decided before the out-of-service taint went.
 *
 * Wake-ups (`wakeMinGapMs` > 0; 0 is upstream's fixed period): a new desired pod (`wake`, from
 * the populator) brings the next pass forward, so a new pod does not wait out the rest of the
 * period for its attach to start. The woken pass still starts no sooner than `wakeMinGapMs`
 * after the previous pass ended, nor sooner than {@link WAKE_DUTY_FACTOR} times that pass's
 * length: under constant churn the loop spends at most about a tenth of its thread on passes, and
 * a burst of new pods is one pass, not one each. Only the timing changes, never what a pass decides.
 * The API backlog emptying (`apiRoom`) also wakes the loop, but only when the last pass left
 * operations unstarted for the backlog (Admission below), and after `wakeMinGapMs` alone: such a
 * pass is mostly the starting of operations, work that is due anyway, so the duty factor does not
 * apply. At a cold start the next batch then goes out as soon as the last one is on the wire,
 * paced by the API server rather than by the period. It cannot spin: each such pass refills the
 * backlog it waits on, so the passes follow the server's pace, and a pass that starts everything
 * it planned ends them.
 *
 * A pass never waits for the API server, so its length is the plan plus a walk of the plan:
 * - F8 at scale: detaches take their keys in the pass and wait for one status write per touched
 *   node (detach-pass.ts), not for a write per detach in series.
 * - K3 writes run in the background, one round at a time; a node flagged meanwhile is written
 *   by the next round.
 * - Admission: a pass starts at most `maxOperationStartsPerPass` operations, and none while
 *   more than `maxApiBacklog` controller requests wait for a connection slot (a short queue:
 *   what waits, waits in the plan, where a new pod is not behind thousands of queued sends). The rest stay in
 *   the plan and are started by a later pass (upstream's equivalent is goroutines blocked on the
 *   client rate limiter); without this bound a cold start of 100k attaches buries its own
 *   status writes and times out against a slow API server.
 * - Attach window: the plan lists only a window of the attach candidates (a few times the
 *   budget), not the million of a cold start. The window starts at the first candidate and
 *   moves past a full window only when the pass could not spend its budget in it (every
 *   candidate there refused: blocked elsewhere, or taken by this pass), so a run of refused
 *   candidates never starves the rest; it goes back to the start once a window is not full.
 */
import { controllerNow } from '../cache/controller-clock.js';
import type { NodeId, VolumeId, WorldState } from '../cache/world-state.js';
import type { Planner } from '../kernel/planner.js';
import type { Plan } from '../kernel/plan-result.js';
import type { NodeStatusUpdater } from '../statusupdater/index.js';
import type { EventRecorder, PodName } from '../events/index.js';
import type { ControllerMetrics } from '../metrics/controller-metrics.js';
import { createDurationWindow, type DurationWindow } from '../metrics/duration-window.js';
import type { OperationExecutor } from '../operations/operation-executor.js';
import { volumeInfoOf } from '../populator/volume-info.js';
import { logger, type Logger } from '../log/logger.js';
import { isNotLeader } from '../errors/index.js';
import { startDetaches } from './detach-pass.js';
import { notify, type ControllerObserver } from '../operations/controller-observer.js';
import { attachHeld, holdsAttach, ownEntry } from './attach-hold.js';
import { verifyAttachedVolumes, type VerifyDeps } from './verify-attached.js';

export interface ReconcilerOptions {
  loopPeriodMs: number;
  maxWaitForUnmountMs: number;
  disableForceDetachOnTimeout: boolean;
  /** M1: `--attach-detach-reconcile-sync-period`; ≥ 1 s. */
  syncPeriodMs: number;
  disableSync: boolean;
  /** Operations a pass may start (detaches first); default {@link DEFAULT_MAX_STARTS_PER_PASS}. */
  maxOperationStartsPerPass?: number;
  /** No new operation while more requests than this wait for a slot; default {@link DEFAULT_MAX_API_BACKLOG}. */
  maxApiBacklog?: number;
  /** Earliest start of a woken pass after the previous one ended (see Wake-ups); 0 or absent: no wake-ups. */
  wakeMinGapMs?: number;
}

export const DEFAULT_MAX_STARTS_PER_PASS = 5000;
export const DEFAULT_MAX_API_BACKLOG = 500;
/** Attach window room per operation a pass may start (see Attach window above). */
const ATTACH_WINDOW_PER_START = 4;
/** A woken pass waits at least this many times the previous pass's length (see Wake-ups). */
export const WAKE_DUTY_FACTOR = 9;

export interface ReconcilerDeps extends ReconcilerOptions {
  state: WorldState;
  planner: Planner;
  executor: OperationExecutor;
  statusUpdater: NodeStatusUpdater;
  events: EventRecorder;
  metrics: ControllerMetrics;
  podName(uid: string): { namespace: string; name: string } | undefined;
  verify: Omit<VerifyDeps, 'state'>;
  /** Controller requests waiting for a connection slot (0 when unknown). */
  apiBacklog?: () => number;
  /** Told of detach starts and Multi-Attach blocks (src/operations/controller-observer.ts); none by default. */
  observer?: ControllerObserver;
  /**
   * Host time, ms: `controllerNow` (monotonic) unless a test gives its own. Timers and backoff
   * that one component records another compares, so all of them take the same clock.
   */
  now?: () => number;
  log?: Logger;
}

export interface Reconciler {
  /** Starts the loop; idempotent. */
  start(): void;
  /** Stops after the running pass; resolves when it has ended. */
  stop(): Promise<void>;
  /**
   * New work arrived (a desired pod): bring the next pass forward (see Wake-ups). A no-op when
   * wake-ups are off, the loop is stopped, or the next pass is due sooner anyway; during a pass
   * it shortens the wait after that pass.
   */
  wake(): void;
  /**
   * The API backlog emptied: when the last pass left operations unstarted because of the backlog
   * (see Admission), start the next pass `wakeMinGapMs` after it ended. A no-op otherwise, when
   * wake-ups are off, or during a pass (which refills the backlog and decides the next room).
   */
  apiRoom(): void;
  /** Runs one pass now (tests); rejects if the loop is running. */
  runOnce(): Promise<void>;
  readonly passTime: DurationWindow;
  readonly planTime: DurationWindow;
  passes(): number;
  /** Passes that failed in a row since the last that succeeded, and why the last one failed. */
  failingPasses(): { count: number; lastError?: string };
}

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  return new Loop(deps);
}

class Loop implements Reconciler {
  readonly passTime = createDurationWindow();
  readonly planTime = createDurationWindow();
  private readonly now: () => number;
  private readonly log: Logger;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private statusRound: Promise<void> | undefined;
  private passCount = 0;
  private failedInRow = 0;
  private lastFailure: string | undefined;
  private lastSync: number;
  private attachWindow = 0;
  private stopped = false;
  private verifying: Promise<void> | undefined;
  /** performance.now() at which the scheduled pass starts (Infinity while none is scheduled). */
  private dueAt = Number.POSITIVE_INFINITY;
  /** End and length of the last pass (performance.now() ms), for the wake-up gap. */
  private lastEnd = 0;
  private lastMs = 0;
  private wokenDuringPass = false;
  /** The last pass spent a budget the API backlog had cut, with candidates left over. */
  private starved = false;
  /** Resolved options: `wakeMinGapMs` (≤ 0: no wake-ups) and `maxOperationStartsPerPass`. */
  private readonly minGapMs: number;
  private readonly maxStarts: number;

  constructor(private readonly d: ReconcilerDeps) {
    this.now = d.now ?? controllerNow;
    this.log = d.log ?? logger('reconciler');
    this.minGapMs = d.wakeMinGapMs ?? 0;
    this.maxStarts = d.maxOperationStartsPerPass ?? DEFAULT_MAX_STARTS_PER_PASS;
    this.lastSync = this.now(); // M1: the first verification is one period after creation
  }

  passes(): number {
    return this.passCount;
  }

  failingPasses(): { count: number; lastError?: string } {
    return this.failedInRow === 0 ? { count: 0 } : { count: this.failedInRow, ...(this.lastFailure ? { lastError: this.lastFailure } : {}) };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.current;
    await this.verifying; // ends at its next slice
    // The background K3 round is not awaited: the controller closes the status updater next,
    // which ends it after its writes in flight.
  }

  wake(): void {
    if (!this.running || this.minGapMs <= 0) return;
    if (this.current) {
      this.wokenDuringPass = true; // the running pass planned before this change
      return;
    }
    this.bringForward(this.wakeGapMs());
  }

  apiRoom(): void {
    // During a pass: that pass refills the backlog, and its own starvation decides the next room.
    if (!this.running || !this.starved || this.current || this.minGapMs <= 0) return;
    this.bringForward(this.minGapMs);
  }

  /** Moves the scheduled pass to `gapMs` after the last one ended, unless it is due sooner anyway. */
  private bringForward(gapMs: number): void {
    const at = this.lastEnd + gapMs;
    if (at >= this.dueAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.schedule(Math.max(0, at - performance.now()));
  }

  /** How long after the last pass ended a woken pass may start (see Wake-ups). */
  private wakeGapMs(): number {
    return Math.max(this.minGapMs, WAKE_DUTY_FACTOR * this.lastMs);
  }

  async runOnce(): Promise<void> {
    if (this.running) throw new Error('reconciler loop is running');
    await this.pass();
    await this.verifying; // a test's pass includes its verification, as upstream's sync
  }

  private schedule(delay: number): void {
    this.dueAt = performance.now() + delay;
    this.timer = setTimeout(() => {
      this.dueAt = Number.POSITIVE_INFINITY;
      this.current = this.pass().finally(() => {
        this.current = undefined;
        const woken = this.wokenDuringPass;
        this.wokenDuringPass = false;
        if (!this.running) return;
        this.schedule(woken ? Math.min(this.d.loopPeriodMs, this.wakeGapMs()) : this.d.loopPeriodMs);
      });
    }, delay);
  }

  private async pass(): Promise<void> {
    const t0 = performance.now();
    try {
      const room = ATTACH_WINDOW_PER_START * this.maxStarts + 1024;
      // The actions run inside the plan's end (Planner.plan's `act`): before the events that
      // arrived while the kernel ran, so every action is taken on the state it was decided on.
      await this.d.planner.plan(this.now(), {
        maxWaitForUnmountMs: this.d.maxWaitForUnmountMs,
        disableForceDetachOnTimeout: this.d.disableForceDetachOnTimeout,
        attachWindow: { index: this.attachWindow, room },
      }, (plan) => this.act(plan, performance.now() - t0));
      this.startStatusRound();
      this.maybeVerify();
      this.failedInRow = 0;
    } catch (err) {
      this.failedInRow++;
      this.lastFailure = err instanceof Error ? err.message : String(err);
      this.d.metrics.reconcileFailures.inc();
      this.log.error({ err }, 'reconcile pass failed');
    } finally {
      this.lastEnd = performance.now();
      const ms = this.lastEnd - t0;
      this.lastMs = ms;
      this.passTime.record(ms);
      this.d.metrics.reconcileDuration.observe(ms / 1000);
      this.passCount++;
    }
  }

  /** Starts the plan's operations and reports its conflicts; synchronous (see pass). */
  private act(plan: Plan, planMs: number): void {
    this.planTime.record(planMs);
    this.d.metrics.planDuration.observe(planMs / 1000);
    // Detaches go first but take at most half of a short budget while attaches wait, so that
    // an overloaded API server slows both instead of starving new pods. A volume moving
    // between nodes is not affected: its attach is refused until its detach is done.
    const budget = this.admission();
    const detachBudget = plan.attaches.length > 0 ? Math.max(Math.ceil(budget / 2), budget - plan.attaches.length) : budget;
    const { started: detached, deferred } = startDetaches(this.d, plan, detachBudget);
    const attachBudget = budget - detached;
    const attached = this.attachPass(plan, attachBudget, deferred);
    const started = detached + attached;
    this.starved = budget < this.maxStarts && started >= budget && plan.attaches.length + plan.detaches.length > started;
    if (!plan.attachWindowFull) this.attachWindow = 0;
    else if (attached < attachBudget) this.attachWindow++;
  }

  /** How many operations this pass may start (see Admission above). */
  private admission(): number {
    const backlog = this.d.apiBacklog?.() ?? 0;
    return Math.max(0, Math.min(this.maxStarts, (this.d.maxApiBacklog ?? DEFAULT_MAX_API_BACKLOG) - backlog));
  }

  /** K3 in the background: one round at a time; never rejects. */
  private startStatusRound(): void {
    if (this.statusRound) return;
    this.statusRound = this.d.statusUpdater.updateNodeStatuses().then(
      () => {
        this.statusRound = undefined;
      },
      (err: unknown) => {
        this.statusRound = undefined;
        this.log.error({ err }, 'node status round failed');
      },
    );
  }

  /**
   * Starts this pass's attaches (at most `budget`), reports conflicts; returns how many started.
   * `deferred`: volumes whose detach the budget put off, reported as upstream would (no error).
   */
  private attachPass(plan: Plan, budget: number, deferred: ReadonlySet<VolumeId>): number {
    const { state } = this.d;
    let started = 0;
    for (let i = 0; i < plan.attaches.length && started < budget; i++) {
      const volume = plan.attaches.volume(i);
      const node = plan.attaches.node(i);
      // Stricter than upstream's G3 on purpose: attach-hold.ts.
      if (state.multiAttachForbidden(volume) && attachHeld(state, volume, node)) {
        if (!deferred.has(volume)) this.blockedByUncertain(volume, node);
        continue;
      }
      if (this.d.executor.startAttach(volume, node) === 'started') started++; // G4; refusals are quiet
    }
    for (let i = 0; i < plan.conflicts.length; i++) {
      const volume = plan.conflicts.volume(i);
      const node = plan.conflicts.node(i);
      if (state.isOperationPending(volume, node) || deferred.has(volume)) continue; // G1 before G3 (H5)
      if (state.pair(volume, node)?.desiredPods === 0) continue;
      this.reportMultiAttach(volume, node);
      state.setMultiAttachErrorReported(volume, node); // H4
    }
    return started;
  }

  /** The Multi-Attach report for an attach blocked by an uncertain attachment elsewhere (once per entry, H4). */
  private blockedByUncertain(volume: VolumeId, node: NodeId): void {
    const { state } = this.d;
    const pair = state.pair(volume, node);
    if (!pair || pair.desiredPods === 0 || pair.multiAttachErrorReported) return;
    if (state.isOperationPending(volume, node)) return; // G1 first (H5)
    this.reportMultiAttach(volume, node, true);
    state.setMultiAttachErrorReported(volume, node);
  }

  /** H3: to each pod of the blocked entry, naming pods on the nodes holding the volume. */
  private reportMultiAttach(volume: VolumeId, node: NodeId, includeUncertain = false): void {
    const { state } = this.d;
    const others: PodName[] = [];
    const own = includeUncertain ? ownEntry(state, volume, node) : undefined;
    state.forEachPairOfVolume(volume, (p) => {
      if (p.node === node || p.attachState === 'detached') return;
      if (p.attachState === 'uncertain' && !(own && holdsAttach(p, own))) return;
      for (const uid of state.desiredPods(volume, p.node)) {
        const name = this.d.podName(uid);
        if (name) others.push(name);
      }
    });
    const recipients = state.desiredPods(volume, node).flatMap((uid) => {
      const p = this.d.podName(uid);
      return p ? [{ ...p, uid }] : [];
    });
    // The blocked entry's own spec name (§C, H3), as upstream's DSW keeps the spec per entry.
    const specName = state.specName(volume, node) ?? volumeInfoOf(state, volume)?.spec?.name ?? state.volumeName(volume);
    this.d.events.multiAttach(recipients, specName, others);
    notify(this.d.observer, () => {
      const holders: string[] = [];
      state.forEachPairOfVolume(volume, (p) => {
        if (p.node !== node && p.attachState !== 'detached') holders.push(state.nodeName(p.node));
      });
      return { kind: 'multi-attach-blocked', volume: state.volumeName(volume), node: state.nodeName(node), holders };
    });
  }

  /** M1 when due, in the background and sliced (verify-attached.ts); one walk at a time. */
  private maybeVerify(): void {
    if (this.d.disableSync || this.d.syncPeriodMs < 1000 || this.verifying) return;
    const now = this.now();
    if (now - this.lastSync <= this.d.syncPeriodMs) return;
    this.lastSync = now;
    // J4: upstream's per-node series, plugin label "<n/a>" (a node's volumes may span plugins).
    const perNode = this.d.metrics.operationDuration.labels({
      volume_plugin: '<n/a>', operation_name: 'verify_volumes_are_attached_per_node', status: 'success', migrated: 'false',
    });
    const options = { cancelled: () => this.stopped, observeNode: (s: number) => perNode.observe(s) };
    this.verifying = verifyAttachedVolumes({ ...this.d.verify, state: this.d.state }, options).then(
      ({ removed, stats }) => {
        if (!stats.cancelled) this.d.metrics.periodicPassBusy.observe({ pass: 'verify' }, stats.busyMs / 1000);
        if (removed > 0) this.log.info({ removed }, 'verification: volumes no longer attached removed from actual state');
      },
      (err: unknown) => {
        // A read refused because this replica is stopping or no longer leads ends the walk quietly.
        if (isNotLeader(err)) this.log.debug({ err }, 'verification ended: not leading');
        else this.log.error({ err }, 'verification failed');
      },
    ).finally(() => {
      this.verifying = undefined;
    });
  }
}
