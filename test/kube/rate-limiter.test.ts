import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRateLimiter } from '../../src/kube/rate-limiter.js';
import { createBackoff } from '../../src/kube/backoff.js';

describe('token bucket rate limiter', () => {
  it('lets a burst through, then serves the rest in call order at 1/qps spacing', async () => {
    let clock = 0;
    const limiter = createRateLimiter({ qps: 100, burst: 3, now: () => clock });
    const done: number[] = [];
    const waits = await Promise.all(Array.from({ length: 7 }, (_, i) => limiter.acquire().then((w) => (done.push(i), w))));
    assert.deepEqual(done, [0, 1, 2, 3, 4, 5, 6]);
    assert.deepEqual(waits.map((w) => Math.round(w)), [0, 0, 0, 10, 20, 30, 40]);
    assert.deepEqual(limiter.stats(), { acquired: 7, throttled: 4, waitedMs: 100 });
  });

  it('refills with time up to the burst size', async () => {
    let clock = 0;
    const limiter = createRateLimiter({ qps: 10, burst: 2, now: () => clock });
    await limiter.acquire();
    await limiter.acquire();
    clock += 10_000; // long idle: only `burst` tokens accumulate
    assert.deepEqual(await Promise.all([limiter.acquire(), limiter.acquire()]), [0, 0]);
    assert.ok((await limiter.acquire()) > 0);
  });

  it('is unlimited with qps <= 0 and rejects a waiting caller on abort', async () => {
    const free = createRateLimiter({ qps: 0, burst: 1 });
    assert.deepEqual(await Promise.all([free.acquire(), free.acquire(), free.acquire()]), [0, 0, 0]);
    const slow = createRateLimiter({ qps: 1, burst: 1 });
    await slow.acquire();
    const ac = new AbortController();
    const p = slow.acquire(ac.signal);
    ac.abort(new Error('stop'));
    await assert.rejects(p, /stop/);
  });

  it('cancelWaiting ends every caller still waiting for its token, and only those', async (t) => {
    // The token timers are mocked and never advanced: a caller can only end by being cancelled.
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const clock = 0;
    const slow = createRateLimiter({ qps: 1, burst: 1, now: () => clock });
    await slow.acquire();
    const ac = new AbortController();
    const waiting = [slow.acquire(), slow.acquire(ac.signal), slow.acquire()];
    ac.abort(new Error('aborted first'));
    await assert.rejects(waiting[1]!, /aborted first/);
    assert.equal(slow.cancelWaiting(new Error('stopping')), 2);
    await assert.rejects(waiting[0]!, /stopping/);
    await assert.rejects(waiting[2]!, /stopping/);
    assert.equal(slow.cancelWaiting(new Error('again')), 0);
  });

  it('rejects nonsense options', () => {
    assert.throws(() => createRateLimiter({ qps: 5, burst: 0 }), RangeError);
    assert.throws(() => createRateLimiter({ qps: Number.NaN, burst: 1 }), RangeError);
  });
});

describe('jittered exponential backoff', () => {
  it('doubles up to the cap within ±50% jitter and resets', () => {
    const seq = [0, 0.999, 0.5, 0.5, 0.5, 0.5];
    let i = 0;
    const b = createBackoff({ initialMs: 200, maxMs: 1000, random: () => seq[i++ % seq.length] as number });
    assert.deepEqual([b.next(), b.next(), b.next(), b.next(), b.next()].map(Math.round), [100, 600, 800, 1000, 1000]);
    b.reset();
    assert.equal(b.next(), 200);
  });
});
