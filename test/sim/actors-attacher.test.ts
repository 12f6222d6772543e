import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attacherFinalizer, populateFleet, startFleetActors, volumeAttachmentName, type FleetActors } from '../../src/sim/actors/index.js';
import type { KubeObject, SimStore } from '../../src/sim/store/sim-store.js';
import { specOf, statusOf, testStore, waitFor } from './actors-helpers.js';

const driver = 'attach.test.csi';

/** A store with `nodes` nodes × 1 pod, and the attacher alone running. */
async function setup(nodes: number, opts: { rwxFraction?: number; attachFailureRate?: number } = {}): Promise<{ store: SimStore; actors: FleetActors }> {
  const store = testStore();
  await populateFleet(store, { nodes, podsPerNode: 1, driver, rwxFraction: opts.rwxFraction ?? 0 });
  const actors = startFleetActors(store, { driver, attacher: true, kubelet: false, attachLatencyMs: 20, detachLatencyMs: 20, attachFailureRate: opts.attachFailureRate ?? 0 });
  return { store, actors };
}

function createVa(store: SimStore, pvName: string, node: string, attacher = driver): string {
  const handle = (specOf(store.get('persistentvolumes', undefined, pvName)).csi as { volumeHandle: string }).volumeHandle;
  const name = volumeAttachmentName(handle, attacher, node);
  store.create('volumeattachments', { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name }, spec: { attacher, nodeName: node, source: { persistentVolumeName: pvName } } });
  return name;
}

const va = (store: SimStore, name: string): KubeObject | undefined => store.get('volumeattachments', undefined, name);

test('attacher: adds its finalizer, then sets status.attached', async () => {
  // Arrange
  const { store, actors } = await setup(1);
  try {
    // Act
    const name = createVa(store, 'pv-000001-00', 'node-000001');
    // Assert
    const done = await waitFor('attached', () => (statusOf(va(store, name)).attached === true ? va(store, name) : undefined));
    assert.deepEqual(done.metadata.finalizers, [attacherFinalizer(driver)]);
    assert.equal(statusOf(done).attachError, undefined);
    assert.equal(actors.stats().attacher.attached, 1);
  } finally {
    await actors.stop();
  }
});

test('attacher: failure rate 1 reports status.attachError and never attaches', async () => {
  const { store, actors } = await setup(1, { attachFailureRate: 1 });
  try {
    const name = createVa(store, 'pv-000001-00', 'node-000001');
    const failed = await waitFor('attachError', () => (statusOf(va(store, name)).attachError ? va(store, name) : undefined));
    const err = statusOf(failed).attachError as { time: string; message: string };
    assert.match(err.message, /simulated/);
    assert.ok(!Number.isNaN(Date.parse(err.time)));
    assert.notEqual(statusOf(failed).attached, true);
    // Retried with backoff: a second failure is recorded, still not attached.
    await waitFor('a retry', () => actors.stats().attacher.attachErrors >= 2);
    assert.notEqual(statusOf(va(store, name)).attached, true);
  } finally {
    await actors.stop();
  }
});

test('attacher: refuses a ReadWriteOnce volume on a second node until the first detaches', async () => {
  const { store, actors } = await setup(2);
  try {
    const first = createVa(store, 'pv-000001-00', 'node-000001');
    await waitFor('first attached', () => statusOf(va(store, first)).attached === true);
    const second = createVa(store, 'pv-000001-00', 'node-000002');
    const refused = await waitFor('multi-attach error', () => (statusOf(va(store, second)).attachError ? va(store, second) : undefined));
    assert.match((statusOf(refused).attachError as { message: string }).message, /Multi-Attach/);
    assert.ok(actors.stats().attacher.multiAttachRefused >= 1);
    // Once the first is detached (deleted), a retry attaches the second.
    store.delete('volumeattachments', undefined, first);
    await waitFor('first detached', () => va(store, first) === undefined);
    await waitFor('second attached after retry', () => statusOf(va(store, second)).attached === true);
  } finally {
    await actors.stop();
  }
});

test('attacher: a ReadWriteMany volume attaches to two nodes', async () => {
  const { store, actors } = await setup(2, { rwxFraction: 1 });
  try {
    const a = createVa(store, 'pv-000001-00', 'node-000001');
    const b = createVa(store, 'pv-000001-00', 'node-000002');
    await waitFor('both attached', () => statusOf(va(store, a)).attached === true && statusOf(va(store, b)).attached === true);
  } finally {
    await actors.stop();
  }
});

test('attacher: deletion waits for the detach, then the finalizer goes and the object with it', async () => {
  const { store, actors } = await setup(1);
  try {
    const name = createVa(store, 'pv-000001-00', 'node-000001');
    await waitFor('attached', () => statusOf(va(store, name)).attached === true);
    const seen: string[] = [];
    const unsubscribe = store.subscribe((ev) => {
      if (ev.resource === 'volumeattachments' && ev.name === name) seen.push(ev.type);
    });
    const after = store.delete('volumeattachments', undefined, name);
    assert.ok(after?.metadata.deletionTimestamp, 'held by the finalizer');
    await waitFor('deleted', () => va(store, name) === undefined);
    unsubscribe();
    assert.equal(seen.at(-1), 'DELETED');
    assert.equal(actors.stats().attacher.detached, 1);
  } finally {
    await actors.stop();
  }
});

test('attacher: VolumeAttachments of another driver are left alone', async () => {
  const { store, actors } = await setup(1);
  try {
    const other = createVa(store, 'pv-000001-00', 'node-000001', 'other.csi');
    const mine = createVa(store, 'pv-000001-00', 'node-000001');
    await waitFor('mine attached', () => statusOf(va(store, mine)).attached === true);
    assert.equal(va(store, other)?.metadata.finalizers, undefined);
    // `attached: false` is the server's default at create (as kube-apiserver's); the attacher left it.
    assert.equal(statusOf(va(store, other)).attached, false);
  } finally {
    await actors.stop();
  }
});

test('attacher: a VolumeAttachment of a PV that does not exist yet fails until the PV appears, then attaches', async () => {
  const { store, actors } = await setup(1);
  try {
    const name = 'csi-late-pv';
    store.create('volumeattachments', { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name }, spec: { attacher: driver, nodeName: 'node-000001', source: { persistentVolumeName: 'late-pv' } } });
    const failed = await waitFor('attachError', () => (statusOf(va(store, name)).attachError ? va(store, name) : undefined));
    assert.match((statusOf(failed).attachError as { message: string }).message, /PersistentVolume "late-pv" not found/);
    store.create('persistentvolumes', { metadata: { name: 'late-pv' }, spec: { accessModes: ['ReadWriteOnce'], csi: { driver, volumeHandle: 'late' } } });
    const done = await waitFor('attached after the PV appeared', () => (statusOf(va(store, name)).attached === true ? va(store, name) : undefined));
    assert.equal(statusOf(done).attachError, undefined);
  } finally {
    await actors.stop();
  }
});
