import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLeaderElector, type LeaderElector, type LeaseApi } from '../../src/leaderelection/index.js';
import { FakeKubeApiClient, kubeError } from '../kube/fake-api-client.js';
import { waitFor } from '../kube/fake-kube-server.js';
import { settle } from '../support/mock-clock.js';

const TIMING = { leaseDurationMs: 600, renewDeadlineMs: 400, retryPeriodMs: 50 };

interface Timeline {
  log: string[];
  leaders: () => number;
}

/** `api`, counting the calls made through it: a candidate's attempts, each at least one call. */
function counted(api: LeaseApi): LeaseApi & { calls(): number } {
  let n = 0;
  return {
    getLease: (ns, name, o) => (n++, api.getLease(ns, name, o)),
    createLease: (l, o) => (n++, api.createLease(l, o)),
    updateLease: (l, o) => (n++, api.updateLease(l, o)),
    calls: () => n,
  };
}

/**
 * Asserts `fn` stays false while `calls()` grows by `n`: the candidate's own attempts, not a
 * time window, so a slow machine cannot end the watch before it tried. Fails after `timeoutMs`.
 */
async function neverDuringCalls(what: string, fn: () => boolean, calls: () => number, n: number, timeoutMs = 10_000): Promise<void> {
  const target = calls() + n;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const done = calls() >= target;
    if (fn()) throw new Error(`unexpected: ${what}`);
    if (done) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} lease calls while watching for: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function pair(api: FakeKubeApiClient, apiOfA: LeaseApi = api, apiOfB: LeaseApi = api): { a: LeaderElector; b: LeaderElector; t: Timeline } {
  const log: string[] = [];
  let leading = 0;
  let maxLeading = 0;
  const make = (id: string) =>
    createLeaderElector({
      api: id === 'a' ? apiOfA : apiOfB,
      namespace: 'kube-system',
      name: 'fleet-attach',
      identity: id,
      ...TIMING,
      onStartedLeading: () => {
        leading++;
        maxLeading = Math.max(maxLeading, leading);
        log.push(`${id} started`);
      },
      onStoppedLeading: () => {
        leading--;
        log.push(`${id} stopped`);
      },
    });
  return { a: make('a'), b: make('b'), t: { log, leaders: () => maxLeading } };
}

describe('leader election on a Lease', () => {
  it('elects exactly one of two candidates; the other takes over after the first stops and releases', async (ctx) => {
    const api = new FakeKubeApiClient();
    const apiOfB = counted(api);
    const { a, b, t } = pair(api, api, apiOfB);
    ctx.after(() => Promise.all([a.stop(), b.stop()])); // stopped however the test ends
    void a.start();
    await waitFor(() => a.isLeader(), 'a leads');
    void b.start();
    // Several attempts: b keeps trying, and does not lead.
    await neverDuringCalls('b leading while a holds the lease', () => b.isLeader(), apiOfB.calls, 4);
    assert.equal(b.leader(), 'a');
    const lease = api.leases.get('kube-system/fleet-attach');
    assert.equal(lease?.holderIdentity, 'a');
    assert.equal(lease?.leaseDurationSeconds, 1);
    await a.stop();
    assert.equal(a.isLeader(), false);
    assert.equal(api.leases.get('kube-system/fleet-attach')?.holderIdentity === 'a', false, 'released on stop');
    await waitFor(() => b.isLeader(), 'b takes over');
    await b.stop();
    assert.deepEqual(t.log, ['a started', 'a stopped', 'b started', 'b stopped']);
    assert.equal(t.leaders(), 1);
    const final = api.leases.get('kube-system/fleet-attach');
    assert.equal(final?.leaseTransitions, 1);
  });

  it('a leader that cannot renew stops leading before another can acquire', async (ctx) => {
    const api = new FakeKubeApiClient();
    let partitioned = false;
    // a's view of the API: once partitioned, every call hangs until its deadline aborts it
    const hang = (signal?: AbortSignal) =>
      new Promise<never>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
    const apiOfA: LeaseApi = {
      getLease: (ns, n, o) => (partitioned ? hang(o?.signal) : api.getLease(ns, n, o)),
      createLease: (l, o) => (partitioned ? hang(o?.signal) : api.createLease(l, o)),
      updateLease: (l, o) => (partitioned ? hang(o?.signal) : api.updateLease(l, o)),
    };
    const countedA = counted(apiOfA);
    const { a, b, t } = pair(api, countedA);
    ctx.after(() => Promise.all([a.stop(), b.stop()])); // stopped however the test ends
    void a.start();
    await waitFor(() => a.isLeader(), 'a leads');
    void b.start();
    await waitFor(() => b.leader() === 'a', 'b sees a lead');
    partitioned = true;
    await waitFor(() => b.isLeader(), 'b takes over once the lease expired', 5000);
    assert.deepEqual(t.log, ['a started', 'a stopped', 'b started'], 'a stepped down before b acquired');
    assert.equal(a.isLeader(), false);
    partitioned = false;
    // a campaigns again (its attempts reach the API now) and does not come back while b renews.
    await neverDuringCalls('a leading again while b renews', () => a.isLeader(), countedA.calls, 4);
    await Promise.all([a.stop(), b.stop()]);
    assert.equal(t.leaders(), 1, `never two leaders: ${t.log.join(', ')}`);
  });

  it('expires a lease whose holder vanished without releasing it', async (ctx) => {
    const api = new FakeKubeApiClient();
    const now = new Date().toISOString();
    api.leases.set('kube-system/fleet-attach', { namespace: 'kube-system', name: 'fleet-attach', resourceVersion: '1', holderIdentity: 'ghost', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: 3 });
    // b's own clock, moved by the test; its retries run on real timers.
    let clock = 0;
    const apiOfB = counted(api);
    const log: string[] = [];
    const b = createLeaderElector({
      api: apiOfB, namespace: 'kube-system', name: 'fleet-attach', identity: 'b', ...TIMING, now: () => clock,
      onStartedLeading: () => log.push('b started'), onStoppedLeading: () => { log.push('b stopped'); },
    });
    ctx.after(() => b.stop()); // stopped however the test ends
    void b.start();
    // Attempts while b's clock is short of the record's lease duration (1 s) since b observed it.
    await neverDuringCalls('b acquiring at once', () => b.isLeader(), apiOfB.calls, 4);
    clock = 999;
    await neverDuringCalls('b acquiring before the record lease duration on its own clock', () => b.isLeader(), apiOfB.calls, 4);
    clock = 1000;
    await waitFor(() => b.isLeader(), 'b acquires after expiry', 5000);
    assert.equal(api.leases.get('kube-system/fleet-attach')?.leaseTransitions, 4);
    await b.stop();
    assert.deepEqual(log, ['b started', 'b stopped']);
  });

  it('keeps leading through a transient renew failure within the deadline', async () => {
    const api = new FakeKubeApiClient();
    const { a, t } = pair(api);
    void a.start();
    await waitFor(() => a.isLeader(), 'a leads');
    api.failNext('updateLease', kubeError(500, 'InternalError'), 2);
    await waitFor(() => api.callsOf('updateLease').length >= 4, 'renews continue', 5000);
    assert.equal(a.isLeader(), true);
    await a.stop();
    assert.deepEqual(t.log, ['a started', 'a stopped']);
  });

  it('with campaignAgain false, a leader that lost the lease never takes it again', async (ctx) => {
    const api = new FakeKubeApiClient();
    let partitioned = false;
    const fail = () => Promise.reject(kubeError(500, 'InternalError'));
    const apiOfA = counted({
      getLease: (ns, n, o) => (partitioned ? fail() : api.getLease(ns, n, o)),
      createLease: (l, o) => (partitioned ? fail() : api.createLease(l, o)),
      updateLease: (l, o) => (partitioned ? fail() : api.updateLease(l, o)),
    });
    const log: string[] = [];
    const a = createLeaderElector({
      api: apiOfA, namespace: 'kube-system', name: 'fleet-attach', identity: 'a', ...TIMING, campaignAgain: false,
      onStartedLeading: () => log.push('started'),
      onStoppedLeading: () => { log.push('stopped'); },
    });
    ctx.after(() => a.stop()); // stopped however the test ends
    const run = a.start();
    await waitFor(() => a.isLeader(), 'a leads');
    partitioned = true;
    await waitFor(() => log.includes('stopped'), 'a steps down', 5000);
    partitioned = false; // the record still names a: a campaigning elector would renew it at once
    let ended = false;
    void run.then(() => { ended = true; });
    await waitFor(() => ended, 'the loop ended at the step-down');
    const calls = apiOfA.calls();
    // Another candidate waits out a's record and takes the lease over (a renewing a would keep
    // it from expiring): a makes no lease call meanwhile.
    const b = createLeaderElector({ api, namespace: 'kube-system', name: 'fleet-attach', identity: 'b', ...TIMING, onStartedLeading() {}, onStoppedLeading() {} });
    ctx.after(() => b.stop());
    void b.start();
    await waitFor(() => b.isLeader(), 'b takes the expired lease over', 5000);
    assert.equal(apiOfA.calls(), calls, 'no lease call after the step-down');
    assert.deepEqual(log, ['started', 'stopped']);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('releases from a fresh read: a renew committed after the cached record does not block the release', async () => {
    const api = new FakeKubeApiClient();
    const { a } = pair(api);
    void a.start();
    await waitFor(() => a.isLeader(), 'a leads');
    // Another write of a's record behind its back (as a renew the stop aborted but the server
    // committed): the elector's cached resourceVersion is now stale.
    const key = 'kube-system/fleet-attach';
    const cur = api.leases.get(key)!;
    api.leases.set(key, { ...cur, resourceVersion: String(Number(cur.resourceVersion) + 1000) });
    await a.stop();
    assert.equal(api.leases.get(key)?.holderIdentity, '', 'released');
  });

  it('does not release while releaseOnStop says the guarded work has not ended', async () => {
    const api = new FakeKubeApiClient();
    const a = createLeaderElector({
      api, namespace: 'kube-system', name: 'fleet-attach', identity: 'a', ...TIMING, releaseOnStop: () => false,
      onStartedLeading() {}, onStoppedLeading() {},
    });
    void a.start();
    await waitFor(() => a.isLeader(), 'a leads');
    await a.stop();
    assert.equal(api.leases.get('kube-system/fleet-attach')?.holderIdentity, 'a', 'left to expire');
  });

  it('a renew that conflicts reads the Lease again in the same attempt, not a retry period later', async (t) => {
    const api = new FakeKubeApiClient();
    const slow = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 1000 };
    const calls: Array<{ m: string; conflict?: boolean }> = [];
    let conflictNext = false;
    const recorded: LeaseApi = {
      getLease: (ns, n, o) => (calls.push({ m: 'get' }), api.getLease(ns, n, o)),
      createLease: (l, o) => (calls.push({ m: 'create' }), api.createLease(l, o)),
      updateLease: (l, o) => {
        if (conflictNext) {
          conflictNext = false;
          calls.push({ m: 'update', conflict: true });
          return Promise.reject(kubeError(409, 'Conflict'));
        }
        calls.push({ m: 'update' });
        return api.updateLease(l, o);
      },
    };
    // The elector's timers are the test's: the clock moves once, through the retry period to the
    // renew that meets the conflict, and never again, so a later attempt's sleep would never end.
    // The re-read can only come within the attempt that met the conflict.
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const a = createLeaderElector({ api: recorded, namespace: 'kube-system', name: 'fleet-attach', identity: 'a', ...slow, onStartedLeading() {}, onStoppedLeading() {} });
    void a.start();
    await settle('a leads', () => a.isLeader());
    conflictNext = true;
    t.mock.timers.tick(slow.retryPeriodMs);
    await settle('the conflict and what followed', () => calls.findIndex((c) => c.conflict) >= 0 && calls.length > calls.findIndex((c) => c.conflict) + 2);
    const i = calls.findIndex((c) => c.conflict);
    assert.deepEqual(calls.slice(i + 1, i + 3).map((c) => c.m), ['get', 'update']);
    assert.equal(a.isLeader(), true);
    await a.stop();
  });

  it('validates its timing', () => {
    const api = new FakeKubeApiClient();
    const base = { api, namespace: 'ns', name: 'l', identity: 'x', onStartedLeading() {}, onStoppedLeading() {} };
    assert.throws(() => createLeaderElector({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }), RangeError);
    assert.throws(() => createLeaderElector({ ...base, identity: '' }), RangeError);
  });
});
