/**
 * Several active replicas (`run --sharding`, docs/scale-out.md) against a real kube-apiserver,
 * with its audit log as the record of who committed what.
 *
 * - The cluster: upstream etcd + kube-apiserver (real-cluster.ts) with an audit policy
 *   (sharded/audit.ts: RequestResponse for node status and VolumeAttachment writes and the
 *   Lease writes of the Lease namespace, Metadata for PersistentVolume writes).
 * - The identities: one ServiceAccount per replica (and one for the probes), each bound through
 *   deploy/rbac.yaml and deploy/rbac-sharded.yaml, with its own token (sharded/identities.ts).
 * - The fleet: 60 nodes × 3 pods (90% ReadWriteOnce) created through the API with the remote
 *   fleet's kubelets and CSI attacher, as in real-api-server.test.ts; the judge is the same
 *   watch + invariant checker (real-api/api-watcher.ts), and the test watches the bucket Leases
 *   itself (sharded/bucket-watch.ts): the ownership history by resourceVersion.
 * - The replicas: `fleet-attach run --sharding --replica-id rN` child processes, 16 buckets,
 *   lease 3 s / renew 2 s / retry 0.5 s / grace 1 s. One that exits by itself (a renewal late
 *   on this shared machine) is started again as `rN-<n>` under the same ServiceAccount; the
 *   audit judgement is per ServiceAccount, so per replica, not per instance.
 *
 * Phases: the data-level fences tried directly with the project's own calls (sharded/
 * fence-probes.ts); two replicas share the buckets and converge; ReadWriteOnce pods moved to
 * nodes of the other replica's buckets with zero multi-attach; one replica SIGKILLed, the other
 * takes its buckets and converges, moving pods off the nodes it took over; a third identity
 * joins and the buckets are shared again; that replica is paused (SIGSTOP) past lease + grace,
 * its buckets taken and pods moved off its nodes meanwhile, then woken: it finds itself fenced,
 * exits, and its next instance rejoins. Then, from the audit log: every successful node
 * status patch and VolumeAttachment create/delete by a replica was made by the replica holding
 * the node's bucket at that revision (and the same judge does catch the probe's writes, made
 * holding nothing), every committed bucket Lease write is in the watch's history, and the
 * fences' refusals (409, 422) are counted per replica.
 *
 * Every wait has a deadline that fails the test; nothing asserts on elapsed time.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createKubeApiClient } from '../../src/kube/api-client.js';
import { loadKubeConfig } from '../../src/kube/kube-config.js';
import { bucketOf } from '../../src/sharding/index.js';
import { startFleetActors, type FleetActors } from '../../src/sim/actors/index.js';
import { DEFAULT_MIRROR, DEFAULT_NODE_SELECTOR, createRemoteStore, populateRemoteFleet, withNodeSelector, type RemoteStore } from '../../src/sim/remote/index.js';
import { startApiWatcher, type ApiWatcher } from './real-api/api-watcher.js';
import { ControllerProcess } from './real-api/controller-process.js';
import { answers, auditFlags, fencedRevision, judgeWrites, leaseWritesUnseen, readAudit } from './sharded/audit.js';
import { startBucketWatch, type BucketWatch } from './sharded/bucket-watch.js';
import * as probes from './sharded/fence-probes.js';
import { IDENTITY_NAMESPACE, createIdentities, serviceAccountUser } from './sharded/identities.js';
import { moveRwoPods } from './sharded/moves.js';
import { down, up, type RealCluster } from './real-cluster.js';

const NODES = 60;
const PODS_PER_NODE = 3;
const BUCKETS = 16;
const DRIVER = 'sim.csi.fleet-attach.io';
const MAX_WAIT_MS = 20_000;
const REPLICAS = ['r1', 'r2', 'r3'] as const;
const PROBE = 'fleet-attach-probe';
const saOf = (id: string) => `fleet-attach-${id}`;
/** The replica (and so the ServiceAccount) of a member identity: `r1` for `r1` and `r1-3`. */
const replicaOf = (identity: string) => identity.replace(/-\d+$/, '');
const userOf = (id: string) => serviceAccountUser(saOf(id));

/**
 * A replica whose renewals miss the 2 s deadline (this machine is shared) stops acting and
 * exits, as designed; its supervisor starts it again, under a new member identity `rN-<n>`
 * (a member Lease, once fenced, stays fenced), with the same ServiceAccount.
 */
const replicaArgs = (id: string) => (n: number) => [
  '--sharding', '--replica-id', n === 1 ? id : `${id}-${n}`, '--shard-buckets', String(BUCKETS),
  '--leader-elect-lease-duration', '3s', '--leader-elect-renew-deadline', '2s', '--leader-elect-retry-period', '500ms', '--shard-grace', '1s',
  '--max-wait-for-unmount', `${MAX_WAIT_MS / 1000}s`, '--kube-api-qps', '200', '--kube-api-burst', '400',
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, timeoutMs: number, probe: () => boolean | Promise<boolean>, detail: () => string | Promise<string> = () => ''): Promise<number> {
  const t0 = performance.now();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return performance.now() - t0;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${Math.round(timeoutMs / 1000)} s. ${await detail()}`);
    await sleep(500);
  }
}

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

describe('two sharded replicas against a real kube-apiserver: the fences hold there', () => {
  let dir = '';
  let cluster: RealCluster | undefined;
  let kubeconfigs = new Map<string, string>();
  let watcher: ApiWatcher | undefined;
  let buckets: BucketWatch | undefined;
  let fleetStore: RemoteStore | undefined;
  let actors: FleetActors | undefined;
  const replicas = new Map<string, ControllerProcess>();
  /** From the paused r3's SIGCONT to the start of its next instance. */
  let woke = { from: 0, to: 0 };
  let failed = false;
  const auditLog = () => join(dir, 'audit.log');
  const log = (msg: string) => console.log(`[sharded] ${msg}`);

  const step = (body: () => Promise<void>) => async (t: { skip(msg?: string): void }) => {
    if (failed) return t.skip('an earlier phase failed');
    try {
      await body();
    } catch (err) {
      failed = true;
      throw err;
    }
  };

  const startReplica = (id: string) => {
    const rdir = join(dir, id);
    mkdirSync(rdir, { recursive: true });
    const ctl = new ControllerProcess({ dir: rdir, kubeconfig: kubeconfigs.get(saOf(id))!, args: replicaArgs(id) });
    replicas.set(id, ctl);
    ctl.start();
    return ctl;
  };
  /** Replicas whose current instance runs. */
  const live = () => [...replicas].filter(([, c]) => c.current?.exit === undefined).map(([id]) => id);
  const acting = async (id: string) => (await replicas.get(id)?.get<{ ready: boolean; role: string }>('/readyz'))?.role === 'shard';
  /** Buckets held now by any instance of replica `id`. */
  const heldBy = (id: string) => [...buckets!.current()].filter(([, h]) => replicaOf(h) === id).map(([b]) => b).sort((a, b) => a - b);
  /** Every bucket held, by instances of `ids` only, each of `ids` holding some. */
  const shared = (ids: readonly string[]) => {
    const cur = buckets!.current();
    return cur.size === BUCKETS && [...cur.values()].every((h) => ids.includes(replicaOf(h))) && ids.every((id) => heldBy(id).length > 0);
  };
  /** The checker's operations when the last moves started, and how many pods moved. */
  let movedFrom = { attaches: 0, detaches: 0, moved: 0 };
  /**
   * Converged, with the last moves in the checker's view: the judge's feed lags the server by
   * its reorder window, so right after a move its view still shows the pod on its old node.
   */
  const converged = () => {
    const c = watcher!.checker.convergence();
    const ops = watcher!.checker.operations();
    const movesSeen = ops.detaches >= movedFrom.detaches + movedFrom.moved && ops.attaches >= movedFrom.attaches + movedFrom.moved;
    return movesSeen && c.converged && c.desired === NODES * PODS_PER_NODE && c.strayAttachments === 0;
  };
  /** A move target: a node of a bucket another replica holds, spread by `stride`. */
  const acrossReplicas = (stride: number) => {
    const all = nodes();
    return (from: string, i: number) => {
      const mine = holderOfNode(from);
      const others = all.filter((n) => { const h = holderOfNode(n); return h !== undefined && mine !== undefined && h !== mine; });
      return others[(i * stride) % Math.max(1, others.length)];
    };
  };
  const move = async (count: number, target: (node: string, i: number) => string | undefined) => {
    const ops = watcher!.checker.operations();
    movedFrom = { attaches: ops.attaches, detaches: ops.detaches, moved: 0 };
    const moves = await moveRwoPods({ store: fleetStore!, view: watcher!, count, target });
    movedFrom.moved = moves.length;
    return moves;
  };
  const detail = () => `buckets ${JSON.stringify(Object.fromEntries(live().map((id) => [id, heldBy(id)])))}, instances ${JSON.stringify(Object.fromEntries([...replicas].map(([id, c]) => [id, c.instances.length])))}, convergence ${JSON.stringify(watcher!.checker.convergence())}, violations ${watcher!.checker.violations().length}`;
  const holderOfNode = (node: string) => { const h = buckets!.current().get(bucketOf(node, BUCKETS)); return h === undefined ? undefined : replicaOf(h); };
  const nodes = () => watcher!.list('nodes').map((n) => n.metadata.name).filter((n) => n !== probes.PROBE_NODE).sort();

  before(async () => {
    execFileSync(process.execPath, [new URL('../../scripts/ensure-build.js', import.meta.url).pathname], { stdio: 'inherit' });
    dir = await mkdtemp(join(tmpdir(), 'fa-real-sharded-'));
    const flags = auditFlags({ policyPath: join(dir, 'audit-policy.yaml'), logPath: auditLog(), leaseNamespace: IDENTITY_NAMESPACE });
    cluster = await up({ dir, apiserverArgs: flags });
    kubeconfigs = createIdentities({ dir, adminKubeconfig: cluster.adminKubeconfig, templateKubeconfig: cluster.controllerKubeconfig, names: [...REPLICAS.map(saOf), PROBE] });
    buckets = await startBucketWatch({ kubeconfig: cluster.adminKubeconfig, namespace: IDENTITY_NAMESPACE, buckets: BUCKETS });
  });

  after(async () => {
    for (const c of replicas.values()) await c.stop().catch(() => {});
    await actors?.stop().catch(() => {});
    await fleetStore?.close({ flushMs: 0 }).catch(() => {});
    await watcher?.stop().catch(() => {});
    await buckets?.stop().catch(() => {});
    if (dir) {
      await down(dir).catch((err) => log(`down: ${String(err)}`));
      if (failed) log(`logs kept in ${dir}`);
      else await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses stale compare-and-swap writes of the project\'s own calls (node status 422, VolumeAttachment uid 409, PV lock 422, bucket Lease 409)', { timeout: 120_000 }, step(async () => {
    const admin = cluster!.adminKubeconfig;
    const kc = loadKubeConfig({ path: kubeconfigs.get(PROBE)! });
    const api = createKubeApiClient({ kc });
    try {
      const uid = probes.createProbeObjects(admin);
      const node = await probes.probeNodeStatus(api);
      assert.deepEqual(node, { first: 'patched,patched', stale: 'conflict', after: ['kubernetes.io/csi/probe^b'] }, 'node status CAS from a stale list');
      const va = await probes.probeVolumeAttachmentDelete(api, uid);
      assert.deepEqual(va, { wrongUid: 'precondition-failed', stillThere: true, rightUid: 'deleted' }, 'VolumeAttachment delete with a wrong uid');
      const lock = await probes.probeVolumeLock(api);
      assert.deepEqual(lock, { a: 'taken', b: 'conflict', bPatch: 'conflict', holder: 'node-a' }, 'PV attach lock from a stale read');
      const lease = await probes.probeBucketLease(api, IDENTITY_NAMESPACE, BUCKETS);
      assert.deepEqual(lease, { staleUpdate: 409, doubleCreate: 409, holder: 'probe-b', epoch: 2 }, 'bucket Lease claim from a stale resourceVersion');
    } finally {
      probes.deleteProbeObjects(admin, IDENTITY_NAMESPACE, probes.probeLeaseName(IDENTITY_NAMESPACE, BUCKETS, api));
      kc.close();
    }
    // The server's own record of the refusals, under the probe's user.
    const seen = answers(readAudit(auditLog()), [serviceAccountUser(PROBE)]).get(serviceAccountUser(PROBE))!;
    for (const k of ['patch nodes/status 422', 'delete volumeattachments 409', 'patch persistentvolumes 422', 'update leases 409', 'create leases 409']) {
      assert.ok((seen.get(k) ?? 0) >= 1, `audit log: ${k} for the probe (seen ${JSON.stringify(Object.fromEntries(seen))})`);
    }
  }));

  it('two replicas, each under its own ServiceAccount, share the buckets and converge the fleet', { timeout: 240_000 }, step(async () => {
    // The judge starts on an empty view once the probes' objects are gone (their made-up status
    // entries are no attachment), so that every change of the fleet reaches it.
    watcher = await startApiWatcher({ kubeconfig: cluster!.adminKubeconfig, maxWaitForUnmountMs: MAX_WAIT_MS, convergenceBoundMs: 120_000 });
    await until('the probes\' objects are gone', 30_000, () => watcher!.get('nodes', undefined, probes.PROBE_NODE) === undefined && watcher!.list('volumeattachments').length === 0);
    for (const id of ['r1', 'r2']) startReplica(id);
    await until('both replicas act as shards', 60_000, async () => (await acting('r1')) && (await acting('r2')), () => [...replicas.values()].flatMap((c) => c.grepLogs(/./).slice(-5).map((l) => l.line)).join('\n'));
    const fleet = { seed: 23, nodes: NODES, podsPerNode: PODS_PER_NODE, driver: DRIVER, rwxFraction: 0.1, leaseRenewMs: 300_000 };
    fleetStore = await createRemoteStore({ kubeconfig: { path: cluster!.adminKubeconfig }, resources: withNodeSelector(DEFAULT_MIRROR, DEFAULT_NODE_SELECTOR), qps: 500, burst: 1000, maxInFlight: 32 });
    actors = startFleetActors(fleetStore, fleet);
    const population = await populateRemoteFleet(fleetStore, fleet);
    assert.equal(population.errors, 0, 'population writes that failed');
    const t = await until('both replicas hold buckets, all held, and the fleet converged', 180_000, () => shared(['r1', 'r2']) && converged(), detail);
    log(`converged ${secs(t)} after the population; ${detail()}`);
    assert.deepEqual(watcher!.checker.violations(), []);
  }));

  it('moves ReadWriteOnce pods to nodes of the other replica\'s buckets with zero multi-attach', { timeout: 180_000 }, step(async () => {
    const moves = await move(10, acrossReplicas(7));
    assert.equal(moves.length, 10, 'pods moved across replicas');
    await until('convergence after the moves', 120_000, converged, detail);
    assert.deepEqual(watcher!.checker.violations(), []);
    log(`moved ${moves.length} pods across replicas; operations ${JSON.stringify(watcher!.checker.operations())}`);
  }));

  it('after a SIGKILL of one replica the other takes its buckets over and the fleet converges', { timeout: 180_000 }, step(async () => {
    await until('r1 acts', 60_000, () => acting('r1'), detail);
    const before = heldBy('r1');
    await replicas.get('r1')!.kill('SIGKILL');
    const t = await until('r2 holds every bucket', 60_000, () => heldBy('r2').length === BUCKETS, detail);
    log(`r2 took r1's buckets ${JSON.stringify(before)} ${secs(t)} after the kill (lease + grace included)`);
    const all = nodes();
    const moves = await move(4, (from, i) => (before.includes(bucketOf(from, BUCKETS)) ? all.filter((n) => n !== from)[(i * 11) % (all.length - 1)] : undefined));
    assert.equal(moves.length, 4, 'pods moved off the nodes taken over');
    await until('convergence after the take-over', 120_000, () => converged() && shared(['r2']), detail);
    assert.deepEqual(watcher!.checker.violations(), []);
  }));

  it('a third identity joins and the buckets are shared again', { timeout: 180_000 }, step(async () => {
    startReplica('r3');
    const t = await until('r2 and r3 share the buckets', 90_000, () => shared(['r2', 'r3']), detail);
    log(`r3 joined: buckets shared ${secs(t)} after its start: r2 ${JSON.stringify(heldBy('r2'))}, r3 ${JSON.stringify(heldBy('r3'))}`);
    const moves = await move(6, acrossReplicas(5));
    assert.equal(moves.length, 6);
    await until('convergence with r2 and r3', 120_000, () => converged() && shared(['r2', 'r3']), detail);
    assert.deepEqual(watcher!.checker.violations(), []);
  }));

  it('a replica paused past lease + grace is fenced; on waking it stops, comes back as a new member, and the fleet converges', { timeout: 240_000 }, step(async () => {
    const r3 = replicas.get('r3')!;
    await until('r3 acts', 60_000, () => acting('r3'), detail);
    const inst = r3.current!;
    const paused = heldBy('r3');
    process.kill(inst.pid, 'SIGSTOP');
    try {
      const t = await until('r2 holds every bucket while r3 is paused', 60_000, () => heldBy('r2').length === BUCKETS, detail);
      log(`r3 paused; r2 took its buckets ${JSON.stringify(paused)} ${secs(t)} after the pause`);
      // Pods moved off the paused replica's nodes while it sleeps: when it wakes, what it
      // believes of those nodes is stale.
      const all = nodes();
      const moves = await move(6, (from, i) => (paused.includes(bucketOf(from, BUCKETS)) ? all.filter((n) => n !== from)[(i * 13) % (all.length - 1)] : undefined));
      assert.equal(moves.length, 6, 'pods moved off the paused replica\'s nodes');
      await until('convergence while r3 is paused', 120_000, converged, detail);
    } finally {
      woke = { from: Date.now(), to: Number.POSITIVE_INFINITY };
      process.kill(inst.pid, 'SIGCONT');
    }
    await until('the woken r3 instance exits (its member Lease is fenced)', 60_000, () => inst.exit !== undefined, detail);
    woke.to = r3.instances[1]?.startedAt ?? Date.now();
    await until('r3 back as a new member, buckets shared with r2', 90_000, () => shared(['r2', 'r3']) && r3.instances.length >= 2, detail);
    log(`r3 woke and exited (${String(inst.exit)}); back as ${JSON.stringify([...new Set(buckets!.current().values())])}`);
    await until('convergence after r3 came back', 120_000, () => converged() && shared(['r2', 'r3']), detail);
    assert.deepEqual(watcher!.checker.violations(), []);
  }));

  it('the audit log: every committed node status and VolumeAttachment write of a replica came from the holder of the node\'s bucket at that revision', { timeout: 120_000 }, step(async () => {
    for (const c of replicas.values()) await c.scrapeNow();
    for (const c of replicas.values()) await c.stop();
    const events = readAudit(auditLog());
    const idOfUser = new Map(REPLICAS.map((id) => [userOf(id), id]));
    assert.equal(buckets!.relists(), 0, 'the bucket Lease watch was relisted: its history may have gaps');

    const holderAt = (node: string, rv: number) => replicaOf(buckets!.holderAt(bucketOf(node, BUCKETS), rv));
    const { checked, noops, wrong, unversioned } = judgeWrites(events, { identityOf: (u) => idOfUser.get(u), holderAt });
    assert.deepEqual(unversioned, [], 'successful replica writes without a committed version');
    log(`audit: writes checked against the bucket holder ${JSON.stringify(checked)}; no-op writes ${JSON.stringify(noops)}`);
    assert.deepEqual(wrong.slice(0, 10), [], `${wrong.length} writes by a replica not holding the node's bucket`);
    assert.ok((checked['create volumeattachments'] ?? 0) >= NODES * PODS_PER_NODE, 'VolumeAttachment creates checked');
    assert.ok((checked['patch nodes/status'] ?? 0) >= NODES, 'node status patches checked');
    assert.ok((checked['delete volumeattachments'] ?? 0) >= 10, 'VolumeAttachment deletes checked');
    // The same judge on the probe's writes, made while it held no bucket of their node: they
    // must be caught, or the zero above proves nothing.
    const control = judgeWrites(events, { identityOf: (u) => (u === serviceAccountUser(PROBE) ? PROBE : undefined), holderAt });
    assert.ok(control.wrong.length >= 3, `the probe's node status patches and VolumeAttachment delete are judged not the holder's: ${JSON.stringify(control)}`);

    const unseen = leaseWritesUnseen(events, { identityOf: (u) => idOfUser.get(u), history: (b) => buckets!.history(b) });
    assert.deepEqual(unseen.unseen.slice(0, 10), [], 'committed bucket Lease writes the watch did not see');
    assert.ok(unseen.writes >= BUCKETS, `bucket Lease writes by the replicas: ${unseen.writes}`);

    // The SIGKILLed r1: its member Lease was fenced before any of its buckets went to another
    // holder (a claim straight from r1, not after a release), in etcd's order.
    const fencedAt = fencedRevision(events, 'fleet-attach-m-r1');
    assert.ok(fencedAt !== undefined, 'r1\'s member Lease fenced, in the audit log');
    const takenFromR1 = buckets!.takenFrom('r1');
    log(`r1 fenced at revision ${fencedAt}; its buckets claimed at ${JSON.stringify(takenFromR1.map((x) => x.rv))}`);
    assert.ok(takenFromR1.length > 0, 'buckets taken from the SIGKILLed r1');
    assert.deepEqual(takenFromR1.filter((x) => x.rv < fencedAt!), [], 'buckets claimed from r1 before its member Lease was fenced');

    // The fences refusing: 409 and 422 answers each replica got, as the server logged them.
    const byUser = answers(events, REPLICAS.map(userOf));
    const refusals = Object.fromEntries(REPLICAS.map((id) => [id, Object.fromEntries([...byUser.get(userOf(id))!].filter(([k]) => / (409|422)$/.test(k)))]));
    const wokeWrites = answers(events.filter((e) => e.verb !== 'get' && Date.parse(e.requestReceivedTimestamp) >= woke.from && Date.parse(e.requestReceivedTimestamp) < woke.to), [userOf('r3')]).get(userOf('r3'))!;
    log(`audit: writes of the woken r3 instance before it exited: ${JSON.stringify(Object.fromEntries(wokeWrites))}`);
    log(`audit: refusals (409/422) per replica ${JSON.stringify(refusals)}`);
    for (const [id, c] of replicas) {
      assert.equal(c.answers('403'), 0, `403 answers to ${id}: a permission deploy/rbac.yaml + rbac-sharded.yaml lack`);
      log(`${id}: instances ${c.instances.length}, exits by themselves ${JSON.stringify(c.unexpectedExits.map((x) => x.exit))}`);
    }
  }));
});
