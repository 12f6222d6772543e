import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FLEET_NAMESPACE, NODE_LEASE_NAMESPACE, populateFleet, startFleetActors, type FleetActors } from '../../src/sim/actors/index.js';
import type { SimStore } from '../../src/sim/store/sim-store.js';
import { podVolumeName, setNodeReady, setVolumesAttached, specOf, testStore, volumesInUse, waitFor } from './actors-helpers.js';

/** Nodes × pods with the kubelets alone running (no attacher: tests write volumesAttached). */
async function setup(nodes: number, podsPerNode: number, leaseRenewMs = 10_000): Promise<{ store: SimStore; actors: FleetActors }> {
  const store = testStore();
  await populateFleet(store, { nodes, podsPerNode });
  const actors = startFleetActors(store, { attacher: false, kubelet: true, mountLatencyMs: 20, unmountLatencyMs: 20, leaseRenewMs });
  return { store, actors };
}

/** Lists both volumes of node-000001's two pods as attached and waits until both are in use. */
async function mountBoth(store: SimStore): Promise<[string, string]> {
  const [v0, v1] = [podVolumeName(store, FLEET_NAMESPACE, 'pod-000001-00'), podVolumeName(store, FLEET_NAMESPACE, 'pod-000001-01')];
  setVolumesAttached(store, 'node-000001', [v0, v1]);
  await waitFor('both in use', () => volumesInUse(store, 'node-000001').length === 2);
  return [v0, v1];
}

test('kubelet: mounts a volume only once volumesAttached lists it, and only on Ready nodes', async () => {
  // Arrange: node 1 Ready, node 2 NotReady; each has two pods.
  const { store, actors } = await setup(2, 2);
  try {
    const [a0, a1] = [podVolumeName(store, FLEET_NAMESPACE, 'pod-000001-00'), podVolumeName(store, FLEET_NAMESPACE, 'pod-000001-01')];
    const b0 = podVolumeName(store, FLEET_NAMESPACE, 'pod-000002-00');
    setNodeReady(store, 'node-000002', 'False');
    // Act: node 1 lists only its first volume; node 2 lists its first volume.
    setVolumesAttached(store, 'node-000001', [a0]);
    setVolumesAttached(store, 'node-000002', [b0]);
    // Assert
    await waitFor('a0 in use', () => volumesInUse(store, 'node-000001').includes(a0));
    assert.deepEqual(volumesInUse(store, 'node-000001'), [a0], 'a1 is not attached, so not mounted');
    setVolumesAttached(store, 'node-000001', [a0, a1]);
    await waitFor('a1 in use', () => volumesInUse(store, 'node-000001').includes(a1));
    assert.deepEqual(volumesInUse(store, 'node-000002'), [], 'a NotReady node mounts nothing');
    // Recovery: the node catches up.
    setNodeReady(store, 'node-000002', 'True');
    await waitFor('b0 in use after recovery', () => volumesInUse(store, 'node-000002').includes(b0));
  } finally {
    await actors.stop();
  }
});

test('kubelet: a graceful pod deletion stops the pod, unmounts its volume, then deletes the pod', async () => {
  const { store, actors } = await setup(1, 2);
  try {
    const [v0, v1] = await mountBoth(store);
    const inUseWhenGone: string[][] = [];
    const containerStates: string[] = [];
    const unsubscribe = store.subscribe((ev) => {
      if (ev.resource !== 'pods' || ev.name !== 'pod-000001-00') return;
      if (ev.type === 'DELETED') inUseWhenGone.push(volumesInUse(store, 'node-000001'));
      else containerStates.push(Object.keys(((ev.object().status as { containerStatuses: Array<{ state: object }> }).containerStatuses[0]).state)[0]);
    });
    // Act
    const after = store.delete('pods', FLEET_NAMESPACE, 'pod-000001-00');
    assert.ok(after?.metadata.deletionTimestamp, 'graceful: the pod stays until the kubelet finishes it');
    // Assert
    await waitFor('pod gone', () => store.get('pods', FLEET_NAMESPACE, 'pod-000001-00') === undefined);
    unsubscribe();
    assert.deepEqual(inUseWhenGone, [[v1]], 'the volume was unmounted before the pod was deleted');
    assert.ok(containerStates.includes('terminated'), 'containers were stopped first');
    assert.deepEqual(volumesInUse(store, 'node-000001'), [v1]);
  } finally {
    await actors.stop();
  }
});

test('kubelet: a pod deleted while its node is NotReady is stopped and finished once the node recovers', async () => {
  const { store, actors } = await setup(1, 2);
  try {
    const [v0, v1] = await mountBoth(store);
    setNodeReady(store, 'node-000001', 'False');
    store.delete('pods', FLEET_NAMESPACE, 'pod-000001-00');
    await new Promise((r) => setTimeout(r, 200)); // ten ticks, and ten mount latencies
    const held = store.get('pods', FLEET_NAMESPACE, 'pod-000001-00');
    assert.ok(held?.metadata.deletionTimestamp, 'a NotReady node finishes nothing');
    assert.ok(JSON.stringify(held.status).includes('running'), 'nor stops containers');
    assert.equal(volumesInUse(store, 'node-000001').length, 2);
    setNodeReady(store, 'node-000001', 'True');
    await waitFor('pod gone after recovery', () => store.get('pods', FLEET_NAMESPACE, 'pod-000001-00') === undefined);
    assert.deepEqual(volumesInUse(store, 'node-000001'), [v1]);
  } finally {
    await actors.stop();
  }
});

test('kubelet: a terminated pod and a force-deleted pod release their volumes', async () => {
  const { store, actors } = await setup(1, 2);
  try {
    const [v0, v1] = await mountBoth(store);
    store.mutate('pods', FLEET_NAMESPACE, 'pod-000001-00', (o) => {
      o.status = { ...(o.status as object), phase: 'Succeeded' };
    });
    await waitFor('v0 unmounted', () => !volumesInUse(store, 'node-000001').includes(v0));
    store.delete('pods', FLEET_NAMESPACE, 'pod-000001-01', { gracePeriodSeconds: 0 });
    await waitFor('v1 unmounted', () => volumesInUse(store, 'node-000001').length === 0);
  } finally {
    await actors.stop();
  }
});

test('kubelet: heartbeats are Leases in kube-node-lease, renewed; NotReady nodes stop renewing', async () => {
  const { store, actors } = await setup(3, 0, 300);
  try {
    setNodeReady(store, 'node-000003', 'False');
    const lease = (n: string) => store.get('leases', NODE_LEASE_NAMESPACE, n);
    const first = await waitFor('leases', () => lease('node-000001') && lease('node-000002') && lease('node-000001'));
    assert.equal(specOf(first).holderIdentity, 'node-000001');
    const renewTime = specOf(first).renewTime as string;
    await waitFor('renewed', () => specOf(lease('node-000001')).renewTime !== renewTime);
    assert.equal(lease('node-000003'), undefined);
    const nodeRv = store.get('nodes', undefined, 'node-000001')?.metadata.resourceVersion;
    await waitFor('renewed again', () => (actors.stats()['node-lease'].leasesRenewed ?? 0) >= 4);
    assert.equal(store.get('nodes', undefined, 'node-000001')?.metadata.resourceVersion, nodeRv, 'heartbeats do not write the Node');
  } finally {
    await actors.stop();
  }
});
