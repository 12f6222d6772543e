/**
 * Several active controller replicas (`sharding`) on one simulated fleet with its kubelets and
 * CSI attacher: the replicas share the node buckets out between them, each writes only for
 * nodes of buckets it holds at that moment (read from the simulator's committed-write log, by
 * each replica's own user), ReadWriteOnce pods moving between nodes keep every invariant, and
 * when one replica stops, the other takes its buckets over and the fleet converges again.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import { startController, type Controller } from '../../src/manager/controller.js';
import { createInvariantChecker, type InvariantChecker } from '../../src/invariants/index.js';
import { bucketOf } from '../../src/sharding/index.js';
import { FLEET_NAMESPACE } from '../../src/sim/actors/names.js';
import type { KubeObject } from '../../src/sim/store/sim-store.js';
import { controllerDefaults, waitFor } from '../controller/harness.js';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

const BUCKETS = 16;
const REPLICAS = ['replica-1', 'replica-2'];
const TIMINGS = { leaderElectLeaseDurationMs: 3000, leaderElectRenewDeadlineMs: 2000, leaderElectRetryPeriodMs: 300, shardGraceMs: 500, shardStableMs: 500 };

/** The buckets acting on a replica now. */
const ownedBy = (ctls: ReadonlyMap<string, Controller>, id: string) => ctls.get(id)?.shards?.coordinator.ownedBuckets() ?? [];

/**
 * Moves `count` ReadWriteOnce pods, one after another, each to a node whose bucket another
 * replica holds: the pod is deleted (its kubelet unmounts, then it is gone) and created again
 * under the same name and claim there. Returns how many moved.
 */
async function moveAcrossReplicas(sim: Simulator, ctls: ReadonlyMap<string, Controller>, count: number): Promise<number> {
  const store = sim.store;
  const holderOf = new Map<number, string>();
  for (const id of ctls.keys()) for (const b of ownedBy(ctls, id)) holderOf.set(b, id);
  const nodes = store.list('nodes').map((n) => n.metadata.name);
  const rwo = (claim: string) => ((store.get('persistentvolumeclaims', FLEET_NAMESPACE, claim)?.spec as { accessModes?: string[] } | undefined)?.accessModes ?? []).includes('ReadWriteOnce');
  let moved = 0;
  for (const p of store.list('pods', FLEET_NAMESPACE)) {
    if (moved === count) break;
    const spec = p.spec as { nodeName: string; volumes?: Array<{ persistentVolumeClaim?: { claimName: string } }> };
    const claims = (spec.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : []));
    if (claims.length === 0 || !claims.every(rwo)) continue;
    const from = holderOf.get(bucketOf(spec.nodeName, BUCKETS));
    const to = nodes.find((n) => { const h = holderOf.get(bucketOf(n, BUCKETS)); return h !== undefined && h !== from; });
    if (from === undefined || to === undefined) continue;
    store.delete('pods', FLEET_NAMESPACE, p.metadata.name);
    await waitFor(`pod ${p.metadata.name} gone`, () => store.get('pods', FLEET_NAMESPACE, p.metadata.name) === undefined, 30_000);
    const again: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: p.metadata.name, namespace: FLEET_NAMESPACE, labels: p.metadata.labels }, spec: { ...spec, nodeName: to }, status: { phase: 'Running', containerStatuses: [{ name: 'c', ready: true, state: { running: {} } }] } };
    store.create('pods', again);
    moved++;
  }
  return moved;
}

/** Who held a bucket from a resourceVersion on ('' when free), as its Lease was committed. */
interface Holding { holder: string; from: number }

describe('several active replicas sharing the node buckets', () => {
  let sim: Simulator;
  let checker: InvariantChecker;
  const ctls = new Map<string, Controller>();
  const holdings = new Map<number, Holding[]>();
  /** Each VolumeAttachment's node, as committed (they are immutable). */
  const vaNodes = new Map<string, string>();
  let unsubscribe: () => void = () => undefined;
  /** group|resource|verb → namespaces, of every request the replicas made. */
  const used = new Map<string, Set<string>>();

  before(async () => {
    sim = await startSimulator({
      fleet: { nodes: 24, podsPerNode: 3, seed: 11, attachLatencyMs: 20, detachLatencyMs: 20, mountLatencyMs: 20, unmountLatencyMs: 20 },
      bookmarkIntervalMs: 200,
      users: REPLICAS.map((name) => ({ name, token: `token-${name}` })),
      writeLog: { capacity: 200_000 },
      // Every request as the API server's authorizer sees it (the fleet's actors write in-process).
      faults: {
        beforeRequest(f) {
          const group = /^\/apis\/([^/]+)\//.exec(f.path)?.[1] ?? '';
          const key = `${group}|${f.resource}${f.subresource ? `/${f.subresource}` : ''}|${f.verb}`;
          used.set(key, (used.get(key) ?? new Set()).add(f.namespace ?? ''));
          return undefined;
        },
      },
    });
    checker = createInvariantChecker({ store: sim.store, maxWaitForUnmountMs: 360_000 });
    unsubscribe = sim.store.subscribe((ev) => {
      if (ev.resource === 'volumeattachments' && ev.type === 'ADDED') vaNodes.set(ev.name, (JSON.parse(ev.json) as { spec: { nodeName: string } }).spec.nodeName);
      const m = /^fleet-attach-b-(\d+)$/.exec(ev.name);
      if (ev.resource !== 'leases' || !m) return;
      const holder = ev.type === 'DELETED' ? '' : ((JSON.parse(ev.json) as { spec?: { holderIdentity?: string } }).spec?.holderIdentity ?? '');
      const list = holdings.get(Number(m[1])) ?? [];
      list.push({ holder, from: ev.rv });
      holdings.set(Number(m[1]), list);
    });
    for (const id of REPLICAS) {
      ctls.set(id, await startController({ ...controllerDefaults(sim), kubeconfig: { yaml: sim.kubeconfigFor(id) }, sharding: true, shardBuckets: BUCKETS, identity: id, ...TIMINGS }));
    }
  });
  after(async () => {
    unsubscribe();
    checker.stop();
    for (const c of ctls.values()) await c.stop();
    await sim.stop();
  });

  const owned = (id: string) => ownedBy(ctls, id);
  const converged = () => {
    const c = checker.convergence();
    return c.desired > 0 && c.attached === c.desired && c.strayAttachments === 0;
  };

  it('share the buckets out, each holding some, and converge the fleet', async () => {
    // One replica may take every bucket before the other is seen as stable; it then hands some over.
    await waitFor('every bucket acting, on both replicas', () => owned('replica-1').length > 0 && owned('replica-2').length > 0 && owned('replica-1').length + owned('replica-2').length === BUCKETS, 60_000);
    const a = new Set(owned('replica-1'));
    assert.ok(a.size > 0 && owned('replica-2').length > 0, `both replicas hold buckets: ${[...a]} / ${owned('replica-2')}`);
    assert.ok(owned('replica-2').every((b) => !a.has(b)));
    for (const c of ctls.values()) assert.equal(c.role(), 'shard');
    await waitFor('convergence', converged, 60_000);
    assert.deepEqual(checker.violations(), []);
  });

  it('move ReadWriteOnce pods between nodes of different replicas without a violation', async () => {
    assert.equal(await moveAcrossReplicas(sim, ctls, 8), 8);
    await waitFor('convergence after the moves', converged, 60_000);
    assert.deepEqual(checker.violations(), []);
  });

  it('every VolumeAttachment and node status write came from the replica holding the node\'s bucket at that moment', () => {
    const holderAt = (node: string, rv: number) => {
      let holder = '';
      for (const h of holdings.get(bucketOf(node, BUCKETS)) ?? []) if (h.from < rv) holder = h.holder;
      return holder;
    };
    let checked = 0;
    for (const r of sim.writeLog!.since(0)) {
      if (!REPLICAS.includes(r.user)) continue;
      let node: string | undefined;
      if (r.resource === 'nodes' && r.subresource === 'status') node = r.name;
      else if (r.resource === 'volumeattachments') node = vaNodes.get(r.name);
      if (node === undefined) continue;
      assert.equal(holderAt(node, r.rv), r.user, `${r.verb} ${r.resource} ${r.name} at ${r.rv} by ${r.user}`);
      checked++;
    }
    assert.ok(checked > 50, `checked ${checked} writes`);
  });

  it('when one replica stops, the other takes every bucket over and the fleet converges again', async () => {
    await ctls.get('replica-1')!.stop();
    ctls.delete('replica-1');
    await waitFor('replica-2 holds every bucket', () => owned('replica-2').length === BUCKETS, 60_000);
    const store = sim.store;
    const p = store.list('pods', FLEET_NAMESPACE)[0]!;
    store.delete('pods', FLEET_NAMESPACE, p.metadata.name);
    await waitFor('convergence after the hand-over', converged, 60_000);
    assert.deepEqual(checker.violations(), []);
  });

  it('uses exactly what deploy/rbac.yaml and deploy/rbac-sharded.yaml grant beyond one replica\'s needs', () => {
    const grants = (file: string) => {
      const cluster = new Set<string>();
      const namespaced = new Map<string, string>();
      for (const d of parseAllDocuments(readFileSync(new URL(`../../deploy/${file}`, import.meta.url), 'utf8'))) {
        const m = d.toJS() as { kind: string; metadata: { namespace?: string }; rules?: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> } | null;
        if (!m?.rules) continue;
        for (const r of m.rules) for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) {
          if (m.kind === 'ClusterRole') cluster.add(`${g}|${res}|${v}`);
          else namespaced.set(`${g}|${res}|${v}`, m.metadata.namespace ?? '');
        }
      }
      return { cluster, namespaced };
    };
    const base = grants('rbac.yaml');
    const extra = grants('rbac-sharded.yaml');
    const granted = (key: string, namespaces: Set<string>) =>
      [base, extra].some((g) => g.cluster.has(key) || (g.namespaced.has(key) && [...namespaces].every((ns) => ns === g.namespaced.get(key))));
    for (const [key, namespaces] of used) assert.ok(granted(key, namespaces), `used but not granted: ${key} (${[...namespaces].join(',')})`);
    for (const key of [...extra.cluster, ...extra.namespaced.keys()]) assert.ok(used.has(key), `granted for sharding but never used: ${key}`);
  });
});

// The same move with the attach lock switched off: a ReadWriteOnce volume then gets attached to
// its new node before its old attachment is gone (the detach takes 2 s here), which the checker
// must see. Without this, zero violations above would prove nothing about the lock.
describe('the same replicas without the attach lock', () => {
  let sim: Simulator;
  let checker: InvariantChecker;
  const ctls = new Map<string, Controller>();

  before(async () => {
    sim = await startSimulator({
      fleet: { nodes: 24, podsPerNode: 3, seed: 11, attachLatencyMs: 20, detachLatencyMs: 2000, mountLatencyMs: 20, unmountLatencyMs: 20 },
      bookmarkIntervalMs: 200,
    });
    checker = createInvariantChecker({ store: sim.store, maxWaitForUnmountMs: 360_000 });
    for (const id of REPLICAS) {
      ctls.set(id, await startController({ ...controllerDefaults(sim), sharding: true, shardBuckets: BUCKETS, identity: id, ...TIMINGS, unsafeShardGuardsOff: ['volume-lock'] }));
    }
  });
  after(async () => {
    checker.stop();
    for (const c of ctls.values()) await c.stop();
    await sim.stop();
  });

  it('put a ReadWriteOnce volume on two nodes', async () => {
    await waitFor('every bucket acting, on both replicas', () => ownedBy(ctls, 'replica-1').length > 0 && ownedBy(ctls, 'replica-2').length > 0 && ownedBy(ctls, 'replica-1').length + ownedBy(ctls, 'replica-2').length === BUCKETS, 60_000);
    await waitFor('convergence', () => { const c = checker.convergence(); return c.desired > 0 && c.attached === c.desired; }, 60_000);
    assert.deepEqual(checker.violations(), []);
    assert.equal(await moveAcrossReplicas(sim, ctls, 4), 4);
    await waitFor('a multi-attach violation', () => checker.violations().some((v) => v.kind === 'multi-attach'), 30_000);
  });
});
