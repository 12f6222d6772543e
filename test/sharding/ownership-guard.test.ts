/**
 * The 'ownership' guard switched off in a controller: next to a replica with every guard on, a
 * replica that acts without bucket ownership writes for nodes whose bucket the other holds (read
 * from the simulator's committed-write log, by each replica's own user). With the guard on, the
 * same wait times out (sharded-controllers.test.ts checks every write against the holder).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import { startController, type Controller } from '../../src/manager/controller.js';
import { bucketOf } from '../../src/sharding/index.js';
import { FLEET_NAMESPACE } from '../../src/sim/actors/names.js';
import type { KubeObject } from '../../src/sim/store/sim-store.js';
import { controllerDefaults, waitFor } from '../controller/harness.js';

const BUCKETS = 16;
const TIMINGS = { leaderElectLeaseDurationMs: 3000, leaderElectRenewDeadlineMs: 2000, leaderElectRetryPeriodMs: 300, shardGraceMs: 500, shardStableMs: 500 };

describe("a replica with the 'ownership' guard switched off", () => {
  let sim: Simulator;
  const ctls = new Map<string, Controller>();
  const vaNodes = new Map<string, string>();
  let unsubscribe: () => void = () => undefined;

  before(async () => {
    sim = await startSimulator({
      fleet: { nodes: 12, podsPerNode: 2, seed: 5, attachLatencyMs: 20, detachLatencyMs: 20, mountLatencyMs: 20, unmountLatencyMs: 20 },
      bookmarkIntervalMs: 200,
      users: ['guarded', 'unguarded'].map((name) => ({ name, token: `token-${name}` })),
      writeLog: { capacity: 100_000 },
    });
    unsubscribe = sim.store.subscribe((ev) => {
      if (ev.resource === 'volumeattachments' && ev.type === 'ADDED') vaNodes.set(ev.name, (JSON.parse(ev.json) as { spec: { nodeName: string } }).spec.nodeName);
    });
    ctls.set('guarded', await startController({ ...controllerDefaults(sim), kubeconfig: { yaml: sim.kubeconfigFor('guarded') }, sharding: true, shardBuckets: BUCKETS, identity: 'guarded', ...TIMINGS }));
    ctls.set('unguarded', await startController({ ...controllerDefaults(sim), kubeconfig: { yaml: sim.kubeconfigFor('unguarded') }, sharding: true, shardBuckets: BUCKETS, identity: 'unguarded', ...TIMINGS, unsafeShardGuardsOff: ['ownership'] }));
  });
  after(async () => {
    unsubscribe();
    for (const c of ctls.values()) await c.stop();
    await sim.stop();
  });

  it('writes for nodes of buckets the other replica holds', async () => {
    const owned = (id: string) => new Set(ctls.get(id)?.shards?.coordinator.ownedBuckets() ?? []);
    await waitFor('both replicas hold buckets', () => owned('guarded').size > 0 && owned('unguarded').size > 0 && owned('guarded').size + owned('unguarded').size === BUCKETS, 30_000);
    const guardedBuckets = owned('guarded');
    const store = sim.store;
    // New pods on the guarded replica's nodes, each with its own claim's volume: whoever acts on them writes for them.
    const nodes = store.list('nodes').map((n) => n.metadata.name).filter((n) => guardedBuckets.has(bucketOf(n, BUCKETS)));
    assert.ok(nodes.length > 0);
    const writes = () => {
      const out: string[] = [];
      for (const r of sim.writeLog!.since(0)) {
        if (r.user !== 'unguarded') continue;
        const node = r.resource === 'nodes' && r.subresource === 'status' ? r.name : r.resource === 'volumeattachments' ? vaNodes.get(r.name) : undefined;
        if (node !== undefined && guardedBuckets.has(bucketOf(node, BUCKETS))) out.push(`${r.verb} ${r.resource} ${r.name}`);
      }
      return out;
    };
    for (const p of store.list('pods', FLEET_NAMESPACE).filter((p) => nodes.includes((p.spec as { nodeName: string }).nodeName)).slice(0, 4)) {
      store.delete('pods', FLEET_NAMESPACE, p.metadata.name);
      await waitFor(`pod ${p.metadata.name} gone`, () => store.get('pods', FLEET_NAMESPACE, p.metadata.name) === undefined, 15_000);
      const again: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: p.metadata.name, namespace: FLEET_NAMESPACE, labels: p.metadata.labels }, spec: p.spec, status: { phase: 'Running', containerStatuses: [{ name: 'c', ready: true, state: { running: {} } }] } };
      store.create('pods', again);
    }
    const seen = await waitFor('a write by the unguarded replica for a node it does not own', () => (writes().length > 0 ? writes() : undefined), 15_000);
    assert.ok(seen.length > 0, seen.join('\n'));
  });
});
