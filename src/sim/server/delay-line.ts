/**
 * A delay line: items go in with a lag and come out in the order they went in, each no sooner
 * than its lag after it was pushed and never before the items pushed earlier (so a lag that
 * shrinks, or drops to 0, takes effect once what was queued under the longer one is out).
 * One timer per line, armed for the oldest item. The watch stream of a lagging client
 * (watch-stream.ts) delays its frames through one.
 */
import { MAX_TIMER_MS } from '../../cli/flags.js';

/** Time and timers of a delay line; tests pass a controlled one. */
export interface LagClock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realLagClock: LagClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};


interface Entry<T> {
  due: number;
  item: T;
}

export class DelayLine<T> {
  private entries: Array<Entry<T> | undefined> = [];
  /** Index of the oldest item still queued. */
  private head = 0;
  private lastDue = -Infinity;
  private timer: unknown;
  /** Bumped by `clear`, so that a release that clears the line stops the loop releasing. */
  private generation = 0;

  constructor(
    private readonly clock: LagClock,
    private readonly release: (item: T) => void,
  ) {}

  /** Items queued. */
  get size(): number {
    return this.entries.length - this.head;
  }

  /** Queues `item` to come out `lagMs` from now, or right after the items queued before it if they come out later. */
  push(item: T, lagMs: number): void {
    const due = Math.max(this.clock.now() + Math.max(0, lagMs), this.lastDue);
    this.lastDue = due;
    this.entries.push({ due, item });
    if (this.timer === undefined) this.arm(due - this.clock.now());
  }

  /** Drops every queued item and stops the timer. */
  clear(): void {
    this.generation++;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.entries = [];
    this.head = 0;
    this.lastDue = -Infinity;
  }

  private arm(ms: number): void {
    // Node fires a longer timer after 1 ms: a longer wait is taken in steps.
    this.timer = this.clock.setTimeout(() => this.fire(), Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(ms))));
  }

  /** Releases every item that is due; a timer that fired early is armed again for the rest. */
  private fire(): void {
    this.timer = undefined;
    const gen = this.generation;
    const now = this.clock.now();
    while (this.head < this.entries.length) {
      const e = this.entries[this.head] as Entry<T>;
      if (e.due > now) break;
      this.entries[this.head++] = undefined;
      this.release(e.item);
      if (gen !== this.generation) return;
    }
    if (this.head === this.entries.length) {
      this.entries = [];
      this.head = 0;
      return;
    }
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    if (this.timer === undefined) this.arm(Math.max(1, (this.entries[this.head] as Entry<T>).due - now));
  }
}
