/**
 * The arrivals of a Poisson process at a rate that may change at any time, taken a tick at a
 * time: what the node fault actors (failures, flaps, deletions) share. After a stall, or
 * while the rate is zero, the process restarts from now instead of catching up in a burst.
 */
import type { Prng } from './prng.js';

export class PoissonArrivals {
  private nextAt = 0;

  constructor(
    private readonly prng: Prng,
    /** The caller's tick period: falling ten ticks behind counts as a stall. */
    private readonly tickMs: number,
    /** Arrivals handled per tick at most; the rest wait for the next tick. */
    private readonly maxPerTick: number,
  ) {}

  /**
   * Calls `arrive` once per arrival due by `now` (epoch ms) at `ratePerSecond`, while the
   * tick's `deadline` (performance.now() ms) is not past. Each inter-arrival time is drawn
   * before its `arrive` runs, so a seeded run draws in the same order whatever `arrive` does.
   */
  take(now: number, ratePerSecond: number, deadline: number, arrive: () => void): void {
    if (ratePerSecond <= 0) {
      this.nextAt = 0;
      return;
    }
    const mean = 1000 / ratePerSecond;
    if (this.nextAt === 0 || this.nextAt < now - 10 * this.tickMs) this.nextAt = now + this.prng.exponential(mean);
    for (let n = 0; this.nextAt <= now && n < this.maxPerTick && performance.now() < deadline; n++) {
      this.nextAt += this.prng.exponential(mean);
      arrive();
    }
  }
}
