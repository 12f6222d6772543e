/**
 * The attach lock sweep (src/sharding/lock-sweep.ts) on a clock the test moves: a lock nothing
 * needs is released only once every look for `holdMs` found it unneeded (a VolumeAttachment
 * create may still be on the wire), a look that finds it needed starts the count again, a lock
 * whose attach is in flight is never released, and `take`'s clearing of a left-over lock obeys
 * the same count (one tracker).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { isFleetError } from '../../src/errors/index.js';
import { createFakeEventRecorder } from '../../src/events/fake-event-recorder.js';
import type { PvRecord } from '../../src/kube/projections/index.js';
import { logger } from '../../src/log/logger.js';
import { createLockNeeds } from '../../src/manager/lock-needs.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import { createOperationExecutor } from '../../src/operations/operation-executor.js';
import { createFakeAttachablePlugin } from '../../src/plugins/fake-attachable-plugin.js';
import { createVolumePluginManager, type VolumeSpec } from '../../src/plugins/index.js';
import { volumeInfoFor } from '../../src/populator/volume-info.js';
import { createLockSweep } from '../../src/sharding/lock-sweep.js';
import { ATTACH_LOCK_ANNOTATION, LOCK_BUCKET_LABEL, lockValue } from '../../src/sharding/volume-lock.js';
import { FakeKubeApiClient } from '../kube/fake-api-client.js';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import { startController, type Controller } from '../../src/manager/controller.js';
import { bucketOf } from '../../src/sharding/index.js';
import { controllerDefaults, waitFor } from '../controller/harness.js';
import { EPOCH, pvMeta, shardWritesFixture } from './shard-writes-fixture.js';

const HOLD = 1000;

/** A sweep over PVs locked by nodes `n<bucket>-…` of buckets 1–5, acting here for `acting`. */
function sweepFixture(o: { acting?: number[]; bucketsPerList?: number } = {}) {
  const api = new FakeKubeApiClient();
  const clock = { t: 0 };
  const needs = new Map<string, string>();
  const acting = o.acting ?? [1, 2, 3, 4, 5];
  const bucketOfNode = (node: string) => Number(/^n(\d+)/.exec(node)![1]);
  const lock = (pv: string, node: string) => {
    api.persistentVolumes.set(pv, { name: pv, uid: pv, resourceVersion: '1', annotations: { [ATTACH_LOCK_ANNOTATION]: lockValue(node, 1) }, labels: { [LOCK_BUCKET_LABEL]: String(bucketOfNode(node)) } });
  };
  const releases: string[] = [];
  const sweep = createLockSweep({
    api,
    buckets: () => acting,
    mayAct: (node) => acting.includes(bucketOfNode(node)),
    needed: (pv, node) => needs.get(`${pv}/${node}`),
    release: async (pv, node) => {
      releases.push(`${pv}/${node}`);
      const meta = api.persistentVolumes.get(pv)!;
      api.persistentVolumes.set(pv, { ...meta, annotations: {}, labels: {} });
      return { outcome: 'released' };
    },
    holdMs: HOLD,
    now: () => clock.t,
    log: logger('test'),
    ...(o.bucketsPerList ? { bucketsPerList: o.bucketsPerList } : {}),
  });
  const held = (pv: string) => api.persistentVolumes.get(pv)?.annotations?.[ATTACH_LOCK_ANNOTATION];
  return { api, clock, needs, lock, releases, sweep, held };
}

describe('the lock sweep', () => {
  it('releases a lock nothing needs once it was unneeded at every look for holdMs', async () => {
    const f = sweepFixture();
    f.lock('pv-a', 'n2-x');
    assert.deepEqual(await f.sweep.sweep(), { locks: 1, released: 0, waiting: 1, failed: 0 });
    f.clock.t = HOLD - 1;
    assert.deepEqual(await f.sweep.sweep(), { locks: 1, released: 0, waiting: 1, failed: 0 });
    assert.equal(f.held('pv-a'), lockValue('n2-x', 1));
    f.clock.t = HOLD;
    assert.deepEqual(await f.sweep.sweep(), { locks: 1, released: 1, waiting: 0, failed: 0 });
    assert.deepEqual(f.releases, ['pv-a/n2-x']);
    assert.equal(f.held('pv-a'), undefined);
  });

  it('starts the count again when a look finds the lock needed (a VolumeAttachment committed late)', async () => {
    const f = sweepFixture();
    f.lock('pv-a', 'n2-x');
    await f.sweep.sweep(); // t=0: first seen unneeded
    f.clock.t = 900;
    f.needs.set('pv-a/n2-x', 'a VolumeAttachment of pv-a exists on node n2-x');
    assert.deepEqual(await f.sweep.sweep(), { locks: 1, released: 0, waiting: 0, failed: 0 });
    f.needs.delete('pv-a/n2-x'); // detached again; its owner died before the release
    f.clock.t = 1000;
    assert.equal((await f.sweep.sweep()).waiting, 1);
    f.clock.t = 1999;
    assert.equal((await f.sweep.sweep()).released, 0, 'counted from the look at 1000, not 0');
    f.clock.t = 2000;
    assert.equal((await f.sweep.sweep()).released, 1);
  });

  it('lists the acting buckets only, in chunks, and leaves the locks of nodes not acting here', async () => {
    const f = sweepFixture({ acting: [1, 2, 4], bucketsPerList: 2 });
    f.lock('pv-1', 'n1-a');
    f.lock('pv-3', 'n3-a');
    f.lock('pv-4', 'n4-a');
    assert.equal((await f.sweep.sweep()).locks, 2);
    f.clock.t = HOLD;
    assert.equal((await f.sweep.sweep()).released, 2);
    assert.deepEqual(f.releases.sort(), ['pv-1/n1-a', 'pv-4/n4-a']);
    assert.equal(f.held('pv-3'), lockValue('n3-a', 1));
    const lists = f.api.calls.filter((c) => c.method === 'listPersistentVolumes').map((c) => c.args[0]);
    assert.deepEqual(lists.slice(0, 2), [`${LOCK_BUCKET_LABEL} in (1,2)`, `${LOCK_BUCKET_LABEL} in (4)`]);
  });

  it('never rejects: a failed list is counted and logged, and the next pass lists again', async () => {
    const f = sweepFixture();
    f.lock('pv-a', 'n2-x');
    f.api.failNext('listPersistentVolumes', new Error('connection reset'));
    assert.deepEqual(await f.sweep.sweep(), { locks: 0, released: 0, waiting: 0, failed: 1 });
    assert.equal((await f.sweep.sweep()).waiting, 1);
  });
});

const UNIQUE = 'kubernetes.io/csi/test.csi.k8s.io^h1';
const PV: PvRecord = { name: 'pv-1', phase: 'Bound', accessModes: ['ReadWriteOnce'], csi: { driver: 'test.csi.k8s.io', volumeHandle: 'h1', readOnly: false } };

/**
 * One replica holding n1 and n2: the executor attaches through the sharded attach lock, and the
 * lock's `needed` is the controller's (lock-needs.ts) over the state and the VolumeAttachments.
 */
function replicaFixture(holdMs: number) {
  const state = createWorldState();
  const plugin = createFakeAttachablePlugin({ autoSucceed: false });
  // The VolumeAttachments by PV, as the lock's `needed` and the legacy-attachment check both see them.
  const attachments = new Map<string, Set<string>>();
  const needed = createLockNeeds({ state, pvs: new Map([['pv-1', PV]]), attachments: { nodesOf: (pv) => attachments.get(pv) ?? new Set() } });
  const f = shardWritesFixture({ owned: ['n1', 'n2'], holdMs, needed, attached: attachments });
  f.api.persistentVolumes.set('pv-1', pvMeta('pv-1'));
  const executor = createOperationExecutor({
    state, plugins: createVolumePluginManager({ plugins: [plugin] }), metrics: createControllerMetrics({ processMetrics: false }),
    events: createFakeEventRecorder(), podName: () => undefined, now: () => 1_000,
    liveVolumesInUse: async () => [],
    mayStart: (n) => f.owned.has(n),
    attachLock: f.writes.attachLock!,
  });
  const spec: VolumeSpec = { name: 'pv-1', origin: 'pv', source: { type: 'csi', driver: 'test.csi.k8s.io', volumeHandle: 'h1' }, accessModes: ['ReadWriteOnce'], readOnly: false, migrated: false };
  const v = state.internVolume(UNIQUE);
  state.setVolumeInfo(v, volumeInfoFor(UNIQUE, spec, 'kubernetes.io/csi'));
  state.setMultiAttachForbidden(v, true);
  const node = (name: string) => {
    const n = state.internNode(name);
    state.setNodeManaged(n);
    state.setNodeHealthy(n, true);
    state.setVolumesInUse(n, []);
    return n;
  };
  return { ...f, state, plugin, executor, v, node, attachments, sweep: f.writes.lockSweep! };
}

/** Lets the executor's promise chain run until `cond` holds (ordering, no timers). */
async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setImmediate(r));
  assert.ok(cond(), what);
}

const lockedOut = (err: unknown) => isFleetError(err) && err.code === 'FA_ERR_VOLUME_LOCKED' && /Multi-Attach/.test(err.message);

describe('the lock sweep in a replica', () => {
  it('never releases a lock whose attach is in flight, even with holdMs 0, and releases it once left over', async () => {
    const r = replicaFixture(0);
    const n1 = r.node('n1');
    r.state.addDesiredPod(r.v, n1, 'pod-1');
    assert.equal(r.executor.startAttach(r.v, n1), 'started');
    await until('the lock taken and the attach sent', () => r.plugin.calls.length === 1);
    assert.equal(r.holderOf('pv-1'), lockValue('n1', EPOCH));
    // Taken, no VolumeAttachment yet: the desired pod and the running operation need it.
    assert.equal((await r.sweep.sweep()).released, 0);
    r.state.removeDesiredPod(r.v, n1, 'pod-1'); // the pod went away while the attach is on the wire
    assert.equal((await r.sweep.sweep()).released, 0, 'the running attach still needs it');
    await assert.rejects(r.writes.attachLock!.take('pv-1', 'n2'), lockedOut);
    r.attachments.set('pv-1', new Set(['n1'])); // the VolumeAttachment is committed
    r.plugin.calls[0]!.finish();
    await r.executor.idle();
    assert.equal(r.state.attachState(r.v, n1), 'attached');
    assert.equal((await r.sweep.sweep()).released, 0, 'attached: needed');
    assert.equal(r.holderOf('pv-1'), lockValue('n1', EPOCH));
    // The detach finished under an earlier owner, which died before the release.
    r.attachments.delete('pv-1');
    r.state.markDetached(r.v, n1);
    assert.equal((await r.sweep.sweep()).released, 1);
    assert.equal(r.holderOf('pv-1'), undefined);
  });

  it("take clears another node's left-over lock only once the sweep's count says so", async () => {
    const r = replicaFixture(HOLD);
    r.node('n1');
    const n2 = r.node('n2');
    r.api.persistentVolumes.set('pv-1', { ...pvMeta('pv-1', 'n1') });
    r.clock.t = 0;
    assert.equal((await r.sweep.sweep()).waiting, 1, 'the sweep starts the count');
    r.clock.t = HOLD - 1;
    r.state.addDesiredPod(r.v, n2, 'pod-2');
    assert.equal(r.executor.startAttach(r.v, n2), 'started');
    await r.executor.idle();
    assert.equal(r.plugin.calls.length, 0, 'refused before any attach');
    assert.equal(r.holderOf('pv-1'), lockValue('n1', 1));
    // At holdMs since the sweep's first look, take clears it (its own attach on n2 is not counted).
    r.clock.t = HOLD;
    await r.writes.attachLock!.take('pv-1', 'n2');
    assert.equal(r.holderOf('pv-1'), lockValue('n2', EPOCH));
  });

  it('take counts from its own first look when the sweep has not seen the lock', async () => {
    const r = replicaFixture(HOLD);
    r.api.persistentVolumes.set('pv-1', { ...pvMeta('pv-1', 'n1') });
    r.clock.t = 5000;
    await assert.rejects(r.writes.attachLock!.take('pv-1', 'n2'), lockedOut);
    r.clock.t = 5000 + HOLD;
    await r.writes.attachLock!.take('pv-1', 'n2');
    assert.equal(r.holderOf('pv-1'), lockValue('n2', EPOCH));
  });
});

describe('a sharded controller', () => {
  const BUCKETS = 8;
  let sim: Simulator;
  let ctl: Controller;

  before(async () => {
    sim = await startSimulator({ fleet: { nodes: 4, podsPerNode: 1, seed: 3, attachLatencyMs: 20, detachLatencyMs: 20, mountLatencyMs: 20, unmountLatencyMs: 20 }, bookmarkIntervalMs: 200 });
    ctl = await startController({
      ...controllerDefaults(sim), sharding: true, shardBuckets: BUCKETS, identity: 'sweeper',
      leaderElectLeaseDurationMs: 3000, leaderElectRenewDeadlineMs: 2000, leaderElectRetryPeriodMs: 300, shardGraceMs: 500, shardStableMs: 300,
      shardLockSweepMs: 200, shardLockSweepHoldMs: 600,
    });
  });
  after(async () => {
    await ctl.stop();
    await sim.stop();
  });

  it('sweeps a lock left over on a PersistentVolume nothing uses, through the API', async () => {
    const node = sim.store.list('nodes')[0]!.metadata.name;
    sim.store.create('persistentvolumes', {
      apiVersion: 'v1', kind: 'PersistentVolume',
      metadata: { name: 'pv-left-over', annotations: { [ATTACH_LOCK_ANNOTATION]: lockValue(node, 1) }, labels: { [LOCK_BUCKET_LABEL]: String(bucketOf(node, BUCKETS)) } },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Retain', csi: { driver: 'test.csi.k8s.io', volumeHandle: 'left-over' } },
      status: { phase: 'Available' },
    });
    const lockOf = () => (sim.store.get('persistentvolumes', undefined, 'pv-left-over')?.metadata.annotations as Record<string, string> | undefined)?.[ATTACH_LOCK_ANNOTATION];
    assert.equal(lockOf(), lockValue(node, 1));
    await waitFor('the left-over lock released', () => lockOf() === undefined, 15_000);
    assert.equal((sim.store.get('persistentvolumes', undefined, 'pv-left-over')?.metadata.labels as Record<string, string> | undefined)?.[LOCK_BUCKET_LABEL], undefined);
  });
});
