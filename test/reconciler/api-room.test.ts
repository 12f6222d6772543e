// Room wake-ups: when the API backlog empties, a loop whose last pass left operations unstarted
// for that backlog (admission) starts the next pass after the minimum gap instead of the period;
// a loop with nothing left over, or with wake-ups off, keeps its period.
//
// The loop's clock is the test's (mocked setTimeout and performance.now()): time moves only when
// the test advances it, so a gap is exact and "no pass yet" is checked at a known time.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { createPlanner } from '../../src/kernel/planner.js';
import { createReconciler, type Reconciler } from '../../src/reconciler/reconciler.js';
import { quietReconcilerDeps, refusingExecutor } from './reconciler-fixture.js';

interface Loop {
  reconciler: Reconciler;
  /** Attaches started per pass, and the start and end of each pass (mocked performance.now()). */
  startedPerPass: number[];
  starts: number[];
  ends: number[];
  /** The API backlog the reconciler reads: each started attach adds one. */
  backlog: { waiting: number };
  /** Moves the mocked clock on by `ms`, firing the loop's timers that fall due, and lets the passes they start end. */
  advance(ms: number): Promise<void>;
  stop(): Promise<void>;
}

/** `candidates` desired pairs; the loop's period is 10 s, so a second pass soon is a wake-up. */
async function startLoop(t: TestContext, o: { candidates: number; maxApiBacklog: number; wakeMinGapMs: number }): Promise<Loop> {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
  t.mock.method(performance, 'now', () => Date.now());
  const state = createWorldState();
  const node = state.internNode('node-0');
  state.setNodeManaged(node);
  for (let i = 0; i < o.candidates; i++) state.addDesiredPod(state.internVolume(`v${i}`), node, `p${i}`);
  const backlog = { waiting: 0 };
  const startedPerPass: number[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let started = 0;
  const executor = refusingExecutor({
    startAttach(volume, n) {
      const r = state.tryStartOperation(volume, n, 'attach', 0);
      if (r === 'started') {
        started++;
        backlog.waiting++;
      }
      return r;
    },
  });
  const planner = createPlanner({ state, workers: 0 });
  const reconciler = createReconciler({
    ...quietReconcilerDeps(),
    state, planner, executor,
    apiBacklog: () => backlog.waiting,
    maxApiBacklog: o.maxApiBacklog,
    loopPeriodMs: 10_000, wakeMinGapMs: o.wakeMinGapMs,
  });
  const record = reconciler.passTime.record.bind(reconciler.passTime);
  reconciler.passTime.record = (ms) => {
    ends.push(performance.now());
    starts.push(performance.now() - ms);
    startedPerPass.push(started);
    started = 0;
    record(ms);
  };
  reconciler.start();
  const loop: Loop = {
    reconciler, startedPerPass, starts, ends, backlog,
    async advance(ms) {
      t.mock.timers.tick(ms);
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    },
    async stop() {
      await reconciler.stop();
      await planner.close();
    },
  };
  await loop.advance(0); // the first pass runs at start
  assert.equal(ends.length, 1, 'the first pass ran at start');
  return loop;
}

test('a pass cut short by the API backlog is followed, once the backlog empties, by one after the gap', async (t) => {
  const loop = await startLoop(t, { candidates: 100, maxApiBacklog: 10, wakeMinGapMs: 30 });
  try {
    assert.equal(loop.startedPerPass[0], 10, 'the first pass starts as many as the backlog bound allows');
    loop.backlog.waiting = 0; // the API server took them
    loop.reconciler.apiRoom();
    await loop.advance(29);
    assert.equal(loop.ends.length, 1, 'the next pass came before the 30 ms gap');
    await loop.advance(1);
    assert.equal(loop.ends.length, 2, 'no pass at the 30 ms gap (the period is 10 s)');
    assert.equal(loop.starts[1] - loop.ends[0], 30);
    assert.equal(loop.startedPerPass[1], 10);
    // A burst of room reports is one pass, and a report while the backlog is still full changes
    // nothing for the next one either: its budget is what the backlog leaves.
    loop.backlog.waiting = 0;
    for (let i = 0; i < 100; i++) loop.reconciler.apiRoom();
    await loop.advance(30);
    assert.equal(loop.ends.length, 3);
    await loop.advance(9_999); // up to the next period
    assert.equal(loop.ends.length, 3, `${loop.ends.length - 2} passes after one burst of room reports`);
  } finally {
    await loop.stop();
  }
});

test('room in the backlog does not wake a loop whose last pass started everything it planned', async (t) => {
  const loop = await startLoop(t, { candidates: 5, maxApiBacklog: 10, wakeMinGapMs: 5 });
  try {
    assert.equal(loop.startedPerPass[0], 5);
    loop.backlog.waiting = 0;
    loop.reconciler.apiRoom();
    await loop.advance(9_999);
    assert.equal(loop.ends.length, 1, 'a pass ran before the period with nothing left to start');
    await loop.advance(1);
    assert.equal(loop.ends.length, 2, 'the pass of the period');
  } finally {
    await loop.stop();
  }
});

test('with wake-ups off (gap 0) room in the backlog waits for the period, as upstream', async (t) => {
  const loop = await startLoop(t, { candidates: 100, maxApiBacklog: 10, wakeMinGapMs: 0 });
  try {
    loop.backlog.waiting = 0;
    loop.reconciler.apiRoom();
    await loop.advance(9_999);
    assert.equal(loop.ends.length, 1, 'a pass ran before the period');
    await loop.advance(1);
    assert.equal(loop.ends.length, 2, 'the pass of the period');
  } finally {
    await loop.stop();
  }
});
