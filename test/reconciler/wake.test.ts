// Wake-ups of the reconciler loop: new work brings the next pass forward, but never closer than
// the minimum gap (nor the duty factor times the last pass) after the previous pass, a burst of
// wake-ups is one pass, and with the gap at 0 the period is fixed as upstream's.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import type { Planner } from '../../src/kernel/planner.js';
import { createPlanner } from '../../src/kernel/planner.js';
import { createReconciler, WAKE_DUTY_FACTOR, type Reconciler } from '../../src/reconciler/reconciler.js';
import { quietReconcilerDeps, refusingExecutor } from './reconciler-fixture.js';

/** Timers may fire up to a millisecond before performance.now() says the delay has passed. */
const SLACK_MS = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Loop {
  reconciler: Reconciler;
  /** performance.now() at the start and end of every pass. */
  starts: number[];
  ends: number[];
  stop(): Promise<void>;
}

/** A reconciler over an empty world whose passes are recorded; each plan busy-waits `planMs`. */
function startLoop(o: { loopPeriodMs: number; wakeMinGapMs: number; planMs?: number }): Loop {
  const state = createWorldState();
  const real = createPlanner({ state, workers: 0 });
  const starts: number[] = [];
  const ends: number[] = [];
  const planner: Planner = {
    plan: async (now, opts) => {
      starts.push(performance.now());
      const until = performance.now() + (o.planMs ?? 0);
      while (performance.now() < until) { /* a pass of known length */ }
      return real.plan(now, opts);
    },
    get planning() { return real.planning; },
    workers: 0, shards: 1, poolPlans: 0, pool: undefined,
    close: () => real.close(),
  };
  const reconciler = createReconciler({
    ...quietReconcilerDeps(),
    state, planner, executor: refusingExecutor(),
    loopPeriodMs: o.loopPeriodMs, wakeMinGapMs: o.wakeMinGapMs,
  });
  const original = reconciler.passTime.record.bind(reconciler.passTime);
  reconciler.passTime.record = (ms) => {
    ends.push(performance.now());
    original(ms);
  };
  reconciler.start();
  return {
    reconciler, starts, ends,
    async stop() {
      await reconciler.stop();
      await real.close();
    },
  };
}

async function untilPasses(loop: Loop, n: number, timeoutMs = 5000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (loop.ends.length < n) {
    if (performance.now() > deadline) throw new Error(`only ${loop.ends.length} of ${n} passes in ${timeoutMs} ms`);
    await sleep(1);
  }
}

test('a wake-up starts the next pass after the minimum gap instead of the period', async () => {
  const loop = startLoop({ loopPeriodMs: 10_000, wakeMinGapMs: 30 });
  try {
    await untilPasses(loop, 1); // the first pass runs at start
    loop.reconciler.wake();
    await untilPasses(loop, 2, 2000);
    const gap = loop.starts[1] - loop.ends[0];
    assert.ok(gap >= 30 - SLACK_MS, `woken pass started ${gap.toFixed(1)} ms after the last ended, under the 30 ms gap`);
    assert.ok(gap < 2000, `woken pass waited ${gap.toFixed(0)} ms (the period is 10 s)`);
  } finally {
    await loop.stop();
  }
});

test('a burst of wake-ups is one pass', async () => {
  const loop = startLoop({ loopPeriodMs: 10_000, wakeMinGapMs: 20 });
  try {
    await untilPasses(loop, 1);
    for (let i = 0; i < 1000; i++) loop.reconciler.wake();
    await untilPasses(loop, 2, 2000);
    await sleep(200); // ten gaps: any extra pass of the burst would have run by now
    assert.equal(loop.ends.length, 2, `${loop.ends.length - 1} passes after one burst`);
  } finally {
    await loop.stop();
  }
});

test('a woken pass waits the duty factor times the last pass when that is longer than the gap', async () => {
  const loop = startLoop({ loopPeriodMs: 10_000, wakeMinGapMs: 1, planMs: 10 });
  try {
    await untilPasses(loop, 1);
    const lastMs = loop.ends[0] - loop.starts[0];
    assert.ok(lastMs >= 10 - SLACK_MS, `the first pass took ${lastMs.toFixed(1)} ms`);
    loop.reconciler.wake();
    await untilPasses(loop, 2, 2000);
    const gap = loop.starts[1] - loop.ends[0];
    assert.ok(gap >= WAKE_DUTY_FACTOR * lastMs - SLACK_MS, `woken ${gap.toFixed(1)} ms after a ${lastMs.toFixed(1)} ms pass`);
  } finally {
    await loop.stop();
  }
});

test('a wake-up during a pass shortens the wait after it', async () => {
  const loop = startLoop({ loopPeriodMs: 10_000, wakeMinGapMs: 20, planMs: 30 });
  try {
    // Wake while the first pass plans (its busy plan holds the thread, so wake from inside it).
    const plan = loop.reconciler.passTime.record;
    let woke = false;
    loop.reconciler.passTime.record = (ms) => {
      if (!woke) {
        woke = true;
        loop.reconciler.wake();
      }
      plan(ms);
    };
    await untilPasses(loop, 2, 3000);
    assert.ok(woke);
  } finally {
    await loop.stop();
  }
});

test('with the gap at 0 a wake-up changes nothing: passes come every period, as upstream', async () => {
  const loop = startLoop({ loopPeriodMs: 10_000, wakeMinGapMs: 0 });
  try {
    await untilPasses(loop, 1);
    loop.reconciler.wake();
    await sleep(300);
    assert.equal(loop.ends.length, 1, 'a pass ran before the period');
  } finally {
    await loop.stop();
  }
});

test('a wake-up after stop starts nothing', async () => {
  const loop = startLoop({ loopPeriodMs: 10_000, wakeMinGapMs: 5 });
  await untilPasses(loop, 1);
  await loop.stop();
  loop.reconciler.wake();
  await sleep(100);
  assert.equal(loop.ends.length, 1);
});
