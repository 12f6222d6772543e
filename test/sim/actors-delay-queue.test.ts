import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DelayQueue } from '../../src/sim/actors/delay-queue.js';
import { createPrng } from '../../src/sim/actors/prng.js';

test('delay queue: pops each key once, at its earliest schedule (or its replacement), in time order', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 1000 }), fc.boolean()), { maxLength: 200 }), (ops) => {
      const q = new DelayQueue<number>();
      const model = new Map<number, number>();
      for (const [key, at, replace] of ops) {
        q.add(key, at, replace);
        const cur = model.get(key);
        if (cur === undefined || replace || at < cur) model.set(key, at);
      }
      const popped: Array<[number, number]> = [];
      for (let now = 0; now <= 1000; now += 50) for (const key of q.popDue(now, 3)) popped.push([key, now]);
      for (const key of q.popDue(Infinity, Infinity)) popped.push([key, Infinity]);
      assert.deepEqual(popped.map(([k]) => k).sort((a, b) => a - b), [...model.keys()].sort((a, b) => a - b));
      for (const [key, now] of popped) assert.ok(model.get(key) as number <= now, 'never popped early');
      assert.equal(q.size, 0);
    }),
  );
});

test('prng: a seed replays the same stream, forks are independent of the parent', () => {
  const a = createPrng(9);
  const b = createPrng(9);
  const sa = Array.from({ length: 50 }, () => a.u32());
  assert.deepEqual(Array.from({ length: 50 }, () => b.u32()), sa);
  assert.notDeepEqual(Array.from({ length: 50 }, () => createPrng(10).u32()), sa);
  const take = (p: ReturnType<typeof createPrng>) => Array.from({ length: 10 }, () => p.u32());
  const drawn = createPrng(9);
  drawn.u32();
  assert.deepEqual(take(drawn.fork('x')), take(createPrng(9).fork('x')), 'a fork does not depend on what the parent drew');
  assert.notDeepEqual(take(createPrng(9).fork('x')), take(createPrng(9).fork('y')));
  for (let i = 0; i < 1000; i++) {
    const v = a.int(7);
    assert.ok(Number.isInteger(v) && v >= 0 && v < 7);
  }
});
