import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ConfigurationOptions, HttpInfo } from '@kubernetes/client-node';
import { createInFlightLimiter } from '../../src/kube/in-flight-limiter.js';
import { createRateLimiter } from '../../src/kube/rate-limiter.js';
import { createRequestRunner } from '../../src/kube/request-runner.js';
import type { RequestReport } from '../../src/kube/request-hook.js';
import { mockClock } from '../support/mock-clock.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('in-flight limiter', () => {
  it('holds requests beyond the bound and hands each freed slot to the next waiter', async () => {
    const lim = createInFlightLimiter({ max: 2 });
    const order: string[] = [];
    const a = await lim.acquire('normal');
    const b = await lim.acquire('normal');
    const c = lim.acquire('normal').then((r) => (order.push('c'), r));
    const d = lim.acquire('normal').then((r) => (order.push('d'), r));
    await tick();
    assert.deepEqual([lim.inFlight(), lim.waiting(), order.length], [2, 2, 0]);
    a();
    a(); // a second release of the same slot frees nothing more
    const rc = await c;
    await tick();
    assert.deepEqual(order, ['c'], 'one release, one grant');
    assert.deepEqual([lim.inFlight(), lim.waiting()], [2, 1]);
    b();
    const rd = await d;
    rc();
    rd();
    assert.deepEqual([lim.inFlight(), lim.waiting()], [0, 0]);
  });

  it('serves high, then normal, then low waiters, each lane in order', async () => {
    const lim = createInFlightLimiter({ max: 1 });
    const first = await lim.acquire('normal');
    const order: string[] = [];
    const wait = (p: 'high' | 'normal' | 'low', name: string) => lim.acquire(p).then((release) => (order.push(name), release()));
    const all = [wait('low', 'l1'), wait('normal', 'n1'), wait('normal', 'n2'), wait('high', 'h1'), wait('low', 'l2'), wait('high', 'h2')];
    await tick();
    first();
    await Promise.all(all);
    assert.deepEqual(order, ['h1', 'h2', 'n1', 'n2', 'l1', 'l2']);
    assert.equal(lim.inFlight(), 0);
  });

  it('drops an aborted waiter without granting it a slot', async () => {
    const lim = createInFlightLimiter({ max: 1 });
    const held = await lim.acquire('normal');
    const ac = new AbortController();
    const aborted = lim.acquire('high', ac.signal);
    const next = lim.acquire('normal');
    ac.abort(new Error('gone'));
    await assert.rejects(aborted, /gone/);
    assert.equal(lim.waiting(), 1);
    held();
    (await next)();
    assert.deepEqual([lim.inFlight(), lim.waiting()], [0, 0]);
    await assert.rejects(lim.acquire('normal', AbortSignal.abort(new Error('already'))), /already/);
  });

  it('reports a drained backlog once, when its last waiter gets a slot, and never without one', async () => {
    let drained = 0;
    const lim = createInFlightLimiter({ max: 2, onDrained: () => drained++ });
    const a = await lim.acquire('normal');
    const b = await lim.acquire('normal');
    a();
    b();
    assert.equal(drained, 0, 'slots freed with nobody waiting are not a drained backlog');
    const c = await lim.acquire('normal');
    const d = await lim.acquire('normal');
    const e = lim.acquire('low');
    const f = lim.acquire('high');
    await tick();
    c(); // f gets the slot, e still waits
    assert.deepEqual([drained, lim.waiting()], [0, 1]);
    d(); // e gets the slot: the backlog is empty
    assert.deepEqual([drained, lim.waiting()], [1, 0]);
    (await e)();
    (await f)();
    assert.equal(drained, 1, 'the releases after it had nobody to hand a slot to');
  });

  it('keeps nothing of a waiter once it has its slot', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const lim = createInFlightLimiter({ max: 1 });
    const first = await lim.acquire('normal');
    // A waiter holds its abort signal (to stop listening once granted): a signal that can be
    // collected after the grant shows the queue no longer holds the waiter.
    const refs: Array<WeakRef<AbortSignal>> = [];
    const waits = Array.from({ length: 3 }, () => {
      const c = new AbortController();
      refs.push(new WeakRef(c.signal));
      return lim.acquire('normal', c.signal);
    });
    first();
    for (const w of waits) (await w)();
    waits.length = 0;
    await tick();
    gc();
    assert.deepEqual(refs.map((r) => r.deref() === undefined), [true, true, true]);
    assert.equal(lim.inFlight(), 0);
  });

  it('is unbounded when max is not positive', async () => {
    const lim = createInFlightLimiter({ max: 0 });
    const releases = await Promise.all(Array.from({ length: 1000 }, () => lim.acquire('normal')));
    assert.equal(lim.inFlight(), 1000);
    for (const r of releases) r();
    assert.equal(lim.inFlight(), 0);
  });
});

describe('request runner with an in-flight bound', () => {
  /** The AbortSignal the runner put on a call, read from its middleware as the generated client would. */
  function signalOf(o: ConfigurationOptions): AbortSignal | undefined {
    let signal: AbortSignal | undefined;
    const mw = o.middleware?.[0];
    void mw?.pre({ setSignal: (s: AbortSignal) => (signal = s) } as never);
    return signal;
  }

  it('starts the per-request timeout at the send, not while the call waits for a slot, and reports the wait apart', async (t) => {
    const clock = mockClock(t); // the runner's timeouts and its timing of queue and send
    const inFlight = createInFlightLimiter({ max: 1 });
    const reports: RequestReport[] = [];
    const runner = createRequestRunner({ limiter: createRateLimiter({ qps: 0, burst: 1 }), inFlight, requestTimeoutMs: 100, onRequest: (r) => reports.push(r) });
    let finishFirst!: () => void;
    const sends: Array<{ name: string; abortedAtSend: boolean }> = [];
    const first = runner.run({ verb: 'create', resource: 'x' }, (o) => {
      sends.push({ name: 'first', abortedAtSend: signalOf(o)?.aborted ?? true });
      return new Promise<HttpInfo<string>>((resolve) => (finishFirst = () => resolve({ httpStatusCode: 201, data: 'one' } as HttpInfo<string>)));
    });
    const second = runner.run({ verb: 'create', resource: 'x' }, async (o) => {
      sends.push({ name: 'second', abortedAtSend: signalOf(o)?.aborted ?? true });
      return { httpStatusCode: 201, data: 'two' } as HttpInfo<string>;
    });
    await tick();
    assert.deepEqual(sends.map((s) => s.name), ['first'], 'the second call waits for the slot');
    clock.tick(250); // longer than the timeout
    await tick();
    finishFirst();
    assert.equal(await first, 'one');
    assert.equal(await second, 'two');
    assert.deepEqual(sends, [{ name: 'first', abortedAtSend: false }, { name: 'second', abortedAtSend: false }]);
    assert.equal(inFlight.inFlight(), 0, 'slots are released after success');
    // The second call's wait for the slot (the first call's 250 ms) is its queue time, not its duration.
    assert.equal(reports.length, 2);
    const [r1, r2] = reports;
    // On the mocked clock: the 250 ms the first call held the slot are the first's duration and
    // the second's queue time, and nothing else.
    assert.deepEqual([r1.queuedMs, r1.durationMs], [0, 250], 'the first call did not wait and was on the wire 250 ms');
    assert.deepEqual([r2.queuedMs, r2.durationMs], [250, 0], 'the second call waited 250 ms for the slot, which is not its duration');
  });

  it('lets unlimited (lease) calls bypass the bound and releases the slot of a failed call', async () => {
    const inFlight = createInFlightLimiter({ max: 1 });
    const reports: RequestReport[] = [];
    const runner = createRequestRunner({ limiter: createRateLimiter({ qps: 0, burst: 1 }), inFlight, onRequest: (r) => reports.push(r) });
    const failing = runner.run({ verb: 'delete', resource: 'x' }, async () => {
      throw Object.assign(new Error('boom'), { code: 500 });
    });
    const lease = runner.run({ verb: 'get', resource: 'leases' }, async () => ({ httpStatusCode: 200, data: 'lease' }) as HttpInfo<string>, { limited: false });
    assert.equal(await lease, 'lease');
    assert.equal(reports.find((r) => r.resource === 'leases')?.queuedMs, undefined, 'an unlimited call has no queue time');
    await assert.rejects(failing);
    assert.equal(inFlight.inFlight(), 0);
  });

  it('refuses at the send a limited call queued before leadership ended (FA_ERR_NOT_LEADER), never a lease call', async () => {
    const inFlight = createInFlightLimiter({ max: 1 });
    let leading = true;
    const runner = createRequestRunner({ limiter: createRateLimiter({ qps: 0, burst: 100 }), inFlight, maySend: () => leading });
    const sent: string[] = [];
    let finishFirst!: () => void;
    const first = runner.run({ verb: 'create', resource: 'volumeattachments' }, () => {
      sent.push('first');
      return new Promise<HttpInfo<string>>((resolve) => (finishFirst = () => resolve({ httpStatusCode: 201, data: 'one' } as HttpInfo<string>)));
    });
    // Queued behind the first while this replica still leads.
    const queued = runner.run({ verb: 'delete', resource: 'volumeattachments', name: 'va-2' }, async () => {
      sent.push('queued');
      return { httpStatusCode: 200, data: 'two' } as HttpInfo<string>;
    });
    await tick();
    leading = false; // stepped down
    finishFirst();
    assert.equal(await first, 'one', 'a call already on the wire completes');
    await assert.rejects(queued, (err: unknown) => (err as { code?: string }).code === 'FA_ERR_NOT_LEADER' && /delete volumeattachments va-2/.test(String((err as Error).message)));
    assert.deepEqual(sent, ['first'], 'the queued call never went on the wire');
    assert.equal(inFlight.inFlight(), 0, 'its slot was released');
    const lease = await runner.run({ verb: 'update', resource: 'leases' }, async () => ({ httpStatusCode: 200, data: 'lease' }) as HttpInfo<string>, { limited: false });
    assert.equal(lease, 'lease', 'lease calls are not gated');
  });
});
