import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { runInSlices } from '../../src/populator/run-in-slices.js';

/**
 * The pass's clock (performance.now()) is the test's: `spin(ms)` is an item that takes `ms` of
 * it, so slices, their cost and the rests after them are exact.
 */
function mockedSpin(t: TestContext): (ms: number) => void {
  let now = 0;
  t.mock.method(performance, 'now', () => now);
  return (ms) => {
    now += ms;
  };
}

test('a long pass yields to the event loop between slices and visits every item once, in order', async (t) => {
  const spin = mockedSpin(t);
  const seen: number[] = [];
  const between: number[] = [];
  let ticking = true;
  const tick = () => {
    between.push(seen.length);
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const stats = await runInSlices(Array.from({ length: 400 }, (_, i) => i).values(), (i) => {
    spin(0.1);
    seen.push(i);
  }, { whenIdle: (fn) => fn(), budgetMs: 2 });
  ticking = false;
  // What the pass reports it cost: every item, in several slices (the clock is read before every
  // 64th item, so 63 items of 0.1 ms overrun the 2 ms budget: 7 slices), the 40 ms spun.
  assert.equal(stats.items, 400);
  assert.equal(stats.cancelled, false);
  assert.equal(stats.slices, 7);
  assert.ok(Math.abs(stats.busyMs - 40) < 1e-9, `${stats.busyMs} ms busy`);
  assert.deepEqual(seen, Array.from({ length: 400 }, (_, i) => i));
  const inside = new Set(between.filter((n) => n > 0 && n < 400));
  assert.ok(inside.size >= 3, `other work ran between slices (seen at ${[...inside].join(',')})`);
});

test('slices run only inside whenIdle, and a cancelled pass stops', async () => {
  const deferred: Array<() => void> = [];
  const seen: number[] = [];
  let cancel = false;
  const pass = runInSlices([1, 2, 3].values(), (i) => seen.push(i), { whenIdle: (fn) => deferred.push(fn), cancelled: () => cancel });
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(seen, [], 'nothing ran while the state was busy');
  deferred.shift()?.();
  await pass;
  assert.deepEqual(seen, [1, 2, 3]);
  cancel = true;
  const none: number[] = [];
  await runInSlices([1].values(), (i) => none.push(i), { whenIdle: (fn) => fn(), cancelled: () => cancel });
  assert.deepEqual(none, []);
});

test('a paced pass rests after each slice in proportion to it, so it holds at most its duty of the thread', async (t) => {
  const spin = mockedSpin(t);
  const rests: number[] = [];
  const sleep = (ms: number) => {
    rests.push(ms);
    return new Promise<void>((r) => setImmediate(r));
  };
  const stats = await runInSlices(Array.from({ length: 200 }, (_, i) => i).values(), () => spin(0.1), { whenIdle: (fn) => fn(), budgetMs: 2, duty: 0.25, sleep });
  assert.equal(stats.items, 200);
  // Slices of 63 items (6.3 ms: the clock is read before every 64th), then the last 11 (1.1 ms).
  assert.equal(stats.slices, 4);
  // One rest before every slice but the first, three times the slice before it (duty 1/4); none after the last.
  assert.deepEqual(rests.map((r) => r.toFixed(6)), [18.9, 18.9, 18.9].map((r) => r.toFixed(6)));
  assert.ok(Math.abs(stats.busyMs - 20) < 1e-9, `${stats.busyMs} ms busy`);
  // Unpaced (duty 1): no rests; a duty outside (0, 1] is refused.
  rests.length = 0;
  await runInSlices([1, 2, 3].values(), () => spin(1), { whenIdle: (fn) => fn(), budgetMs: 0.5, duty: 1, sleep });
  assert.deepEqual(rests, []);
  await assert.rejects(runInSlices([1].values(), () => {}, { whenIdle: (fn) => fn(), duty: 0 }), RangeError);
});
