import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  attachVa, neverDuringPasses, node, setVolumesInUse, startHarness, uniqueName, vaName, createVolumeAndPod, volumesAttached, waitFor,
} from './harness.js';

test('a new pod gets its volume attached; node status lists it only once the VA is attached; detach after deletion once unmounted', async () => {
  const h = await startHarness();
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    createVolumeAndPod(store, 'default', 'h1');
    const va = vaName('h1', 'node-a');
    await waitFor('VolumeAttachment created', () => store.get('volumeattachments', undefined, va));
    const created = store.get('volumeattachments', undefined, va) as unknown as { spec: Record<string, unknown> };
    assert.deepEqual(created.spec, { attacher: 'test.csi.fleet-attach.io', nodeName: 'node-a', source: { persistentVolumeName: 'pv-h1' } });
    // Not attached yet: never reported in node status (Q2).
    await neverDuringPasses(h.ctl, 'volumesAttached before the VA is attached', () => volumesAttached(h.sim, 'node-a').length > 0, 10);
    attachVa(h.sim, va);
    await waitFor('volumesAttached lists the volume', () => volumesAttached(h.sim, 'node-a').includes(uniqueName('h1')));
    // Mounted, then the pod goes: no detach while mounted on a healthy node.
    setVolumesInUse(h.sim, 'node-a', [uniqueName('h1')]);
    store.delete('pods', 'default', 'pod-h1', { gracePeriodSeconds: 0 });
    await neverDuringPasses(h.ctl, 'detach while mounted on a healthy node', () => {
      const v = store.get('volumeattachments', undefined, va);
      return !v || v.metadata.deletionTimestamp;
    }, 10);
    // Unmounted: status is written without the volume first (F8), then the VA is deleted.
    const order: string[] = [];
    const unsub = store.subscribe((ev) => {
      if (ev.resource === 'nodes' && !volumesAttached(h.sim, 'node-a').includes(uniqueName('h1'))) order.push('status');
      if (ev.resource === 'volumeattachments' && ev.type === 'DELETED') order.push('va-deleted');
    });
    setVolumesInUse(h.sim, 'node-a', []);
    await waitFor('VA deleted', () => !store.get('volumeattachments', undefined, va));
    unsub();
    assert.ok(order.indexOf('status') >= 0 && order.indexOf('status') < order.indexOf('va-deleted'), `order ${order.join(',')}`);
    assert.deepEqual(volumesAttached(h.sim, 'node-a'), []);
  } finally {
    await h.stop();
  }
});
