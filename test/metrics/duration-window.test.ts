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

test('a percentile read after a record or a reset sees the change (the sorted copy is not stale)', () => {
  const w = createDurationWindow({ capacity: 3 });
  for (const v of [5, 1, 3]) w.record(v);
  assert.equal(w.percentile(1), 5);
  assert.equal(w.percentile(0), 1);
  w.record(0); // replaces the 5
  assert.equal(w.percentile(1), 3);
  assert.equal(w.percentile(0), 0);
  w.reset();
  assert.equal(w.percentile(1), 0);
  w.record(7);
  assert.equal(w.percentile(0.5), 7);
  // The ring's order is not the sorted order: reading must not have sorted the samples in place.
  for (const v of [9, 8]) w.record(v);
  w.record(1); // replaces the oldest, 7
  assert.deepEqual([w.percentile(0), w.percentile(0.5), w.percentile(1)], [1, 8, 9]);
});
