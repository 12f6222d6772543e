/**
 * The dashboard model: the not-converged index, the convergence history and the per-volume
 * timeline, fed by one 1 s sampler and by the controller's observer. The controller creates it
 * with its clock, passes `observer` to the reconciler, executor and populator, and starts and
 * stops it with itself. Reads (routes, the stream) never mutate the world state.
 *
 * Never throws from its timer: a failed sample is logged and the next one runs on schedule.
 */
import type { WorldState } from '../cache/world-state.js';
import type { InspectionView } from '../http/inspection-view.js';
import { logger, type Logger } from '../log/logger.js';
import type { ControllerEvent, ControllerObserver, ForcedReason } from '../operations/controller-observer.js';
import { createHistory, type History } from './history.js';
import { createNotConvergedIndex, type NotConvergedIndex, type NotConvergedIndexDeps } from './not-converged-index.js';
import { createTimeline, type Timeline, type TimelineDeps } from './timeline.js';
import { createTopicVersions, type TopicVersions } from './topic-versions.js';

export interface DashboardModel {
  readonly index: NotConvergedIndex;
  readonly history: History;
  readonly timeline: Timeline;
  /** For the reconciler, the executor and the populator (src/operations/controller-observer.ts). */
  readonly observer: ControllerObserver;
  /** Versions of the stream topics that are not the index's (conflicts, operations, node:, volume:). */
  readonly topics: TopicVersions;
  /** Controller-clock ms (the InspectionView's). */
  now(): number;
  /** Forced detaches started in the last hour, by reason (F11). */
  forcedDetachesLastHour(): Record<ForcedReason, number>;
  /** Records one history sample now (the 1 s timer calls it; tests call it directly). */
  sample(): void;
  start(): void;
  stop(): void;
}

export interface DashboardModelDeps {
  readonly state: WorldState;
  readonly view: InspectionView;
  readonly sampleIntervalMs?: number;
  readonly index?: Omit<NotConvergedIndexDeps, 'state' | 'view'>;
  readonly timeline?: Omit<TimelineDeps, 'now'>;
  readonly log?: Logger;
}

const HOUR_MS = 3_600_000;

export function createDashboardModel(deps: DashboardModelDeps): DashboardModel {
  return new Model(deps);
}

class Model implements DashboardModel {
  readonly index: NotConvergedIndex;
  readonly history: History = createHistory();
  readonly timeline: Timeline;
  readonly topics: TopicVersions;
  readonly observer: ControllerObserver = { observe: (e) => this.observe(e) };
  private readonly forced: Array<{ at: number; reason: ForcedReason }> = [];
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private lastOutOfService: number | undefined;
  private lastRole: string | undefined;
  private readonly log: Logger;

  constructor(private readonly d: DashboardModelDeps) {
    this.log = d.log ?? logger('dashboard');
    this.index = createNotConvergedIndex({ ...d.index, state: d.state, view: d.view, log: this.log });
    this.timeline = createTimeline({ ...d.timeline, now: () => this.now() });
    this.topics = createTopicVersions({ state: d.state, timeline: this.timeline });
  }

  now(): number {
    return this.d.view.now();
  }

  private observe(e: ControllerEvent): void {
    this.timeline.observe(e);
    if (e.kind === 'detach-started' && e.forced) {
      const at = this.now();
      this.forced.push({ at, reason: e.forced });
      this.history.annotate({ t: at, kind: 'forced-detach', text: `forced detach (${e.forced}) of ${e.volume} from ${e.node}` });
      this.pruneForced(at);
    }
  }

  private pruneForced(now: number): void {
    while (this.forced.length > 0 && this.forced[0].at <= now - HOUR_MS) this.forced.shift();
  }

  forcedDetachesLastHour(): Record<ForcedReason, number> {
    this.pruneForced(this.now());
    const out: Record<ForcedReason, number> = { timeout: 0, 'out-of-service': 0 };
    for (const f of this.forced) out[f.reason]++;
    return out;
  }

  sample(): void {
    const { state, view } = this.d;
    const t = this.now();
    const c = state.counts();
    const snap = this.index.snapshot();
    this.history.record({
      t, desired: c.desiredPairs, attached: c.attached, notConverged: snap.items.length,
      conflicts: c.conflicts, pending: c.pendingOperations, backoff: c.backoffOperations,
    });
    const oos = view.nodeConditionCounts().outOfService;
    if (this.lastOutOfService !== undefined && oos !== this.lastOutOfService) {
      const kind = oos > this.lastOutOfService ? 'out-of-service-added' : 'out-of-service-removed';
      this.history.annotate({ t, kind, text: `nodes with the out-of-service taint: ${this.lastOutOfService} → ${oos}` });
    }
    this.lastOutOfService = oos;
    const role = view.readiness().role;
    if (this.lastRole !== undefined && role !== this.lastRole) {
      this.history.annotate({ t, kind: 'leader-change', text: `role ${this.lastRole} → ${role}` });
    }
    this.lastRole = role;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.history.annotate({ t: this.now(), kind: 'controller-start', text: 'controller started' });
    this.index.start();
    this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.running) return;
      try {
        this.sample();
      } catch (err) {
        this.log.error({ err }, 'dashboard sample failed');
      }
      this.schedule();
    }, this.d.sampleIntervalMs ?? 1000);
    this.timer.unref?.();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.index.stop();
  }
}
