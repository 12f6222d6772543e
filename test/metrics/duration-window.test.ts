import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDurationWindow } from '../../src/metrics/duration-window.js';

test('percentiles use nearest rank over the held samples', () => {
  const w = createDurationWindow({ capacity: 100 });
  assert.equal(w.percentile(0.5), 0);
  for (let i = 1; i <= 100; i++) w.record(i);
  assert.equal(w.percentile(0.5), 50);
  assert.equal(w.percentile(0.99), 99);
  assert.equal(w.percentile(1), 100);
  assert.equal(w.last(), 100);
});

test('the window keeps only the newest samples', () => {
  const w = createDurationWindow({ capacity: 4 });
  for (const v of [1000, 1000, 1000, 1000, 1, 2, 3, 4]) w.record(v);
  assert.equal(w.size(), 4);
  assert.equal(w.percentile(1), 4);
  w.reset();
  assert.equal(w.size(), 0);
});
