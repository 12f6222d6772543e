import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runInSlices } from '../../src/populator/run-in-slices.js';

const spin = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

test('a long pass yields to the event loop between slices and visits every item once, in order', async () => {
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
  // What the pass reports it cost: every item, in several slices, at least the 40 ms spun.
  assert.equal(stats.items, 400);
  assert.equal(stats.cancelled, false);
  assert.ok(stats.slices >= 3, `${stats.slices} slices`);
  assert.ok(stats.busyMs >= 40, `${stats.busyMs} ms busy`);
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
