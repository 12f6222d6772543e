import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONTROLLER_MANAGED_ANNOTATION, DEFAULT_FLEET_ACTOR_OPTIONS, FLEET_NAMESPACE, populateFleet } from '../../src/sim/actors/index.js';
import type { KubeObject, SimStore } from '../../src/sim/store/sim-store.js';
import { specOf, statusOf, testStore } from './actors-helpers.js';

const driver = DEFAULT_FLEET_ACTOR_OPTIONS.driver;

test('generator: nodes are Ready and managed, every pod is scheduled and uses a bound PVC/PV pair', async () => {
  // Arrange
  const store = testStore();
  // Act
  const counts = await populateFleet(store, { seed: 3, nodes: 12, podsPerNode: 4, rwxFraction: 0.5 });
  // Assert
  assert.equal(counts.nodes, 12);
  assert.equal(counts.pods, 48);
  assert.equal(store.count('nodes'), 12);
  assert.equal(store.count('pods'), 48);
  assert.equal(store.count('persistentvolumeclaims'), 48);
  assert.equal(store.count('persistentvolumes'), 48);
  const csi = store.get('csidrivers', undefined, driver);
  assert.equal(specOf(csi).attachRequired, true);
  for (const node of store.list('nodes')) {
    assert.ok(node.metadata.annotations?.[CONTROLLER_MANAGED_ANNOTATION] !== undefined, 'managed annotation');
    const ready = (statusOf(node).conditions as Array<{ type: string; status: string }>).find((c) => c.type === 'Ready');
    assert.equal(ready?.status, 'True');
  }
  const nodeNames = new Set(store.list('nodes').map((n) => n.metadata.name));
  const handles = new Set<string>();
  const modes = new Map<string, number>();
  const podsPerNode = new Map<string, number>();
  for (const pod of store.list('pods', FLEET_NAMESPACE)) {
    const spec = specOf(pod);
    assert.ok(nodeNames.has(spec.nodeName as string), 'scheduled on an existing node');
    podsPerNode.set(spec.nodeName as string, (podsPerNode.get(spec.nodeName as string) ?? 0) + 1);
    assert.equal(statusOf(pod).phase, 'Running');
    const claim = (spec.volumes as Array<{ persistentVolumeClaim: { claimName: string } }>)[0].persistentVolumeClaim.claimName;
    const pvc = store.get('persistentvolumeclaims', FLEET_NAMESPACE, claim) as KubeObject;
    assert.equal(statusOf(pvc).phase, 'Bound');
    const pv = store.get('persistentvolumes', undefined, specOf(pvc).volumeName as string) as KubeObject;
    assert.equal(statusOf(pv).phase, 'Bound');
    const ref = specOf(pv).claimRef as { namespace: string; name: string; uid: string };
    assert.deepEqual([ref.namespace, ref.name, ref.uid], [FLEET_NAMESPACE, claim, pvc.metadata.uid]);
    const source = specOf(pv).csi as { driver: string; volumeHandle: string };
    assert.equal(source.driver, driver);
    handles.add(source.volumeHandle);
    const mode = (specOf(pv).accessModes as string[]).join(',');
    modes.set(mode, (modes.get(mode) ?? 0) + 1);
    assert.deepEqual(specOf(pvc).accessModes, specOf(pv).accessModes);
  }
  assert.equal(handles.size, 48, 'volume handles are unique');
  assert.deepEqual([...modes.keys()].sort(), ['ReadWriteMany', 'ReadWriteOnce']);
  assert.ok([...podsPerNode.values()].every((n) => n === 4));
});

test('generator: rwxFraction 0 gives only ReadWriteOnce, and nodes 0 gives an empty cluster', async () => {
  const store = testStore();
  await populateFleet(store, { nodes: 3, podsPerNode: 5, rwxFraction: 0 });
  assert.ok(store.list('persistentvolumes').every((pv) => (specOf(pv).accessModes as string[])[0] === 'ReadWriteOnce'));
  const empty = testStore();
  const counts = await populateFleet(empty, { nodes: 0 });
  assert.equal(empty.count('nodes'), 0);
  assert.equal(empty.count('pods'), 0);
  assert.equal(counts.csiDrivers, 1);
  assert.ok(empty.get('namespaces', undefined, FLEET_NAMESPACE));
  assert.ok(empty.get('namespaces', undefined, 'kube-node-lease'));
});

// A seed-independent projection of a fleet: everything but server-set metadata.
function fleetShape(store: SimStore): string {
  const strip = (o: KubeObject) => ({ name: o.metadata.name, ns: o.metadata.namespace, spec: { ...specOf(o), claimRef: undefined } });
  return JSON.stringify(['nodes', 'pods', 'persistentvolumeclaims', 'persistentvolumes'].map((r) => store.list(r as 'pods').map(strip).sort((a, b) => a.name.localeCompare(b.name))));
}

test('generator: the same seed gives the same fleet, another seed another one', async () => {
  const a = testStore();
  const b = testStore();
  const c = testStore();
  await populateFleet(a, { seed: 42, nodes: 5, podsPerNode: 3, rwxFraction: 0.3 });
  await populateFleet(b, { seed: 42, nodes: 5, podsPerNode: 3, rwxFraction: 0.3 });
  await populateFleet(c, { seed: 43, nodes: 5, podsPerNode: 3, rwxFraction: 0.3 });
  assert.equal(fleetShape(a), fleetShape(b));
  assert.notEqual(fleetShape(a), fleetShape(c));
});

test('generator: invalid options are refused with the field named', async () => {
  await assert.rejects(populateFleet(testStore(), { nodes: -1 }), /options\.nodes/);
  await assert.rejects(populateFleet(testStore(), { rwxFraction: 2 }), /options\.rwxFraction/);
  await assert.rejects(populateFleet(testStore(), { driver: 'Bad Driver' }), /options\.driver/);
});
