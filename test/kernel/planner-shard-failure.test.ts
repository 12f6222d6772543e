// A shard whose task fails in the pool (a WASM trap, a worker that died) fails the plan, but only
// once every other shard has settled: until then the state stays closed to mutations, since the
// other shards still write pair flags and timers into its tables; and after the failure they
// dispatch no further task.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { createPlanner } from '../../src/kernel/planner.js';

const OPTS = { maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false };

it('a failed shard ends the plan only after the others settled, and they send no task after it', { timeout: 20_000 }, async () => {
  const state = createWorldState();
  for (let n = 0; n < 20; n++) {
    const node = state.internNode(`n${n}`);
    state.setNodeManaged(node);
    state.setNodeHealthy(node, true);
    state.setVolumesInUse(node, []);
    // Attached, unmounted and not wanted: each pair is a detach, so a small output room fills
    // again and again and every shard needs many tasks.
    for (let v = 0; v < 20; v++) state.markAttached(state.internVolume(`csi/d^n${n}-v${v}`), node);
  }
  const planner = createPlanner({ state, workers: 2, shards: 2, build: 'debug', outputRecords: 4, inlineBelowPairs: 0 });
  const pool = planner.pool!;
  const run = pool.run.bind(pool) as (name: string, input: { desc: number }) => Promise<{ status: number }>;
  let failing: number | undefined;
  let inFlight = 0;
  let settledAfterFailure = 0;
  let failedAt = -1;
  let tasks = 0;
  (pool as unknown as { run: typeof run }).run = (name, input) => {
    tasks++;
    failing ??= input.desc; // the first shard to run fails on its third task
    inFlight++;
    const p = input.desc === failing && tasks >= 3
      ? Promise.reject(new Error('injected: worker died'))
      : new Promise((r) => setTimeout(r, 5)).then(() => run(name, input));
    return p.finally(() => {
      inFlight--;
      if (failedAt >= 0) settledAfterFailure++;
    }).then((out) => out, (err: unknown) => {
      if (failedAt < 0) failedAt = tasks;
      throw err;
    });
  };
  try {
    let ended = -1;
    const planning = planner.plan(1_000, OPTS);
    state.whenIdle(() => (ended = inFlight)); // queued behind the plan: runs once it lets the state go
    await assert.rejects(planning, /injected: worker died/);
    assert.equal(ended, 0, 'the state reopened while a shard task was still running');
    assert.equal(inFlight, 0);
    const sentBefore = tasks;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(tasks, sentBefore, 'tasks dispatched after the plan failed');
    // The next plan runs normally.
    (pool as unknown as { run: typeof run }).run = run;
    const plan = await planner.plan(1_000, OPTS);
    assert.equal(plan.detaches.length, 400);
  } finally {
    await planner.close();
  }
});

it('a pool plan past its deadline restarts the workers and fails once every shard settled and the restart ended; the next plan runs', { timeout: 10_000 }, async () => {
  const state = createWorldState();
  const node = state.internNode('n0');
  state.setNodeManaged(node);
  state.setNodeHealthy(node, true);
  state.setVolumesInUse(node, []);
  for (let v = 0; v < 50; v++) state.markAttached(state.internVolume(`csi/d^v${v}`), node);
  // The deadline runs on a clock the test moves: a cold worker start on a loaded machine cannot
  // pass it, and the hung plan passes it only when the test says so. One real plan first, so
  // that the workers have started before the hung one.
  let clock = 0;
  const planner = createPlanner({ state, workers: 2, shards: 2, build: 'debug', inlineBelowPairs: 0, planDeadlineMs: 1000, monotonicNow: () => clock });
  const pool = planner.pool!;
  assert.equal((await planner.plan(1_000, OPTS)).detaches.length, 50, 'the warm-up plan runs');
  const run = pool.run.bind(pool) as (name: string, input: { desc: number }) => Promise<{ status: number }>;
  // A kernel call that never returns, as a hung worker's; the restart rejects it, as Piscina
  // rejects the tasks of a destroyed pool (kernel-pool.test.ts restarts a real pool).
  let hung: Array<(err: Error) => void> = [];
  let restarts = 0;
  let restartEnded = false;
  (pool as unknown as { run: typeof run }).run = () => new Promise((_, reject) => hung.push(reject));
  (pool as unknown as { restart: () => Promise<void> }).restart = async () => {
    restarts++;
    for (const reject of hung) reject(new Error('Terminating worker thread'));
    hung = [];
    await new Promise((r) => setTimeout(r, 50)); // the threads exit a moment after their tasks reject
    restartEnded = true;
  };
  try {
    let reopenedAfterRestart: boolean | undefined;
    const planning = planner.plan(1_000, OPTS);
    state.whenIdle(() => (reopenedAfterRestart = restartEnded)); // queued behind the plan
    await new Promise((r) => setTimeout(r, 300)); // the watchdog looks every 250 ms: no restart yet
    assert.equal(restarts, 0, 'nothing is abandoned before the deadline');
    clock += 1001;
    await assert.rejects(planning, /exceeded its deadline of 1000 ms/);
    assert.equal(restarts, 1);
    assert.equal(reopenedAfterRestart, true, 'the state reopened only once the restart had ended');
    (pool as unknown as { run: typeof run }).run = run;
    const plan = await planner.plan(1_000, OPTS);
    assert.equal(plan.detaches.length, 50, 'the next plan runs');
  } finally {
    await planner.close();
  }
});
