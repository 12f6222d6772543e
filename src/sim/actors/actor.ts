/**
 * What every fleet actor is, and the tick loop they share. Actors never write to the store
 * from an event callback (callbacks run inside the store's commit): they update their state
 * and queue work; writes happen in `tick`, which stops after a time slice so that a burst is
 * spread over ticks and the server keeps serving.
 */
import { StoreError, type KubeObject, type ResourceName, type StoreEventType } from '../store/sim-store.js';
import { logger } from '../../log/logger.js';

export interface FleetActor {
  readonly name: string;
  /** Resources whose events this actor needs (others are not parsed for it). */
  readonly resources: ReadonlySet<ResourceName>;
  /** Tick period, milliseconds. */
  readonly tickMs: number;
  /** One committed change, after the shared index has applied it. `obj` is shared: read only. */
  onEvent(type: StoreEventType, resource: ResourceName, obj: KubeObject): void;
  /** Does due work until `deadline` (performance.now() ms) or until nothing is due. */
  tick(now: number, deadline: number): void;
  stats(): Record<string, number>;
}

/**
 * Longest one slice of a tick may run, milliseconds. A tick is up to {@link SLICES_PER_TICK}
 * slices, each in its own turn of the event loop: actors still take at most about a third of
 * the loop, but the requests and watch frames waiting meanwhile are served between slices, not
 * after the whole tick.
 */
export const TICK_SLICE_MS = 5;
const SLICES_PER_TICK = 3;

const log = logger('sim-actors');

/** Runs `actor.tick` every `tickMs` until the returned stop function is called. */
export function startTicker(actor: FleetActor): () => void {
  let stopped = false;
  const slice = (left: number) => {
    if (stopped) return;
    const deadline = performance.now() + TICK_SLICE_MS;
    try {
      actor.tick(Date.now(), deadline);
    } catch (err) {
      log.error({ err, actor: actor.name }, 'actor tick failed');
    }
    // A slice that ran to its deadline left work due: the next one after the I/O now waiting.
    if (left > 1 && !stopped && performance.now() >= deadline) setImmediate(slice, left - 1).unref();
  };
  const timer = setInterval(() => slice(SLICES_PER_TICK), actor.tickMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/**
 * Time since an actor's previous tick, for work that accrues with time (a rate's credit): a
 * tick may run in several slices and a period may come late, so ticks are not counted.
 */
export class TickClock {
  private last: number | undefined;

  constructor(private readonly tickMs: number) {}

  /** Milliseconds since the previous call (one period on the first), at most ten periods. */
  elapsed(now: number): number {
    const ms = this.last === undefined ? this.tickMs : Math.max(0, now - this.last);
    this.last = now;
    return Math.min(ms, 10 * this.tickMs);
  }
}

/** Logs a store write that failed, once per actor and reason per minute, so a flood stays readable. */
export function createWriteErrorLog(actor: string): (err: unknown, what: string) => void {
  const last = new Map<string, number>();
  const l = logger(`sim-${actor}`);
  return (err, what) => {
    const reason = err instanceof Error ? (('reason' in err && typeof err.reason === 'string') ? err.reason : err.name) : 'unknown';
    const now = Date.now();
    if ((last.get(reason) ?? 0) + 60_000 > now) return;
    last.set(reason, now);
    l.warn({ err, what }, 'store write failed (repeats suppressed for a minute)');
  };
}

/** A write failure handler that counts into `counters.writeErrors` and logs as createWriteErrorLog does. */
export function countWriteErrors(actor: string, counters: { writeErrors: number }): (err: unknown, what: string) => void {
  const log = createWriteErrorLog(actor);
  return (err, what) => {
    counters.writeErrors++;
    log(err, what);
  };
}

/** A write that lost a race with another writer: the object is already there, or already gone. Expected; not an error. */
export function isLostRace(err: unknown): boolean {
  return err instanceof StoreError && (err.reason === 'AlreadyExists' || err.reason === 'NotFound');
}
