import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FLEET_NAMESPACE, populateFleet, startFleetActors } from '../../src/sim/actors/index.js';
import { createChurn } from '../../src/sim/actors/churn.js';
import { FleetIndex } from '../../src/sim/actors/fleet-index.js';
import { createPrng } from '../../src/sim/actors/prng.js';
import type { KubeObject } from '../../src/sim/store/sim-store.js';
import { specOf, statusOf, testStore, waitFor } from './actors-helpers.js';

test('churn: deletes, creates and reschedules pods; the count stays near the fleet size and every claim is bound', async () => {
  // Arrange: 20 nodes × 5 pods, kubelets on so that deletions are graceful and finished by them.
  const store = testStore();
  await populateFleet(store, { seed: 5, nodes: 20, podsPerNode: 5, rwxFraction: 0.2 });
  const moves: Array<{ name: string; from: string; to: string }> = [];
  const lastNode = new Map<string, string>();
  const unsubscribe = store.subscribe((ev) => {
    if (ev.resource !== 'pods') return;
    const node = specOf(ev.object()).nodeName as string;
    if (ev.type === 'ADDED' && lastNode.has(ev.name) && lastNode.get(ev.name) !== node) moves.push({ name: ev.name, from: lastNode.get(ev.name) as string, to: node });
    lastNode.set(ev.name, node);
  });
  const actors = startFleetActors(store, { seed: 5, nodes: 20, podsPerNode: 5, rwxFraction: 0.2, attacher: false, kubelet: true, mountLatencyMs: 10, unmountLatencyMs: 10, churn: 200 });
  try {
    // Act
    await waitFor('churn', () => {
      const s = actors.stats().churn;
      return s.podsCreated >= 20 && s.podsDeleted >= 40 && s.podsRescheduled >= 10 && s.claimsDeleted >= 10;
    });
    // Assert, in one synchronous step so the store does not move underneath.
    const pods = store.list('pods', FLEET_NAMESPACE);
    const claims = store.count('persistentvolumeclaims');
    const pending = actors.stats().churn.pending;
    assert.ok(pods.length >= 70 && pods.length <= 130, `pod count ${pods.length} stays near 100`);
    assert.ok(claims >= pods.length && claims <= pods.length + pending, `claims ${claims} of pods ${pods.length} (+${pending} pending): deleted pods' claims are removed`);
    for (const pod of pods) {
      const claim = (specOf(pod).volumes as Array<{ persistentVolumeClaim: { claimName: string } }>)[0].persistentVolumeClaim.claimName;
      const pvc = store.get('persistentvolumeclaims', FLEET_NAMESPACE, claim) as KubeObject;
      assert.equal(statusOf(pvc).phase, 'Bound', `claim ${claim} of ${pod.metadata.name}`);
      const pv = store.get('persistentvolumes', undefined, specOf(pvc).volumeName as string) as KubeObject;
      assert.equal((specOf(pv).claimRef as { uid: string }).uid, pvc.metadata.uid);
    }
    assert.ok(moves.length > 0, 'some pods came back under the same name on another node');
    for (const m of moves.slice(0, 20)) {
      const pod = store.get('pods', FLEET_NAMESPACE, m.name);
      if (!pod) continue;
      const claim = (specOf(pod).volumes as Array<{ persistentVolumeClaim: { claimName: string } }>)[0].persistentVolumeClaim.claimName;
      const pv = store.get('persistentvolumes', undefined, specOf(store.get('persistentvolumeclaims', FLEET_NAMESPACE, claim)).volumeName as string);
      assert.deepEqual(specOf(pv).accessModes, ['ReadWriteOnce'], 'only RWO pods are rescheduled with their claim');
    }
  } finally {
    unsubscribe();
    await actors.stop();
  }
});

test('churn: the rate holds however a tick is sliced (credit accrues with time, not per call)', async () => {
  const store = testStore();
  await populateFleet(store, { seed: 3, nodes: 10, podsPerNode: 10 });
  const index = new FleetIndex();
  for (const r of ['nodes', 'persistentvolumes', 'pods'] as const) for (const o of store.list(r)) index.applyEvent('ADDED', r, o);
  const churn = createChurn({ store, index, prng: createPrng(3), rate: 100, driver: 'd', rwxFraction: 0, targetPods: 0, graceful: false });
  const changes = () => {
    const s = churn.stats();
    return s.podsDeleted + s.podsCreated + s.skipped;
  };
  const far = () => Number.POSITIVE_INFINITY; // a slice deadline that never passes: the rate alone bounds the work
  // Ten periods of 100 ms, each run as one call or as three slices at the same time: 100/s × 1 s.
  let now = 1_000_000;
  churn.tick(now, far());
  const first = changes();
  for (let i = 0; i < 10; i++) {
    now += 100;
    churn.tick(now, far());
    churn.tick(now, far());
    churn.tick(now + 1, far());
  }
  const made = changes() - first;
  assert.ok(made >= 95 && made <= 105, `${made} changes in 1 s at 100/s`);
});

test('churn started on a running fleet: runs on the shared index, once, and not after stop', async () => {
  const store = testStore();
  await populateFleet(store, { seed: 7, nodes: 10, podsPerNode: 5 });
  const actors = startFleetActors(store, { seed: 7, nodes: 10, podsPerNode: 5, attacher: false, kubelet: true, mountLatencyMs: 10, unmountLatencyMs: 10, churn: 0 });
  try {
    assert.equal(actors.stats().churn, undefined, 'no churn before it is started');
    assert.equal(actors.startChurn(200), true);
    assert.equal(actors.startChurn(200), false, 'a second churn is refused');
    await waitFor('churn on the running fleet', () => {
      const s = actors.stats().churn;
      return s !== undefined && s.podsCreated >= 5 && s.podsDeleted >= 10;
    });
    // The shared index saw churn's own writes: its pod count follows the store's.
    await waitFor('index in step', () => actors.stats().index.pods === store.count('pods'));
  } finally {
    await actors.stop();
  }
  assert.equal(actors.startChurn(200), false, 'a stopped fleet starts nothing');
});

test('churn stopped on a running fleet: no pod is created or deleted after, and it can start again', async () => {
  const store = testStore();
  await populateFleet(store, { seed: 7, nodes: 10, podsPerNode: 5 });
  const actors = startFleetActors(store, { seed: 7, nodes: 10, podsPerNode: 5, attacher: false, kubelet: true, mountLatencyMs: 10, unmountLatencyMs: 10, churn: 0 });
  try {
    assert.equal(actors.stopChurn(), false, 'nothing to stop before it is started');
    assert.equal(actors.startChurn(400), true);
    await waitFor('churn running', () => (actors.stats().churn?.podsCreated ?? 0) >= 3);
    assert.equal(actors.stopChurn(), true);
    assert.equal(actors.stats().churn, undefined, 'churn is no longer an actor');
    // Deletions already requested finish through the kubelets; then nothing changes.
    await new Promise((r) => setTimeout(r, 300));
    let creates = 0;
    let deletes = 0;
    const unsubscribe = store.subscribe((ev) => {
      if (ev.resource !== 'pods') return;
      if (ev.type === 'ADDED') creates++;
      else if (ev.type === 'DELETED') deletes++;
    });
    await new Promise((r) => setTimeout(r, 500));
    unsubscribe();
    assert.deepEqual({ creates, deletes }, { creates: 0, deletes: 0 });
    assert.equal(actors.startChurn(400), true, 'started again');
  } finally {
    await actors.stop();
  }
});
