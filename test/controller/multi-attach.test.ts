/**
 * ReadWriteOnce volumes between nodes (E1, G3, H1–H6, Q3): detached from the old node before
 * they are attached to the new one, one Multi-Attach event per desired entry with upstream's
 * text, and none of that for ReadWriteMany volumes, which attach to both nodes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  attachVa, attachVolume, createVolumeAndPod, neverDuringPasses, node, pod, podEvents, recordVolumeAttachments, setVolumesInUse, startHarness, uniqueName,
  vaExists, vaName, volumesAttached, waitFor, type Harness,
} from './harness.js';

const multiAttachEvents = (h: Harness, podName: string) =>
  podEvents(h.sim, 'FailedAttachVolume').filter((e) => e.pod === podName);

function desiredPods(h: Harness, handle: string, nodeName: string): number {
  const v = h.ctl.state.findVolume(uniqueName(handle));
  const n = h.ctl.state.findNode(nodeName);
  return v === undefined || n === undefined ? 0 : (h.ctl.state.pair(v, n)?.desiredPods ?? 0);
}

test('an RWO volume moving to another node is detached from the first before it is attached to the second, never on both (E1, G3, Q3)', async () => {
  const h = await startHarness({ waitingForDetachText: false }); // the older H3 texts
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    store.create('nodes', node('node-b'));
    const vas = recordVolumeAttachments(h.sim);
    const vaA = await attachVolume(h.sim, 'r1', { mounted: true });
    store.delete('pods', 'default', 'pod-r1', { gracePeriodSeconds: 0 });
    store.create('pods', pod('default', 'pod-r1b', 'node-b', ['pvc-r1']));
    // Still mounted on A: B waits, and says why once (no pods of the old node remain desired).
    await waitFor('Multi-Attach event for pod-r1b', () => multiAttachEvents(h, 'pod-r1b').length > 0);
    assert.deepEqual(
      multiAttachEvents(h, 'pod-r1b').map((e) => [e.type, e.message, e.component, e.namespace]),
      [['Warning', `Multi-Attach error for volume "pv-r1" Volume is already exclusively attached to one node and can't be attached to another`, 'attachdetach-controller', 'default']],
    );
    await neverDuringPasses(h.ctl, 'VA on node-b while node-a holds the volume', () => vaExists(h.sim, vaName('r1', 'node-b')), 10);
    setVolumesInUse(h.sim, 'node-a', []); // the kubelet of A unmounted
    const vaB = vaName('r1', 'node-b');
    await waitFor('VA on node-b', () => vaExists(h.sim, vaB));
    attachVa(h.sim, vaB);
    await waitFor('node-b reports the volume', () => volumesAttached(h.sim, 'node-b').includes(uniqueName('r1')));
    assert.deepEqual(volumesAttached(h.sim, 'node-a'), []);
    vas.stop();
    const moves = vas.log.filter((e) => e.type !== 'deleting').map((e) => `${e.type}:${e.node}`);
    assert.deepEqual(moves, ['created:node-a', 'removed:node-a', 'created:node-b'], `${vaA} then ${vaB}`);
    assert.equal(vas.maxConcurrent('r1'), 1);
  } finally {
    await h.stop();
  }
});

test('one Multi-Attach event per desired entry with the upstream (H6) text; a re-created entry reports again; RWX attaches to both nodes without events (G3, H3, H4, H6)', async () => {
  const h = await startHarness();
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    store.create('nodes', node('node-b'));
    // RWO: pod-x1 keeps it on A; pod-x1b on B is blocked.
    await attachVolume(h.sim, 'x1', { mounted: true });
    store.create('pods', pod('default', 'pod-x1b', 'node-b', ['pvc-x1']));
    await waitFor('Multi-Attach event for pod-x1b', () => multiAttachEvents(h, 'pod-x1b').length > 0);
    // Many passes later and after a second pod joins the flagged entry: still one.
    store.create('pods', pod('default', 'pod-x1c', 'node-b', ['pvc-x1']));
    await waitFor('pod-x1c desired', () => desiredPods(h, 'x1', 'node-b') === 2);
    await neverDuringPasses(h.ctl, 'a second Multi-Attach event', () => podEvents(h.sim, 'FailedAttachVolume').reduce((s, e) => s + e.count, 0) > 1, 20);
    assert.deepEqual(
      multiAttachEvents(h, 'pod-x1b').map((e) => [e.type, e.message, e.count]),
      [['Warning', 'Waiting for detach for volume "pv-x1" Volume is already used by pod(s) pod-x1', 1]],
    );
    assert.equal(vaExists(h.sim, vaName('x1', 'node-b')), false);
    // The entry goes (both pods deleted) and comes back: the flag went with it (H4).
    store.delete('pods', 'default', 'pod-x1b', { gracePeriodSeconds: 0 });
    store.delete('pods', 'default', 'pod-x1c', { gracePeriodSeconds: 0 });
    await waitFor('entry on node-b removed', () => desiredPods(h, 'x1', 'node-b') === 0);
    store.create('pods', pod('default', 'pod-x1d', 'node-b', ['pvc-x1']));
    await waitFor('Multi-Attach event for pod-x1d', () => multiAttachEvents(h, 'pod-x1d').length > 0);
    assert.equal(multiAttachEvents(h, 'pod-x1c').length, 0);

    // RWX: attached to both nodes, no event at all.
    await attachVolume(h.sim, 'w1', { mounted: true, rwx: true });
    store.create('pods', pod('default', 'pod-w1b', 'node-b', ['pvc-w1']));
    await waitFor('RWX VA on node-b', () => vaExists(h.sim, vaName('w1', 'node-b')));
    attachVa(h.sim, vaName('w1', 'node-b'));
    await waitFor('node-b reports the RWX volume', () => volumesAttached(h.sim, 'node-b').includes(uniqueName('w1')));
    assert.ok(vaExists(h.sim, vaName('w1', 'node-a')), 'still attached to node-a');
    assert.deepEqual(podEvents(h.sim, 'FailedAttachVolume').filter((e) => e.pod.startsWith('pod-w1')), []);
  } finally {
    await h.stop();
  }
});

test('no Multi-Attach event and no attach elsewhere while the first attach is still in flight; the event follows its confirmation (G1, H5, I2)', async () => {
  const h = await startHarness();
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    store.create('nodes', node('node-b'));
    createVolumeAndPod(store, 'default', 'i1');
    const vaA = vaName('i1', 'node-a');
    await waitFor('VA on node-a', () => vaExists(h.sim, vaA));
    store.create('pods', pod('default', 'pod-i1b', 'node-b', ['pvc-i1']));
    await waitFor('pod-i1b desired', () => desiredPods(h, 'i1', 'node-b') === 1);
    await neverDuringPasses(h.ctl, 'event or VA for node-b while node-a attaches', () => multiAttachEvents(h, 'pod-i1b').length > 0 || vaExists(h.sim, vaName('i1', 'node-b')), 10);
    attachVa(h.sim, vaA);
    await waitFor('Multi-Attach event once node-a holds it', () => multiAttachEvents(h, 'pod-i1b').length > 0);
    assert.equal(multiAttachEvents(h, 'pod-i1b')[0].message, 'Waiting for detach for volume "pv-i1" Volume is already used by pod(s) pod-i1');
    assert.equal(vaExists(h.sim, vaName('i1', 'node-b')), false);
  } finally {
    await h.stop();
  }
});
