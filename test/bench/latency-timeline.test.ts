/**
 * The e2e bench's account of where a latency tail comes from: per-second buckets of the samples
 * by start time, and how much of the tail a few seconds hold.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { latencyTimeline, tailShare, type LatencySample } from '../../bench/lib/latency-timeline.js';

/** `perSecond` samples in each of `seconds` seconds from t0 = 1000, latency from `ms(second, i)`. */
function window(seconds: number, perSecond: number, ms: (s: number, i: number) => number): LatencySample[] {
  const out: LatencySample[] = [];
  for (let s = 0; s < seconds; s++) for (let i = 0; i < perSecond; i++) out.push({ t: 1000 + s * 1000 + (i * 1000) / perSecond, ms: ms(s, i) });
  return out;
}

test('the timeline buckets samples by start second, with count, p50, p99 and max, empty seconds kept', () => {
  const samples = window(3, 100, (s, i) => (s === 1 ? 500 + i : i));
  samples.push({ t: 1000 + 4500, ms: 7 }, { t: 999, ms: 1e6 }); // one in second 4 (3 empty), one before t0 (left out)
  const tl = latencyTimeline(samples, 1000);
  assert.deepEqual(tl.map((b) => b.at_s), [0, 1, 2, 3, 4]);
  assert.deepEqual(tl.map((b) => b.n), [100, 100, 100, 0, 1]);
  assert.deepEqual(tl[0], { at_s: 0, n: 100, p50_ms: 49, p99_ms: 98, max_ms: 99 });
  assert.deepEqual(tl[1], { at_s: 1, n: 100, p50_ms: 549, p99_ms: 598, max_ms: 599 });
  assert.deepEqual(tl[3], { at_s: 3, n: 0, p50_ms: 0, p99_ms: 0, max_ms: 0 });
  assert.equal(tl[4]!.max_ms, 7);
});

test('the tail share tells a few stalls from latency spread over the window', () => {
  // A stall: seconds 10 and 11 of 60 hold every sample above 200 ms.
  const stall = window(60, 50, (s) => (s === 10 || s === 11 ? 900 : 40));
  const a = tailShare(stall, 1000, 200, 3);
  assert.equal(a.over, 100);
  assert.equal(a.in_worst_buckets, 1);
  assert.deepEqual(a.worst_at_s.slice(0, 2), [10, 11]);
  // Spread: one slow sample in every second.
  const spread = window(60, 50, (_, i) => (i === 0 ? 900 : 40));
  const b = tailShare(spread, 1000, 200, 3);
  assert.equal(b.over, 60);
  assert.equal(b.in_worst_buckets, 0.05);
  assert.deepEqual(tailShare([], 1000, 200), { over: 0, in_worst_buckets: 0, worst_at_s: [] });
});
