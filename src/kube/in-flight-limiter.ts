/**
 * A bound on the controller's requests in flight, with two priority lanes.
 *
 * Why: a token bucket alone (client-go's qps/burst) does not stop congestion collapse against
 * a slow API server. At cold start the controller starts tens of thousands of attaches at once;
 * without a bound they all queue inside the HTTP agent, where the per-request timeout already
 * runs, so most of them time out before they are sent and are retried, which loads the server
 * further. Here a request takes a slot before its timeout starts, and no more than `max` are on
 * the wire at once (the agent's socket count), so every sent request has the whole timeout.
 *
 * Lanes, each FIFO, each served only when the ones above are empty: `high` (node status writes,
 * which gate detaches, and VolumeAttachment deletes, each sent right after its detach's live
 * Node check so that the check's answer does not age in a queue), `normal` (VolumeAttachment
 * creates and reads, and those live Node checks: a detach's place in line), `low` (events:
 * informative, and as many as the attaches at a cold start).
 * `waiting()` is the backlog the reconciler reads to stop starting operations it cannot send;
 * `onDrained` tells it when that backlog has emptied, so it need not wait for its next period
 * to start more (reconciler.ts, Wake-ups).
 */
export type RequestPriority = 'high' | 'normal' | 'low';

export interface InFlightLimiter {
  /** Resolves with a release function once a slot is free; rejects if `signal` aborts first. */
  acquire(priority: RequestPriority, signal?: AbortSignal): Promise<() => void>;
  /** Requests waiting for a slot. */
  waiting(): number;
  /** Requests holding a slot. */
  inFlight(): number;
}

/**
 * The default bound: below the shared agent's 128 sockets (kube-config.ts), which the watches
 * and paged lists also use, so controller writes never queue inside the agent (a larger bound
 * raises the agent's cap with it: FleetKubeConfig.sizeAgentFor).
 */
export const DEFAULT_MAX_IN_FLIGHT = 96;

export interface InFlightLimiterOptions {
  /** Slots; no bound at all when ≤ 0 or not finite. */
  max: number;
  /**
   * Called when the last waiting request has got its slot (the backlog went from some to none).
   * Runs inside a release: it must not throw, and should only schedule work.
   */
  onDrained?: () => void;
}

export function createInFlightLimiter(opts: InFlightLimiterOptions): InFlightLimiter {
  return new Slots(Number.isFinite(opts.max) && opts.max > 0 ? Math.floor(opts.max) : Infinity, opts.onDrained);
}

interface Waiter {
  grant(release: () => void): void;
  cancelled: boolean;
}

/**
 * A FIFO over an array with a moving head: O(1) push and shift without Array#shift copies. A
 * shifted slot is cleared at once: the array outlives scavenges, and a granted waiter left in it
 * would keep its call's closures alive (and promoted) until the array is next compacted.
 */
class Fifo {
  private items: Array<Waiter | undefined> = [];
  private head = 0;
  live = 0;

  push(w: Waiter): void {
    this.items.push(w);
    this.live++;
  }

  /** The oldest waiter that was not cancelled, or undefined. */
  shift(): Waiter | undefined {
    while (this.head < this.items.length) {
      const w = this.items[this.head]!;
      this.items[this.head++] = undefined;
      if (this.head === this.items.length) {
        this.items.length = 0;
        this.head = 0;
      } else if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      if (!w.cancelled) {
        this.live--;
        return w;
      }
    }
    return undefined;
  }
}

class Slots implements InFlightLimiter {
  private used = 0;
  private readonly lanes = { high: new Fifo(), normal: new Fifo(), low: new Fifo() };

  constructor(private readonly max: number, private readonly onDrained: (() => void) | undefined) {}

  acquire(priority: RequestPriority, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.used < this.max) {
      this.used++;
      return Promise.resolve(this.releaser());
    }
    const lane = this.lanes[priority];
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        w.cancelled = true;
        lane.live--;
        reject(signal?.reason);
      };
      const w: Waiter = {
        cancelled: false,
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      lane.push(w);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  waiting(): number {
    return this.lanes.high.live + this.lanes.normal.live + this.lanes.low.live;
  }

  inFlight(): number {
    return this.used;
  }

  /** A release that frees its slot once: the slot passes straight to the next waiter. */
  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.lanes.high.shift() ?? this.lanes.normal.shift() ?? this.lanes.low.shift();
      if (!next) {
        this.used--;
        return;
      }
      next.grant(this.releaser());
      if (this.onDrained && this.waiting() === 0) this.onDrained();
    };
  }
}
