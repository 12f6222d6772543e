import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createCommitPodVa } from '../../bench/lib/pod-va-commit-tracker.js';
import { createSimStore } from '../../src/sim/store/index.js';
import type { KubeObject } from '../../src/sim/store/sim-store.js';

const pv = (claim: string): KubeObject => ({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: `pv-${claim}` },
  spec: { claimRef: { namespace: 'ns', name: claim }, csi: { driver: 'd', volumeHandle: `h-${claim}` } },
});
const pod = (name: string, claim: string): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'ns', name },
  spec: { nodeName: 'n1', volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }] },
});
const vaName = (claim: string) => `csi-${createHash('sha256').update(`h-${claim}` + 'd' + 'n1').digest('hex')}`;
const va = (claim: string): KubeObject => ({
  apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: vaName(claim) },
  spec: { attacher: 'd', nodeName: 'n1', source: { persistentVolumeName: `pv-${claim}` } },
});

/** A store with a tracker in its window and the PVs of claims c1 and c2. */
function windowOverTwoClaims() {
  const store = createSimStore();
  const podVa = createCommitPodVa(store);
  podVa.beginWindow();
  store.create('persistentvolumes', pv('c1'));
  store.create('persistentvolumes', pv('c2'));
  return { store, podVa };
}

test('commit-side timing: from the pod commit to its VolumeAttachment commit and on to attached', async (t) => {
  let now = 0; // the tracker's clock (performance.now()) is the test's
  t.mock.method(performance, 'now', () => now);
  const { store, podVa } = windowOverTwoClaims();
  store.create('pods', pod('p1', 'c1'));
  store.create('pods', pod('p2', 'c2'));
  now += 20;
  store.create('volumeattachments', va('c1'));
  now += 20;
  store.mutate('volumeattachments', undefined, vaName('c1'), (o) => {
    o.status = { attached: true };
  });
  podVa.endWindow();
  const r = podVa.result();
  assert.equal(r.newPods, 2);
  assert.equal(r.volumes, 2);
  assert.equal(r.matched, 1, 'p2 still waits for its VolumeAttachment');
  assert.equal(r.podToVaMs.max, 20, 'p1 waited 20 ms for its VolumeAttachment');
  assert.ok((r.podToAttachedMs.p50 ?? 0) >= (r.podToVaMs.max ?? 0), 'attached comes after the VolumeAttachment');
  assert.equal(r.podToVaMs.p99AtLeast, true, 'the waiting pod makes the p99 a lower bound');
  assert.equal(r.podEvents, 2);
  assert.equal(r.vaEvents, 2);
  podVa.stop();
});

test('a reschedule (claim used before) is counted, not timed; a pod deleted before its VolumeAttachment is dropped', () => {
  const { store, podVa } = windowOverTwoClaims();
  store.create('pods', pod('p1', 'c1'));
  store.create('volumeattachments', va('c1'));
  store.delete('pods', 'ns', 'p1', { gracePeriodSeconds: 0 });
  store.create('pods', pod('p1b', 'c1')); // the same claim again: a reschedule
  store.create('pods', pod('p2', 'c2'));
  store.delete('pods', 'ns', 'p2', { gracePeriodSeconds: 0 });
  const r = podVa.result();
  assert.equal(r.newPods, 1);
  assert.equal(r.otherPods, 1);
  assert.equal(r.deletedBeforeVa, 1);
  assert.equal(r.matched, 1);
  podVa.stop();
});

test('the pod changes in the watch window come back as watch lines; after stop nothing more is timed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fa-pod-va-'));
  try {
    const store = createSimStore();
    store.create('pods', pod('p0', 'c0')); // before the tracker: still in the window
    const podVa = createCommitPodVa(store);
    store.create('pods', pod('p1', 'c1'));
    store.mutate('pods', 'ns', 'p1', (o) => {
      (o.metadata.labels ??= {}).x = 'y';
    });
    podVa.stop();
    store.delete('pods', 'ns', 'p1', { gracePeriodSeconds: 0 });
    assert.equal(podVa.result().podEvents, 2, 'the create and the update; the delete came after stop');
    const file = join(dir, 'lines');
    assert.equal(podVa.writePodLines(file), 4);
    const lines = readFileSync(file, 'utf8').split('\n').map((l) => JSON.parse(l) as { type: string; object: KubeObject });
    assert.deepEqual(lines.map((l) => [l.type, l.object.metadata.name]), [['ADDED', 'p0'], ['ADDED', 'p1'], ['MODIFIED', 'p1'], ['DELETED', 'p1']]);
    assert.equal(lines[2].object.metadata.labels?.x, 'y');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
