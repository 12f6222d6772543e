/**
 * The remote store (src/sim/remote/remote-store.ts) against the simulator's API server: writes
 * predicted at once and sent through the API, read-modify-writes that lose a race with another
 * writer (409) applied again to the fresh object, status writes through `/status`, pod deletion
 * with grace periods, predicted uids translated, and the mirror following other writers.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRemoteStore, type RemoteStore } from '../../src/sim/remote/index.js';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import type { KubeObject, StoreEvent } from '../../src/sim/store/sim-store.js';

let sim: Simulator;
const stores: RemoteStore[] = [];

async function remote(): Promise<RemoteStore> {
  const s = await createRemoteStore({ kubeconfig: { yaml: sim.kubeconfig }, bookmarkIntervalMs: 1000, qps: 0, maxInFlight: 8 });
  stores.push(s);
  return s;
}

async function until(what: string, fn: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const node = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: {}, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
const counter = (o: KubeObject | undefined, key: string) => Number(o?.metadata.annotations?.[key] ?? 0);
const bump = (key: string) => (o: KubeObject) => {
  o.metadata.annotations = { ...o.metadata.annotations, [key]: String(counter(o, key) + 1) };
};

before(async () => {
  sim = await startSimulator({ host: '127.0.0.1', port: 0, bookmarkIntervalMs: 1000 });
  sim.store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns' } });
});

after(async () => {
  for (const s of stores) await s.close({ flushMs: 0 });
  await sim.stop();
});

test('a write shows at once in the mirror and reaches the server; the server\'s changes reach the mirror', async () => {
  const store = await remote();
  const events: StoreEvent[] = [];
  const unsubscribe = store.subscribe((ev) => events.push(ev));
  const created = store.create('nodes', node('n-basic'));
  assert.equal(created.metadata.name, 'n-basic');
  assert.equal(store.get('nodes', undefined, 'n-basic')?.metadata.uid, created.metadata.uid);
  assert.deepEqual(events.map((e) => [e.type, e.name]), [['ADDED', 'n-basic']]);
  assert.throws(() => store.create('nodes', node('n-basic')), /already exists/);
  await store.drained();
  const stored = sim.store.get('nodes', undefined, 'n-basic');
  assert.ok(stored);
  // Once the write is done, the mirror holds the server's object (its uid, not the predicted one).
  assert.equal(store.get('nodes', undefined, 'n-basic')?.metadata.uid, stored.metadata.uid);
  // Another writer's change arrives through the watch.
  sim.store.mutate('nodes', undefined, 'n-basic', (o) => void (o.metadata.labels = { by: 'server' }));
  await until('the label in the mirror', () => store.get('nodes', undefined, 'n-basic')?.metadata.labels?.by === 'server');
  assert.equal(events.at(-1)?.type, 'MODIFIED');
  unsubscribe();
});

test('a read-modify-write that conflicts with another writer is applied again to the fresh object', async () => {
  const store = await remote();
  sim.store.create('nodes', node('n-conflict'));
  await until('the node in the mirror', () => store.get('nodes', undefined, 'n-conflict') !== undefined);
  const conflictsBefore = store.stats().conflicts;
  // The server's copy changes, and in the same turn the remote store writes from its (now stale) mirror.
  sim.store.mutate('nodes', undefined, 'n-conflict', bump('server'));
  store.mutate('nodes', undefined, 'n-conflict', bump('remote'));
  await store.drained();
  const stored = sim.store.get('nodes', undefined, 'n-conflict');
  assert.equal(counter(stored, 'server'), 1);
  assert.equal(counter(stored, 'remote'), 1);
  assert.ok(store.stats().conflicts > conflictsBefore, `conflicts: ${store.stats().conflicts}`);
  assert.equal(store.stats().errors, 0);
  await until('the mirror caught up', () => counter(store.get('nodes', undefined, 'n-conflict'), 'server') === 1);
});

test('two remote writers incrementing one counter lose no increment', async () => {
  const a = await remote();
  const b = await remote();
  sim.store.create('nodes', node('n-two'));
  await until('the node in both mirrors', () => a.get('nodes', undefined, 'n-two') !== undefined && b.get('nodes', undefined, 'n-two') !== undefined);
  const rounds = 20;
  for (let i = 0; i < rounds; i++) {
    a.mutate('nodes', undefined, 'n-two', bump('count'));
    b.mutate('nodes', undefined, 'n-two', bump('count'));
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all([a.drained(), b.drained()]);
  assert.equal(counter(sim.store.get('nodes', undefined, 'n-two'), 'count'), 2 * rounds);
  assert.equal(a.stats().errors + b.stats().errors, 0);
  assert.ok(a.stats().conflicts + b.stats().conflicts > 0, 'the writers raced');
});

test('a status change goes through the status subresource; metadata and status together take both calls', async () => {
  const store = await remote();
  store.create('nodes', node('n-status'));
  await store.drained();
  const before = store.stats();
  store.mutate('nodes', undefined, 'n-status', (o) => void (o.status = { ...(o.status as object), volumesInUse: ['v1'] }));
  await store.drained();
  // The simulator, like kube-apiserver, keeps the stored status on a write of the object itself.
  assert.deepEqual((sim.store.get('nodes', undefined, 'n-status')?.status as { volumesInUse?: string[] }).volumesInUse, ['v1']);
  assert.equal(store.stats().statusUpdates - before.statusUpdates, 1);
  assert.equal(store.stats().updates - before.updates, 0);
  store.mutate('nodes', undefined, 'n-status', (o) => {
    o.metadata.labels = { x: '1' };
    o.status = { ...(o.status as object), volumesInUse: [] };
  });
  await store.drained();
  const stored = sim.store.get('nodes', undefined, 'n-status');
  assert.equal(stored?.metadata.labels?.x, '1');
  // Emptied: not stored, as kube-apiserver stores no empty volumesInUse (omitempty).
  assert.equal((stored?.status as { volumesInUse?: string[] }).volumesInUse, undefined);
  assert.equal(store.stats().updates - before.updates, 1);
  assert.equal(store.stats().statusUpdates - before.statusUpdates, 2);
});

test('consecutive read-modify-writes of one object go as one call', async () => {
  const store = await remote();
  store.create('nodes', node('n-coalesce'));
  for (let i = 0; i < 10; i++) store.mutate('nodes', undefined, 'n-coalesce', bump('n'));
  assert.equal(counter(store.get('nodes', undefined, 'n-coalesce'), 'n'), 10, 'predicted at once');
  const before = store.stats().updates;
  await store.drained();
  assert.equal(counter(sim.store.get('nodes', undefined, 'n-coalesce'), 'n'), 10);
  assert.equal(store.stats().updates - before, 1);
});

test('a PersistentVolume created with the predicted uid of its claim is sent with the server\'s uid', async () => {
  const store = await remote();
  const pvc = store.create('persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c1', namespace: 'ns' }, spec: { accessModes: ['ReadWriteOnce'], volumeName: 'pv-c1' } });
  store.create('persistentvolumes', {
    apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-c1' },
    spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, csi: { driver: 'd', volumeHandle: 'h' }, claimRef: { namespace: 'ns', name: 'c1', uid: pvc.metadata.uid } },
  });
  await store.drained();
  const serverUid = sim.store.get('persistentvolumeclaims', 'ns', 'c1')?.metadata.uid;
  assert.ok(serverUid && serverUid !== pvc.metadata.uid);
  assert.equal((sim.store.get('persistentvolumes', undefined, 'pv-c1')?.spec as { claimRef: { uid: string } }).claimRef.uid, serverUid);
});

test('pod deletion honours the grace period; finalizers hold an object until they are removed', async () => {
  const store = await remote();
  const pod = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec: { nodeName: 'n-basic', containers: [{ name: 'c', image: 'i' }] }, status: { phase: 'Running' } });
  store.create('pods', pod('p-graceful'));
  store.create('pods', pod('p-now'));
  await store.drained();
  const marked = store.delete('pods', 'ns', 'p-graceful');
  assert.ok(marked?.metadata.deletionTimestamp, 'predicted: marked for deletion');
  assert.equal(store.delete('pods', 'ns', 'p-now', { gracePeriodSeconds: 0 })?.metadata.name, 'p-now');
  assert.equal(store.get('pods', 'ns', 'p-now'), undefined, 'predicted: gone');
  await store.drained();
  assert.equal(sim.store.get('pods', 'ns', 'p-graceful')?.metadata.deletionGracePeriodSeconds, 30);
  assert.equal(sim.store.get('pods', 'ns', 'p-now'), undefined);
  // The late watch events of p-now must not bring it back.
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(store.get('pods', 'ns', 'p-now'), undefined);
  store.delete('pods', 'ns', 'p-graceful', { gracePeriodSeconds: 0 });
  await store.drained();
  assert.equal(sim.store.get('pods', 'ns', 'p-graceful'), undefined);

  store.create('persistentvolumes', { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-fin', finalizers: ['test/hold'] }, spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' }, csi: { driver: 'd', volumeHandle: 'h2' } } });
  store.delete('persistentvolumes', undefined, 'pv-fin');
  assert.ok(store.get('persistentvolumes', undefined, 'pv-fin')?.metadata.deletionTimestamp);
  await store.drained();
  assert.ok(sim.store.get('persistentvolumes', undefined, 'pv-fin')?.metadata.deletionTimestamp, 'held by its finalizer');
  store.mutate('persistentvolumes', undefined, 'pv-fin', (o) => void (o.metadata.finalizers = []));
  assert.equal(store.get('persistentvolumes', undefined, 'pv-fin'), undefined, 'predicted: gone with its last finalizer');
  await store.drained();
  assert.equal(sim.store.get('persistentvolumes', undefined, 'pv-fin'), undefined);
  assert.equal(store.stats().errors, 0);
});

test('a pod waits for the pending create of its claim and of its namespace', async () => {
  const store = await remote();
  // Queued in the wrong order: the pod first.
  store.create('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns-order' } });
  const order: string[] = [];
  const off = sim.store.subscribe((ev) => {
    if (ev.type === 'ADDED' && ev.namespace === 'ns-order') order.push(`${ev.resource}/${ev.name}`);
  });
  store.create('pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns-order' }, spec: { nodeName: 'n-basic', containers: [{ name: 'c', image: 'i' }], volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'c' } }] } });
  store.create('persistentvolumeclaims', { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: 'ns-order' }, spec: { accessModes: ['ReadWriteOnce'] } });
  await store.drained();
  off();
  assert.deepEqual(order, ['persistentvolumeclaims/c', 'pods/p']);
  assert.equal(store.stats().errors, 0);
});
