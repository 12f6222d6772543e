/**
 * The actors' faults on a bare store (no API server, no controller): the test creates and
 * deletes VolumeAttachments and watches what the attacher, the flap and the node deletion
 * actors do while the injector's spec changes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONTROLLER_MANAGED_ANNOTATION, populateFleet, startFleetActors, uniqueVolumeName } from '../../src/sim/actors/index.js';
import { createFaultInjector } from '../../src/sim/faults/index.js';
import { createSimStore, type KubeObject, type ServableStore } from '../../src/sim/store/index.js';
import { waitFor } from '../controller/harness.js';
import { turns } from '../support/mock-clock.js';

const DRIVER = 'sim.csi.fleet-attach.io';

async function fleet(spec: string, nodes = 4) {
  const store = createSimStore();
  const faults = createFaultInjector({ spec, seed: 5 });
  const opts = { nodes, podsPerNode: 1, seed: 5, attachLatencyMs: 0, detachLatencyMs: 0, mountLatencyMs: 0, unmountLatencyMs: 0 };
  const actors = startFleetActors(store, opts, faults);
  await populateFleet(store, opts);
  return { store, faults, actors };
}

function va(store: ServableStore, name: string, pv: string, nodeName: string): void {
  store.create('volumeattachments', { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name }, spec: { attacher: DRIVER, nodeName, source: { persistentVolumeName: pv } } });
}
const status = (store: ServableStore, name: string) => store.get('volumeattachments', undefined, name)?.status as { attached?: boolean; attachError?: unknown; detachError?: unknown } | undefined;

describe('fleet actors under faults', () => {
  it('attach-fail makes the attacher report attachError until the fault is switched off', async () => {
    const { store, faults, actors } = await fleet('attach-fail=1');
    try {
      va(store, 'va-1', 'pv-000001-00', 'node-000001');
      await waitFor('attachError', () => status(store, 'va-1')?.attachError);
      assert.notEqual(status(store, 'va-1')?.attached, true);
      faults.set('none');
      await waitFor('attached after the fault stops', () => status(store, 'va-1')?.attached === true, 10_000);
      assert.ok(faults.counts()['attach-fail'] >= 1);
    } finally {
      await actors.stop();
    }
  });

  it('detach-fail keeps a deleted VolumeAttachment with detachError; slow-detach delays its removal', async (t) => {
    // The actors' clock is the test's: their ticks (setInterval) and Date.now() move only as the
    // test advances them, so a delay is measured on the clock the attacher schedules by.
    t.mock.timers.enable({ apis: ['setInterval', 'Date'], now: 0 });
    const advanceUntil = async (what: string, cond: () => unknown, maxMs = 60_000) => {
      for (let waited = 0; !cond(); waited += 10) {
        if (waited > maxMs) throw new Error(`not ${what} within ${maxMs} ms of the actors' clock`);
        t.mock.timers.tick(10);
        await turns(2); // a tick that ran out of its slice goes on after an immediate
      }
    };
    const { store, faults, actors } = await fleet('detach-fail=1');
    try {
      va(store, 'va-2', 'pv-000002-00', 'node-000002');
      await advanceUntil('attached', () => status(store, 'va-2')?.attached === true);
      store.delete('volumeattachments', undefined, 'va-2');
      await advanceUntil('detachError', () => status(store, 'va-2')?.detachError);
      assert.ok(store.get('volumeattachments', undefined, 'va-2'), 'the finalizer is kept while the detach fails');
      faults.set('slow-detach=600ms');
      await advanceUntil('removed once detaches succeed', () => !store.get('volumeattachments', undefined, 'va-2'));

      va(store, 'va-3', 'pv-000003-00', 'node-000003');
      await advanceUntil('attached', () => status(store, 'va-3')?.attached === true);
      let removedAt: number | undefined;
      const unsubscribe = store.subscribe((ev) => {
        if (ev.resource === 'volumeattachments' && ev.name === 'va-3' && ev.type === 'DELETED') removedAt = Date.now();
      });
      const t0 = Date.now();
      store.delete('volumeattachments', undefined, 'va-3');
      await advanceUntil('removed', () => removedAt !== undefined);
      unsubscribe();
      assert.ok(removedAt! - t0 >= 600, `removed ${removedAt! - t0} ms after the deletion, by the actors' clock: not the added delay`);
      assert.ok(faults.counts()['detach-fail'] >= 1 && faults.counts()['slow-detach'] >= 1);
    } finally {
      await actors.stop();
    }
  });

  it('the attacher protects a PV while a VolumeAttachment of it exists, as external-attacher does', async () => {
    const { store, actors } = await fleet('none');
    try {
      va(store, 'va-pv', 'pv-000001-00', 'node-000001');
      await waitFor('attached', () => status(store, 'va-pv')?.attached === true);
      assert.deepEqual(store.get('persistentvolumes', undefined, 'pv-000001-00')?.metadata.finalizers, ['external-attacher/sim.csi.fleet-attach.io']);
      store.delete('persistentvolumes', undefined, 'pv-000001-00');
      assert.ok(store.get('persistentvolumes', undefined, 'pv-000001-00')?.metadata.deletionTimestamp, 'being deleted, kept');
      store.delete('volumeattachments', undefined, 'va-pv');
      await waitFor('the PV gone once its VolumeAttachment is', () => !store.get('persistentvolumes', undefined, 'pv-000001-00'));
    } finally {
      await actors.stop();
    }
  });

  it('flap turns Ready nodes NotReady for a while and back', async () => {
    const { store, faults, actors } = await fleet('flap=50:down=300ms', 6);
    const notReady = (n: KubeObject) => (n.status as { conditions: Array<{ type: string; status: string }> }).conditions.some((c) => c.type === 'Ready' && c.status !== 'True');
    try {
      await waitFor('a node NotReady', () => store.list('nodes').some(notReady));
      faults.set('none');
      await waitFor('every node Ready again', () => !store.list('nodes').some(notReady), 10_000);
      assert.ok(faults.counts().flap >= 1);
    } finally {
      await actors.stop();
    }
  });

  it('delete-node removes a node with volumes attached, moves its pods, and brings it back', async () => {
    const { store, faults, actors } = await fleet('none', 6);
    try {
      // Plays the controller's part: node-000004 lists its volume as attached.
      const u = uniqueVolumeName(DRIVER, 'x');
      store.mutate('nodes', undefined, 'node-000004', (n) => { (n.status as Record<string, unknown>).volumesAttached = [{ name: u, devicePath: '' }]; });
      faults.set('delete-node=1000:gc=100ms:rejoin=500ms');
      await waitFor('node-000004 deleted', () => !store.get('nodes', undefined, 'node-000004'));
      faults.set('none');
      await waitFor('its pod recreated on another node', () => {
        const pod = store.get('pods', 'fleet', 'pod-000004-00');
        return pod && (pod.spec as { nodeName: string }).nodeName !== 'node-000004';
      }, 10_000);
      const back = await waitFor('node-000004 back', () => store.get('nodes', undefined, 'node-000004'), 10_000);
      assert.ok(Object.hasOwn(back.metadata.annotations ?? {}, CONTROLLER_MANAGED_ANNOTATION));
      assert.equal((back.status as { volumesAttached?: unknown[] }).volumesAttached, undefined, 'it rejoins empty (an empty list is not stored, as kube-apiserver stores none)');
      assert.equal(faults.counts()['delete-node'], 1, 'only nodes with volumes attached are deleted');
      assert.equal(store.count('nodes'), 6);
    } finally {
      await actors.stop();
    }
  });
});
