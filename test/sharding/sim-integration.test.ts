/**
 * Two coordinators, each with its own KubeApiClient, against the in-process simulated API server
 * over HTTPS and real timers: they partition the buckets on their targets with one owner per
 * bucket at every look, and a graceful stop hands the stopped replica's buckets to the other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createKubeApiClient, type KubeApiClient } from '../../src/kube/api-client.js';
import { loadKubeConfig, type FleetKubeConfig } from '../../src/kube/kube-config.js';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import { assignTargets, createMembership, createShardCoordinator, type ShardCoordinator } from '../../src/sharding/index.js';

const NS = 'kube-system';
const B = 64;
// Deadlines with room for a 2-core machine running the server, two clients and TLS handshakes.
const TIMING = { leaseDurationMs: 10_000, renewDeadlineMs: 8000, retryPeriodMs: 300, graceMs: 500, stableMs: 600 };

describe('sharding against the simulated API server', () => {
  let sim: Simulator;
  const kcs: FleetKubeConfig[] = [];

  before(async () => {
    sim = await startSimulator({});
  });
  after(async () => {
    for (const kc of kcs) kc.close();
    await sim.stop();
  });

  function replica(id: string): { c: ShardCoordinator; api: KubeApiClient; drained: number[] } {
    const kc = loadKubeConfig({ yaml: sim.kubeconfig, env: {} });
    kcs.push(kc);
    const api = createKubeApiClient({ kc });
    const membership = createMembership({ api, namespace: NS, identity: id, ...TIMING });
    const drained: number[] = [];
    const c = createShardCoordinator({
      api,
      namespace: NS,
      membership,
      buckets: B,
      retryPeriodMs: TIMING.retryPeriodMs,
      drain: async (b) => {
        drained.push(b);
      },
      warmUp: async () => {},
    });
    return { c, api, drained };
  }

  /** Polls until `cond`, checking at every look that no bucket acts on both. */
  async function watch(what: string, cs: ShardCoordinator[], cond: () => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (let b = 0; b < B; b++) assert.ok(cs.filter((c) => c.mayActOnBucket(b)).length <= 1, `bucket ${b} acts on two replicas`);
      if (cond()) return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('two replicas partition the buckets over real HTTP, and a graceful stop hands over', async () => {
    const a = replica('sim-a');
    const b = replica('sim-b');
    void a.c.start();
    void b.c.start();
    const targets = assignTargets(['sim-a', 'sim-b'], B);
    const onTargets = () => targets.every((t, i) => (t === 'sim-a' ? a.c : b.c).mayActOnBucket(i));
    try {
      await watch('both on their targets', [a.c, b.c], onTargets);
      assert.equal(a.c.ownedBuckets().length + b.c.ownedBuckets().length, B);
      const listed = await a.api.listLeases(NS, 'fleet-attach.io/kind=bucket');
      assert.equal(listed.length, B);
      for (const l of listed) {
        const i = Number(l.name.slice('fleet-attach-b-'.length));
        assert.equal(l.holderIdentity, targets[i], `${l.name} holder`);
        assert.equal(a.c.epoch(i) || b.c.epoch(i), l.leaseTransitions);
      }
      const members = await a.api.listLeases(NS, 'fleet-attach.io/ring=adc');
      assert.deepEqual(members.map((m) => `${m.name}=${m.holderIdentity}`).sort(), ['fleet-attach-m-sim-a=sim-a', 'fleet-attach-m-sim-b=sim-b']);

      const held = a.c.ownedBuckets();
      a.drained.length = 0;
      await a.c.stop();
      assert.deepEqual([...a.drained].sort((x, y) => x - y), held, 'each bucket drained on stop');
      // Well before a's membership could have expired: the hand-over waits for no fence.
      await watch('b owns everything', [a.c, b.c], () => b.c.ownedBuckets().length === B, TIMING.leaseDurationMs / 2);
      const aLease = await b.api.getLease(NS, 'fleet-attach-m-sim-a');
      assert.equal(aLease?.holderIdentity, '', 'a released its membership');
    } finally {
      await Promise.all([a.c.stop(), b.c.stop()]);
    }
  });
});
