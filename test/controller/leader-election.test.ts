/**
 * Two replicas with leader election: only the lease holder acts (fills its state, runs passes,
 * creates VolumeAttachments); the standby keeps its watches synced and takes over when the
 * leader stops, picking up where it left off.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  attachVolume, createVolumeAndPod, neverDuringPasses, node, recordVolumeAttachments, startControllerOn, startHarness, uniqueName, vaLive, vaName, volumesAttached, waitFor,
} from './harness.js';
import type { Controller } from '../../src/manager/controller.js';
import type { RequestFacts } from '../../src/sim/server/index.js';
import { ApiError } from '../../src/sim/server/status.js';
import type { RequestReport } from '../../src/kube/request-hook.js';

const LEASE = { leaderElect: true, leaderElectLeaseDurationMs: 1500, leaderElectRenewDeadlineMs: 1000, leaderElectRetryPeriodMs: 200 };

function lease(h: { sim: { store: { get(r: 'leases', ns: string, n: string): unknown } } }): { holderIdentity?: string; renewTime?: string } | undefined {
  return (h.sim.store.get('leases', 'kube-system', 'fleet-attach') as { spec?: { holderIdentity?: string; renewTime?: string } } | undefined)?.spec;
}

const holder = (h: Parameters<typeof lease>[0]) => lease(h)?.holderIdentity;

test('two replicas: only the leader acts; the standby takes over when the leader stops', async () => {
  const h = await startHarness({ ...LEASE, identity: 'replica-1' });
  let ctl2: Controller | undefined;
  try {
    ctl2 = await startControllerOn(h.sim, { ...LEASE, identity: 'replica-2' });
    const replicas = [h.ctl, ctl2];
    const leader = await waitFor('a leader', () => replicas.find((c) => c.role() === 'leader'));
    const standby = replicas.find((c) => c !== leader)!;
    await leader.acting();
    assert.equal(holder(h), leader === h.ctl ? 'replica-1' : 'replica-2');

    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    const vas = recordVolumeAttachments(h.sim);
    const va1 = await attachVolume(h.sim, 'l1', { mounted: true });
    await waitFor('standby synced', () => standby.ready().ready);
    // The standby saw all of it through its watches and did nothing while the leader ran passes.
    await neverDuringPasses(leader, 'the standby acting', () => standby.role() !== 'standby' || standby.reconciler.passes() > 0 || standby.state.counts().desiredPairs > 0, 10);
    assert.equal(standby.executor.inFlight(), 0);
    assert.ok(leader.reconciler.passes() > 0);

    await leader.stop(); // releases the lease
    await waitFor('standby leads', () => standby.role() === 'leader');
    await standby.acting();
    const va2 = await attachVolume(h.sim, 'l2', { mounted: true });
    assert.ok(vaLive(h.sim, va1), 'the first volume stays attached');
    assert.deepEqual(volumesAttached(h.sim, 'node-a').sort(), [uniqueName('l1'), uniqueName('l2')].sort());
    assert.equal(va2, vaName('l2', 'node-a'));
    vas.stop();
    assert.equal(vas.created(), 2, 'one VolumeAttachment per volume, none duplicated by the takeover');
    assert.ok(standby.reconciler.passes() > 0);
  } finally {
    await ctl2?.stop();
    await h.stop();
  }
});

test('a leader that lost its lease never leads again without acting: it stops campaigning and a new replica takes over', async () => {
  let blockLeases = false;
  const faults = { beforeRequest: (f: RequestFacts) => (blockLeases && f.resource === 'leases' ? new ApiError(500, 'InternalError', 'injected lease failure') : undefined) };
  const h = await startHarness({ ...LEASE, identity: 'replica-1' }, { faults });
  let ctl2: Controller | undefined;
  try {
    await waitFor('replica-1 leads', () => h.ctl.role() === 'leader');
    await h.ctl.acting();
    h.sim.store.create('nodes', node('node-a'));
    await attachVolume(h.sim, 'z1', { mounted: true });
    // Renewals fail past the renew deadline: replica-1 steps down.
    blockLeases = true;
    await waitFor('replica-1 stepped down', () => h.ctl.role() !== 'leader', 10_000);
    blockLeases = false;
    assert.equal(h.ctl.ready().ready, false, 'a replica that lost its lease reports not ready');
    // Its loop is stopped and its executor closed: holding the lease again would stall the fleet.
    // Watched until a new replica has taken the expired lease over and run passes: a replica-1
    // still renewing would keep the lease from expiring, and the wait would fail at its deadline.
    const before = lease(h);
    const campaigning = () => {
      const now = lease(h);
      return h.ctl.role() === 'leader' || (now?.holderIdentity === 'replica-1' && now.renewTime !== before?.renewTime);
    };
    assert.equal(campaigning(), false);
    ctl2 = await startControllerOn(h.sim, { ...LEASE, identity: 'replica-2' });
    const replica2 = ctl2;
    await neverDuringPasses(replica2, 'replica-1 leading or renewing again', campaigning, 10, { after: () => replica2.role() === 'leader' });
    await ctl2.acting();
    await attachVolume(h.sim, 'z2', { mounted: true });
    assert.ok(vaLive(h.sim, vaName('z1', 'node-a')), 'the first volume stays attached');
  } finally {
    await ctl2?.stop();
    await h.stop();
  }
});

test('a replica that stepped down sends none of the writes it had queued while it led', async () => {
  let blockLeases = false;
  const faults = { beforeRequest: (f: RequestFacts) => (blockLeases && f.resource === 'leases' ? new ApiError(500, 'InternalError', 'injected lease failure') : undefined) };
  // Four writes a second: forty attaches queue in the client, as at a takeover's cold start.
  // Each VolumeAttachment create the client sends, at its send (the report comes at its end).
  const sentAt: number[] = [];
  const onRequest = (r: RequestReport) => {
    if (r.verb === 'create' && r.resource === 'volumeattachments') sentAt.push(performance.now() - r.durationMs);
  };
  const h = await startHarness({ ...LEASE, identity: 'replica-1', kubeApiQps: 4, kubeApiBurst: 1, onRequest }, { faults });
  let unsubscribe: (() => void) | undefined;
  try {
    await waitFor('replica-1 leads', () => h.ctl.role() === 'leader');
    await h.ctl.acting();
    h.sim.store.create('nodes', node('node-a'));
    let created = 0;
    unsubscribe = h.sim.store.subscribe((ev) => {
      if (ev.resource === 'volumeattachments' && ev.type === 'ADDED') created++;
    });
    for (let i = 0; i < 40; i++) createVolumeAndPod(h.sim.store, 'default', `q${i}`, { nodeName: 'node-a' });
    await waitFor('some creates sent', () => created >= 2);
    blockLeases = true; // it can no longer renew
    await waitFor('replica-1 stepped down', () => h.ctl.role() !== 'leader', 10_000);
    // Read after the step-down (polled): a send at or before it was checked while leading.
    const steppedDown = performance.now();
    // Nothing of it is left in its client: the queued creates refused, those on the wire answered.
    // (Sent at four a second instead, they would drain too, some 10 s on, and be counted below.)
    await waitFor('every queued call ended', () => {
      const b = h.ctl.api.backlog();
      return b.waiting === 0 && b.inFlight === 0;
    }, 30_000);
    assert.ok(created < 40, `the queue had not drained before the step-down (${created} created)`);
    assert.equal(created, sentAt.length, 'every create sent reached the server');
    const late = sentAt.filter((t) => t > steppedDown);
    assert.deepEqual(late.map((t) => Math.round(t - steppedDown)), [], 'creates sent after the step-down');
  } finally {
    unsubscribe?.();
    await h.stop();
  }
});

test('a leader stopping with calls queued in its rate limiter refuses them at once and releases its lease', async () => {
  // One write a second and a renew deadline (the bound on waiting for the calls to settle before
  // the release) of 4 s: the queued creates would each wait for a token, then be refused at the
  // send, and the lease would be left to expire instead of released.
  const slow = { leaderElect: true, leaderElectLeaseDurationMs: 6000, leaderElectRenewDeadlineMs: 4000, leaderElectRetryPeriodMs: 1000 };
  const h = await startHarness({ ...slow, identity: 'replica-1', kubeApiQps: 1, kubeApiBurst: 1 });
  try {
    await h.ctl.acting();
    h.sim.store.create('nodes', node('node-a'));
    for (let i = 0; i < 8; i++) createVolumeAndPod(h.sim.store, 'default', `q${i}`);
    await waitFor('creates queued behind the rate limiter', () => h.ctl.executor.inFlight() >= 6);
    assert.equal(holder(h), 'replica-1');
    await h.ctl.stop();
    assert.equal(holder(h) ?? '', '', 'the lease was released at the stop');
  } finally {
    await h.stop();
  }
});
