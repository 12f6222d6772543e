/**
 * A clock the test moves: node:test's mocked `setTimeout` and `Date`, with `performance.now()`
 * reading the same mocked time (node:test does not mock it) unless `performanceNow` is false
 * (the generated client's HTTP stack stalls on a frozen performance.now()). Timers fire only on
 * `tick`, so a wait is measured exactly on this clock, and "not yet" is checked at a known time
 * instead of after a sleep. Everything is restored when the test ends.
 *
 * I/O still runs on its own: `settle` lets what a fired timer started go on until `cond` holds,
 * with a real deadline that fails the test (it only stops a hung wait).
 */
import type { TestContext } from 'node:test';

export interface MockClock {
  /** Milliseconds since the clock was mocked. */
  now(): number;
  /** Moves the clock on by `ms`, firing the timers that fall due (synchronously). */
  tick(ms: number): void;
}

export function mockClock(t: TestContext, o: { performanceNow?: boolean } = {}): MockClock {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  if (o.performanceNow ?? true) t.mock.method(performance, 'now', () => Date.now());
  return { now: () => Date.now(), tick: (ms) => t.mock.timers.tick(ms) };
}

/** Turns of the event loop (setImmediate is not mocked): promises and I/O callbacks that are ready run. */
export async function turns(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
}

/** Waits, over turns of the event loop, until `cond` holds; fails after `timeoutMs` of real time. */
export async function settle(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = realNow() + timeoutMs;
  while (!cond()) {
    if (realNow() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/** The process clock, whether or not performance.now() is mocked. */
function realNow(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}
