// Wake-ups of the reconciler loop: new work brings the next pass forward, but never closer than
// the minimum gap (nor the duty factor times the last pass) after the previous pass, a burst of
// wake-ups is one pass, and with the gap at 0 the period is fixed as upstream's.
//
// The loop's clock is the test's: its timers (setTimeout) and performance.now() are mocked, and
// time moves only when the test advances it, so every gap is exact and "no pass yet" is checked
// at a known time rather than after a sleep.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import type { Planner } from '../../src/kernel/planner.js';
import { createPlanner } from '../../src/kernel/planner.js';
import { createReconciler, WAKE_DUTY_FACTOR, type Reconciler } from '../../src/reconciler/reconciler.js';
import { quietReconcilerDeps, refusingExecutor } from './reconciler-fixture.js';

interface Loop {
  reconciler: Reconciler;
  /** The mocked performance.now() at the start and end of every pass. */
  starts: number[];
  ends: number[];
  /** Moves the mocked clock on by `ms`, firing the loop's timers that fall due, and lets the passes they start end. */
  advance(ms: number): Promise<void>;
  stop(): Promise<void>;
}

/** A reconciler over an empty world whose passes are recorded; each plan takes `planMs` of the mocked clock. */
async function startLoop(t: TestContext, o: { loopPeriodMs: number; wakeMinGapMs: number; planMs?: number }): Promise<Loop> {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  let planned = 0; // what the plans took: the clock moves on inside a pass
  const now = () => Date.now() + planned;
  t.mock.method(performance, 'now', now);
  const state = createWorldState();
  const real = createPlanner({ state, workers: 0 });
  const starts: number[] = [];
  const ends: number[] = [];
  const planner: Planner = {
    plan: async (at, opts) => {
      starts.push(now());
      planned += o.planMs ?? 0; // a pass of known length
      return real.plan(at, opts);
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
    ends.push(now());
    original(ms);
  };
  /** Lets a pass that a timer started run to its end (it awaits the plan: promises and I/O only). */
  const settle = async () => {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  };
  reconciler.start();
  const loop: Loop = {
    reconciler, starts, ends,
    async advance(ms) {
      t.mock.timers.tick(ms);
      await settle();
    },
    async stop() {
      await reconciler.stop();
      await real.close();
    },
  };
  await loop.advance(0); // the first pass runs at start
  assert.equal(ends.length, 1, 'the first pass ran at start');
  return loop;
}

test('a wake-up starts the next pass after the minimum gap instead of the period', async (t) => {
  const loop = await startLoop(t, { loopPeriodMs: 10_000, wakeMinGapMs: 30 });
  try {
    loop.reconciler.wake();
    await loop.advance(29);
    assert.equal(loop.ends.length, 1, 'a woken pass before the 30 ms gap');
    await loop.advance(1);
    assert.equal(loop.ends.length, 2, 'no woken pass at the 30 ms gap (the period is 10 s)');
    assert.equal(loop.starts[1] - loop.ends[0], 30);
  } finally {
    await loop.stop();
  }
});

test('a burst of wake-ups is one pass', async (t) => {
  const loop = await startLoop(t, { loopPeriodMs: 10_000, wakeMinGapMs: 20 });
  try {
    for (let i = 0; i < 1000; i++) loop.reconciler.wake();
    await loop.advance(20);
    assert.equal(loop.ends.length, 2);
    await loop.advance(9_999); // up to the next period: no other pass of the burst
    assert.equal(loop.ends.length, 2, `${loop.ends.length - 1} passes after one burst`);
  } finally {
    await loop.stop();
  }
});

test('a woken pass waits the duty factor times the last pass when that is longer than the gap', async (t) => {
  const loop = await startLoop(t, { loopPeriodMs: 10_000, wakeMinGapMs: 1, planMs: 10 });
  try {
    const lastMs = loop.ends[0] - loop.starts[0];
    assert.equal(lastMs, 10);
    const gap = WAKE_DUTY_FACTOR * lastMs;
    assert.ok(gap > 1, 'the duty factor, not the 1 ms gap, decides');
    loop.reconciler.wake();
    await loop.advance(gap - 1);
    assert.equal(loop.ends.length, 1, `woken before ${gap} ms after a ${lastMs} ms pass`);
    await loop.advance(1);
    assert.equal(loop.ends.length, 2);
    assert.equal(loop.starts[1] - loop.ends[0], gap);
  } finally {
    await loop.stop();
  }
});

test('a wake-up during a pass shortens the wait after it', async (t) => {
  const loop = await startLoop(t, { loopPeriodMs: 10_000, wakeMinGapMs: 20, planMs: 30 });
  try {
    // Wake while the second pass runs (from inside it: the first ran at start, before this hook).
    const plan = loop.reconciler.passTime.record;
    let woke = false;
    loop.reconciler.passTime.record = (ms) => {
      if (!woke) {
        woke = true;
        loop.reconciler.wake();
      }
      plan(ms);
    };
    await loop.advance(10_000); // the second pass, on the period
    assert.equal(loop.ends.length, 2);
    assert.ok(woke);
    const gap = Math.max(20, WAKE_DUTY_FACTOR * 30);
    await loop.advance(gap - 1);
    assert.equal(loop.ends.length, 2, `the pass after the wake-up came before ${gap} ms`);
    await loop.advance(1);
    assert.equal(loop.ends.length, 3, `no pass ${gap} ms after the woken one (the period is 10 s)`);
  } finally {
    await loop.stop();
  }
});

test('with the gap at 0 a wake-up changes nothing: passes come every period, as upstream', async (t) => {
  const loop = await startLoop(t, { loopPeriodMs: 10_000, wakeMinGapMs: 0 });
  try {
    loop.reconciler.wake();
    await loop.advance(9_999);
    assert.equal(loop.ends.length, 1, 'a pass ran before the period');
    await loop.advance(1);
    assert.equal(loop.ends.length, 2, 'the pass of the period');
  } finally {
    await loop.stop();
  }
});

test('a wake-up after stop starts nothing', async (t) => {
  const loop = await startLoop(t, { loopPeriodMs: 10_000, wakeMinGapMs: 5 });
  await loop.stop();
  loop.reconciler.wake();
  await loop.advance(20_000);
  assert.equal(loop.ends.length, 1);
});
