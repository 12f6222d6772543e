import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrng } from '../../src/sim/actors/index.js';
import { PoissonArrivals } from '../../src/sim/actors/poisson-arrivals.js';

const FAR = Number.POSITIVE_INFINITY; // a tick deadline that never passes

/** Arrivals per tick over `ticks` ticks of 100 ms from `start`. */
function run(a: PoissonArrivals, rate: (tick: number) => number, ticks: number, start = 1_000_000): number[] {
  const out: number[] = [];
  for (let t = 0; t < ticks; t++) {
    let n = 0;
    a.take(start + t * 100, rate(t), FAR, () => n++);
    out.push(n);
  }
  return out;
}

test('poisson arrivals: about rate × time arrive, none while the rate is zero', () => {
  const a = new PoissonArrivals(createPrng(7), 100, 1000);
  const counts = run(a, (t) => (t < 600 ? 20 : 0), 700);
  const busy = counts.slice(0, 600).reduce((x, y) => x + y, 0);
  // 60 s at 20/s: 1200 expected; a Poisson count is within ±5 standard deviations (±173).
  assert.ok(Math.abs(busy - 1200) < 175, `${busy} arrivals`);
  assert.deepEqual(counts.slice(600), new Array(100).fill(0));
});

test('poisson arrivals: at most maxPerTick per tick, and a stall does not turn into a burst', () => {
  const a = new PoissonArrivals(createPrng(3), 100, 5);
  assert.ok(run(a, () => 1000, 20).every((n) => n <= 5));
  const b = new PoissonArrivals(createPrng(3), 100, 1_000_000);
  run(b, () => 10, 10);
  let afterStall = 0;
  b.take(1_000_000 + 60_000, 10, FAR, () => afterStall++); // a minute without ticks
  assert.ok(afterStall < 20, `${afterStall} arrivals right after the stall`);
});
