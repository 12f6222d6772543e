import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COARSE_EVERY, createHistory, type HistorySample } from '../../src/dashboard/history.js';

function sample(t: number, v: number): HistorySample {
  return { t, desired: v, attached: v, notConverged: v % 7, conflicts: 0, pending: v % 3, backoff: 0 };
}

describe('history', () => {
  it('downsamples a range to at most `points` buckets, each the maximum of its samples', () => {
    const h = createHistory();
    const t0 = 1_000_000;
    for (let i = 1; i <= 900; i++) h.record(sample(t0 + i * 1000, i));
    const now = t0 + 900_000;
    const w = h.window('15m', 90, now);
    assert.equal(w.stepMs, 10_000);
    assert.equal(w.t.length, 90);
    // Bucket k holds samples 10k+1 … 10k+10: the maximum is the last one.
    assert.deepEqual(w.series.desired.slice(0, 3), [10, 20, 30]);
    assert.deepEqual(w.series.notConverged.slice(0, 2), [6, 6]);
    assert.equal(w.t[0], t0 + 10_000);
    const full = h.window('15m', 2000, now);
    assert.equal(full.t.length, 900, 'never more points than samples');
    assert.deepEqual(h.latest(), sample(now, 900));
  });

  it('keeps an hour of 1 s samples and 30 s maxima for 6 h', () => {
    const h = createHistory();
    const n = 3 * 3600;
    for (let i = 1; i <= n; i++) h.record(sample(i * 1000, i));
    const now = n * 1000;
    const hour = h.window('1h', 3600, now);
    assert.equal(hour.t.length, 3600);
    assert.equal(hour.t[0], now - 3_599_000);
    const six = h.window('6h', 10_000, now);
    assert.equal(six.t.length, n / COARSE_EVERY, '3 h of 30 s samples');
    assert.equal(six.series.desired[0], COARSE_EVERY, 'each coarse sample is the maximum of its 30');
  });

  it('serves the annotations of the range', () => {
    const h = createHistory();
    h.annotate({ t: 10, kind: 'controller-start', text: 'controller started' });
    h.annotate({ t: 2_000_000, kind: 'forced-detach', text: 'forced detach (timeout) of v from n' });
    const w = h.window('15m', 10, 2_000_000);
    assert.deepEqual(w.annotations.map((a) => a.kind), ['forced-detach']);
  });
});
