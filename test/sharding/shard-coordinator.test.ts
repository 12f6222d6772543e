import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assignTargets, DEFAULT_BUCKETS } from '../../src/sharding/index.js';
import { createCluster, TIMING, type Cluster } from './cluster.js';

const B = 256;

async function converged(c: Cluster, ids: string[], buckets = B): Promise<void> {
  const targets = assignTargets(ids, buckets);
  const onTargets = () => c.partitioned() && targets.every((t, b) => c.ownerOf(b)?.id === t);
  await c.stepUntil(`${ids.join(', ')} partition the buckets on their targets`, onTargets);
}

describe('shard coordinator', () => {
  it('three replicas converge to a partition of the default 1,024 buckets on their targets, one owner per bucket at every step', async () => {
    const c = createCluster(DEFAULT_BUCKETS);
    for (const id of ['r-a', 'r-b', 'r-c']) c.add(id);
    await converged(c, ['r-a', 'r-b', 'r-c'], DEFAULT_BUCKETS);
    const owned = c.replicas.map((r) => r.c.ownedBuckets().length);
    assert.equal(owned.reduce((a, n) => a + n, 0), DEFAULT_BUCKETS);
    assert.ok(owned.every((n) => n > DEFAULT_BUCKETS / 4), `balanced: ${owned.join(', ')}`);
    for (const r of c.replicas) assert.ok(r.writesInFlight.max > 1 && r.writesInFlight.max <= 8, `${r.id}: ${r.writesInFlight.max} writes at once (bound 8)`);
    // Steady state: no bucket Lease is written any more.
    const writes = c.store.writes.filter((w) => w.name.startsWith('fleet-attach-b-')).length;
    for (let i = 0; i < 10; i++) await c.step();
    assert.equal(c.store.writes.filter((w) => w.name.startsWith('fleet-attach-b-')).length, writes);
    // mayAct by node name follows the bucket.
    const r = c.replicas[0];
    const node = Array.from({ length: 100 }, (_, i) => `node-${i}`).find((n) => r?.c.bucketOf(n) === r?.c.ownedBuckets()[0]) as string;
    assert.ok(node && r?.c.mayAct(node));
    assert.ok(c.replicas.slice(1).every((o) => !o.c.mayAct(node)));
  });

  it('fences a member that stopped renewing, claims its buckets, and the resumed member acts on nothing and writes nothing', async () => {
    const c = createCluster(B);
    const [a] = [c.add('r-a'), c.add('r-b'), c.add('r-c')];
    await converged(c, ['r-a', 'r-b', 'r-c']);
    assert.ok(a);
    const aBuckets = a.c.ownedBuckets();
    const aEpochs = aBuckets.map((b) => a.c.epoch(b));
    const aWrites = a.bucketWrites.length;
    const pausedAt = c.now();
    a.paused = true;
    // It stops acting by itself once its renew deadline has passed, before anyone could fence it.
    await c.stepUntil('a not live', () => !a.m.isLive());
    assert.ok(c.now() - pausedAt <= TIMING.renewDeadlineMs + TIMING.retryPeriodMs);
    assert.deepEqual(a.c.ownedBuckets(), []);
    assert.equal(c.store.get('kube-system', 'fleet-attach-m-r-a')?.holderIdentity, 'r-a', 'not fenced yet');
    await c.stepUntil('a fenced', () => (c.store.get('kube-system', 'fleet-attach-m-r-a')?.holderIdentity ?? '').startsWith('fenced-by-r-'));
    assert.ok(c.now() - pausedAt >= TIMING.leaseDurationMs + TIMING.graceMs, 'fenced only after lease duration + grace');
    await converged(c, ['r-b', 'r-c']);
    for (const [i, b] of aBuckets.entries()) assert.ok(c.ownerOf(b)?.c.epoch(b) === (aEpochs[i] as number) + 1, `bucket ${b}: next epoch`);
    // Resumed: nothing acts before it runs, and its first step finds it lost without a bucket write.
    a.paused = false;
    assert.ok(aBuckets.every((b) => !a.c.mayActOnBucket(b)));
    for (let i = 0; i < 5; i++) await c.step();
    assert.ok(a.m.lost());
    assert.equal(a.bucketWrites.length, aWrites, 'no bucket write after the pause');
    assert.ok(c.partitioned());
  });

  it('a resumed member whose own clock stood still finds its membership fenced at its first renewal', async () => {
    const c = createCluster(B);
    const a = c.add('r-a', { ownClock: true });
    c.add('r-b');
    await converged(c, ['r-a', 'r-b']);
    const aWrites = a.bucketWrites.length;
    a.paused = true; // its clock is not moved while paused
    await c.stepUntil('a fenced', () => (c.store.get('kube-system', 'fleet-attach-m-r-a')?.holderIdentity ?? '') === 'fenced-by-r-b');
    await converged(c, ['r-b']);
    a.paused = false;
    await a.m.tick();
    assert.equal(a.m.isLive(), false);
    assert.match(a.m.lost() ?? '', /fenced-by-r-b/);
    for (let b = 0; b < B; b++) assert.equal(a.c.mayActOnBucket(b), false);
    await a.c.pass();
    assert.equal(a.bucketWrites.length, aWrites, 'no bucket write after the pause');
    c.check();
  });

  it('a graceful stop drains each bucket before releasing it, and the others take over without waiting for a fence', async () => {
    const c = createCluster(B);
    const [a] = [c.add('r-a'), c.add('r-b'), c.add('r-c')];
    await converged(c, ['r-a', 'r-b', 'r-c']);
    assert.ok(a);
    const held = a.c.ownedBuckets();
    c.events.length = 0;
    await a.c.stop();
    a.stopped = true;
    c.check();
    for (const bucket of held) {
      const drained = c.events.indexOf(`r-a drain ${bucket}`);
      const released = c.events.indexOf(`r-a released ${bucket}`);
      assert.ok(drained >= 0 && released > drained, `bucket ${bucket}: drained (${drained}) before released (${released})`);
      assert.equal(c.holder(bucket)?.holderIdentity, '');
    }
    assert.equal(c.store.get('kube-system', 'fleet-attach-m-r-a')?.holderIdentity, '', 'membership released');
    const steps = await c.stepUntil('r-b and r-c own everything', () => c.partitioned());
    assert.ok(steps * TIMING.retryPeriodMs < TIMING.leaseDurationMs, `took ${steps} steps`);
    assert.ok(c.replicas.every((r) => !(c.store.get('kube-system', `fleet-attach-m-${r.id}`)?.holderIdentity ?? '').startsWith('fenced')), 'nobody fenced');
    await converged(c, ['r-b', 'r-c']);
  });

  it('a member joining takes about 1/N of the buckets, each from its previous owner by drain and release', async () => {
    const c = createCluster(B);
    for (const id of ['r-a', 'r-b', 'r-c']) c.add(id);
    await converged(c, ['r-a', 'r-b', 'r-c']);
    const before = Array.from({ length: B }, (_, b) => c.ownerOf(b)?.id);
    c.events.length = 0;
    c.add('r-d');
    await converged(c, ['r-a', 'r-b', 'r-c', 'r-d']);
    let moved = 0;
    for (let b = 0; b < B; b++) {
      const now = c.ownerOf(b)?.id;
      if (now === before[b]) continue;
      moved++;
      assert.equal(now, 'r-d', `bucket ${b} moved between old members`);
      const drained = c.events.indexOf(`${before[b]} drain ${b}`);
      const released = c.events.indexOf(`${before[b]} released ${b}`);
      const idle = c.events.indexOf(`${before[b]} idle ${b}`);
      const warmed = c.events.indexOf(`r-d warm ${b}`);
      const acting = c.events.indexOf(`r-d acting ${b}`);
      assert.ok(idle >= 0 && idle < drained && drained < released && released < warmed && warmed < acting, `bucket ${b}: idle, drain, release, warm-up, acting`);
    }
    // ~Binomial(256, 1/4): 64 ± 6σ (σ ≈ 6.9).
    assert.ok(Math.abs(moved - B / 4) <= 42, `${moved} buckets moved`);
  });

  it('recovers a claim whose answer was lost: the Lease names it, the next pass claims it again at a new epoch', async () => {
    const c = createCluster(16);
    let lost = 0;
    const a = c.add('r-a', {
      api: (api) => ({
        ...api,
        getLease: api.getLease.bind(api),
        listLeases: api.listLeases.bind(api),
        updateLease: api.updateLease.bind(api),
        createLease: async (l, o) => {
          const out = await api.createLease(l, o);
          if (l.name.startsWith('fleet-attach-b-') && lost++ < 3) throw Object.assign(new Error('connection reset'), { code: 'ECONNRESET' });
          return out;
        },
      }),
    });
    await c.stepUntil('a owns all', () => c.partitioned());
    assert.equal(lost, 16, 'each bucket Lease created once');
    const reclaimed = [...Array(16).keys()].filter((b) => (c.holder(b)?.leaseTransitions ?? 0) > 1);
    assert.equal(reclaimed.length, 3, 'the three unanswered creates were claimed again');
    for (const b of reclaimed) assert.equal(a.c.epoch(b), 2);
  });
});
