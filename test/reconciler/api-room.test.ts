// Room wake-ups: when the API backlog empties, a loop whose last pass left operations unstarted
// for that backlog (admission) starts the next pass after the minimum gap instead of the period;
// a loop with nothing left over, or with wake-ups off, keeps its period.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { createPlanner } from '../../src/kernel/planner.js';
import { createReconciler, type Reconciler } from '../../src/reconciler/reconciler.js';
import { quietReconcilerDeps, refusingExecutor } from './reconciler-fixture.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Timers may fire up to a millisecond before performance.now() says the delay has passed. */
const SLACK_MS = 2;

interface Loop {
  reconciler: Reconciler;
  /** Attaches started per pass, and the start and end of each pass (performance.now()). */
  startedPerPass: number[];
  starts: number[];
  ends: number[];
  /** The API backlog the reconciler reads: each started attach adds one. */
  backlog: { waiting: number };
  stop(): Promise<void>;
}

/** `candidates` desired pairs; the loop's period is 10 s, so a second pass soon is a wake-up. */
function startLoop(o: { candidates: number; maxApiBacklog: number; wakeMinGapMs: number }): Loop {
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
  return {
    reconciler, startedPerPass, starts, ends, backlog,
    async stop() {
      await reconciler.stop();
      await planner.close();
    },
  };
}

async function untilPasses(loop: Loop, n: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (loop.ends.length < n) {
    if (performance.now() > deadline) throw new Error(`only ${loop.ends.length} of ${n} passes in ${timeoutMs} ms`);
    await sleep(1);
  }
}

test('a pass cut short by the API backlog is followed, once the backlog empties, by one after the gap', async () => {
  const loop = startLoop({ candidates: 100, maxApiBacklog: 10, wakeMinGapMs: 30 });
  try {
    await untilPasses(loop, 1, 2000);
    assert.equal(loop.startedPerPass[0], 10, 'the first pass starts as many as the backlog bound allows');
    loop.backlog.waiting = 0; // the API server took them
    loop.reconciler.apiRoom();
    await untilPasses(loop, 2, 2000);
    const gap = loop.starts[1] - loop.ends[0];
    assert.ok(gap >= 30 - SLACK_MS, `the next pass started ${gap.toFixed(1)} ms after the last, under the 30 ms gap`);
    assert.equal(loop.startedPerPass[1], 10);
    // A burst of room reports is one pass, and a report while the backlog is still full changes
    // nothing for the next one either: its budget is what the backlog leaves.
    loop.backlog.waiting = 0;
    for (let i = 0; i < 100; i++) loop.reconciler.apiRoom();
    await untilPasses(loop, 3, 2000);
    await sleep(150);
    assert.equal(loop.ends.length, 3, `${loop.ends.length - 2} passes after one burst of room reports`);
  } finally {
    await loop.stop();
  }
});

test('room in the backlog does not wake a loop whose last pass started everything it planned', async () => {
  const loop = startLoop({ candidates: 5, maxApiBacklog: 10, wakeMinGapMs: 5 });
  try {
    await untilPasses(loop, 1, 2000);
    assert.equal(loop.startedPerPass[0], 5);
    loop.backlog.waiting = 0;
    loop.reconciler.apiRoom();
    await sleep(200);
    assert.equal(loop.ends.length, 1, 'a pass ran before the period with nothing left to start');
  } finally {
    await loop.stop();
  }
});

test('with wake-ups off (gap 0) room in the backlog waits for the period, as upstream', async () => {
  const loop = startLoop({ candidates: 100, maxApiBacklog: 10, wakeMinGapMs: 0 });
  try {
    await untilPasses(loop, 1, 2000);
    loop.backlog.waiting = 0;
    loop.reconciler.apiRoom();
    await sleep(200);
    assert.equal(loop.ends.length, 1, 'a pass ran before the period');
  } finally {
    await loop.stop();
  }
});
