/**
 * Two replicas with leader election: only the lease holder acts (fills its state, runs passes,
 * creates VolumeAttachments); the standby keeps its watches synced and takes over when the
 * leader stops, picking up where it left off.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  attachVolume, never, node, recordVolumeAttachments, startControllerOn, startHarness, uniqueName, vaLive, vaName, volumesAttached, waitFor,
} from './harness.js';
import type { Controller } from '../../src/manager/controller.js';

const LEASE = { leaderElect: true, leaderElectLeaseDurationMs: 1500, leaderElectRenewDeadlineMs: 1000, leaderElectRetryPeriodMs: 200 };

function holder(h: { sim: { store: { get(r: 'leases', ns: string, n: string): unknown } } }): string | undefined {
  return (h.sim.store.get('leases', 'kube-system', 'fleet-attach') as { spec?: { holderIdentity?: string } } | undefined)?.spec?.holderIdentity;
}

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
    // The standby saw all of it through its watches and did nothing.
    await never('the standby acting', () => standby.role() !== 'standby' || standby.reconciler.passes() > 0 || standby.state.counts().desiredPairs > 0, 500);
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
