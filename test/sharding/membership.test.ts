import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMembership, type ShardLeaseApi } from '../../src/sharding/index.js';
import { createFakeLeaseApi, type FakeLeaseApi } from '../../src/sharding/fake-lease-api.js';
import { NS, TIMING } from './cluster.js';

const labels = { metadata: { labels: { 'fleet-attach.io/ring': 'adc' } }, spec: {} };

function ghost(store: FakeLeaseApi, id: string): Promise<unknown> {
  const at = new Date().toISOString();
  return store.createLease({ namespace: NS, name: `fleet-attach-m-${id}`, holderIdentity: id, leaseDurationSeconds: 1, acquireTime: at, renewTime: at, leaseTransitions: 0, kept: labels });
}

describe('membership', () => {
  it('never counts a member whose record it has not seen change, and fences it lease duration + grace after first sight', async () => {
    const store = createFakeLeaseApi();
    await ghost(store, 'dead');
    let t = 0;
    const m = createMembership({ api: store, namespace: NS, identity: 'me', ...TIMING, now: () => t });
    let fencedAt = -1;
    for (; t <= 5000; t += TIMING.retryPeriodMs) {
      await m.tick();
      assert.ok(!m.readyMembers().includes('dead'), `dead member Ready at ${t}`);
      if (fencedAt < 0 && store.get(NS, 'fleet-attach-m-dead')?.holderIdentity === 'fenced-by-me') fencedAt = t;
    }
    assert.ok(fencedAt >= TIMING.leaseDurationMs + TIMING.graceMs, `fenced at ${fencedAt}`);
    assert.ok(fencedAt <= TIMING.leaseDurationMs + TIMING.graceMs + TIMING.retryPeriodMs, `fenced at ${fencedAt}`);
    assert.equal(m.isGone('dead'), true);
    assert.deepEqual(m.readyMembers(), ['me']);
  });

  it('counts a renewing peer only after it has been Ready for the stable time', async () => {
    const store = createFakeLeaseApi();
    let t = 0;
    const a = createMembership({ api: store, namespace: NS, identity: 'a', ...TIMING, now: () => t });
    const b = createMembership({ api: store, namespace: NS, identity: 'b', ...TIMING, now: () => t });
    const seen: number[] = [];
    for (; t <= 3000; t += TIMING.retryPeriodMs) {
      await b.tick();
      await a.tick();
      if (a.readyMembers().includes('b')) seen.push(t);
    }
    const first = seen[0] ?? Infinity;
    assert.ok(first >= TIMING.stableMs + TIMING.retryPeriodMs && first <= TIMING.stableMs + 2 * TIMING.retryPeriodMs, `b counted from ${first}`);
    assert.equal(seen.length, (3000 - first) / TIMING.retryPeriodMs + 1, 'and from then on');
    assert.deepEqual(a.readyMembers(), ['a', 'b']);
  });

  it('stops being live at the renew deadline when renewals fail, and stays stopped when the API comes back', async () => {
    const store = createFakeLeaseApi();
    let down = false;
    const fail = () => Promise.reject(Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' }));
    const api: ShardLeaseApi = {
      getLease: (...a) => (down ? fail() : store.getLease(...a)),
      createLease: (...a) => (down ? fail() : store.createLease(...a)),
      updateLease: (...a) => (down ? fail() : store.updateLease(...a)),
      listLeases: (...a) => (down ? fail() : store.listLeases(...a)),
    };
    let t = 0;
    const m = createMembership({ api, namespace: NS, identity: 'me', ...TIMING, now: () => t });
    let changes = 0;
    m.subscribe(() => changes++);
    await m.tick();
    assert.equal(m.isLive(), true);
    const lastOk = t;
    down = true;
    for (; t < lastOk + TIMING.renewDeadlineMs; t += TIMING.retryPeriodMs) {
      assert.equal(m.isLive(), true, `live at ${t}`);
      await m.tick();
    }
    assert.equal(m.isLive(), false, 'not live at the deadline, before any tick');
    await m.tick();
    assert.equal(m.lost(), 'renew deadline passed');
    down = false;
    const writes = store.writes.length;
    await m.tick();
    assert.equal(m.isLive(), false);
    assert.equal(store.writes.length, writes, 'no renewal after the loss');
    assert.ok(changes >= 1);
  });

  it('a fence built on a stale view of a member that kept renewing fails on compare-and-swap', async () => {
    const store = createFakeLeaseApi();
    let t = 0;
    const a = createMembership({ api: store, namespace: NS, identity: 'a', ...TIMING, now: () => t });
    await a.tick();
    // b's lists are served from a cache stuck at a's first record.
    const stuck = await store.listLeases(NS, 'fleet-attach.io/ring=adc');
    const bApi: ShardLeaseApi = { ...store, getLease: store.getLease.bind(store), createLease: store.createLease.bind(store), updateLease: store.updateLease.bind(store), listLeases: async () => stuck };
    const b = createMembership({ api: bApi, namespace: NS, identity: 'b', ...TIMING, now: () => t });
    await b.tick();
    assert.equal(await b.fence('a'), false, 'not expired: no fence');
    for (let i = 0; i < 20; i++) {
      t += TIMING.retryPeriodMs;
      await a.tick();
      await b.tick(); // tries to fence a once its stale record looks expired
    }
    assert.equal(a.isLive(), true);
    assert.equal(store.get(NS, 'fleet-attach-m-a')?.holderIdentity, 'a', 'never fenced');
    assert.equal(await b.fence('a'), false);
  });

  it('fences an identity named as a holder whose member Lease is absent, by creating it', async () => {
    const store = createFakeLeaseApi();
    let t = 0;
    const m = createMembership({ api: store, namespace: NS, identity: 'me', ...TIMING, now: () => t });
    await m.tick();
    assert.equal(m.isGone('vanished'), false);
    for (; t <= TIMING.leaseDurationMs + TIMING.graceMs + TIMING.retryPeriodMs; t += TIMING.retryPeriodMs) await m.tick();
    assert.equal(store.get(NS, 'fleet-attach-m-vanished')?.holderIdentity, 'fenced-by-me');
    assert.equal(m.isGone('vanished'), true);
    // The vanished replica cannot come back under that identity.
    const back = createMembership({ api: store, namespace: NS, identity: 'vanished', ...TIMING, now: () => t });
    await back.tick();
    assert.equal(back.isLive(), false);
    assert.match(back.lost() ?? '', /fenced-by-me/);
  });
});
