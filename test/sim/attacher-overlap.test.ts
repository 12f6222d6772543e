// A controller that deletes a ReadWriteOnce VolumeAttachment on one node and at once creates
// one on another (not waiting for the detach: the bug the attacher's Multi-Attach refusal
// exists to expose) must be refused at least sometimes, as a real driver's publish on the
// second node can overlap the unpublish on the first. With fixed latencies it never was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { populateFleet, startFleetActors, volumeAttachmentName } from '../../src/sim/actors/index.js';
import type { SimStore } from '../../src/sim/store/sim-store.js';
import { specOf, statusOf, testStore, waitFor } from './actors-helpers.js';

const driver = 'attach.test.csi';
function createVa(store: SimStore, pvName: string, node: string): string {
  const handle = (specOf(store.get('persistentvolumes', undefined, pvName)).csi as { volumeHandle: string }).volumeHandle;
  const name = volumeAttachmentName(handle, driver, node);
  store.create('volumeattachments', { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name }, spec: { attacher: driver, nodeName: node, source: { persistentVolumeName: pvName } } });
  return name;
}

test('delete-then-create-elsewhere without waiting for detach is refused at least once in 10 tries', async () => {
  const store = testStore();
  await populateFleet(store, { nodes: 2, podsPerNode: 1, driver, rwxFraction: 0 });
  const actors = startFleetActors(store, { driver, attacher: true, kubelet: false }); // default latencies
  try {
    let refused = 0;
    let from = 'node-000001';
    let to = 'node-000002';
    let cur = createVa(store, 'pv-000001-00', from);
    await waitFor('attached', () => statusOf(store.get('volumeattachments', undefined, cur)).attached === true);
    for (let i = 0; i < 10; i++) {
      store.delete('volumeattachments', undefined, cur);
      const next = createVa(store, 'pv-000001-00', to);
      await waitFor('settled', () => {
        const s = statusOf(store.get('volumeattachments', undefined, next));
        if (s.attachError) refused++;
        return s.attached === true;
      });
      await waitFor('old gone', () => store.get('volumeattachments', undefined, cur) === undefined);
      cur = next;
      [from, to] = [to, from];
    }
    assert.ok(refused > 0, `refused ${refused} of 10; multiAttachRefused=${actors.stats().attacher.multiAttachRefused}`);
  } finally {
    await actors.stop();
  }
});
