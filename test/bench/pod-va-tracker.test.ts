import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import type { RawKube } from '../../bench/lib/raw-kube.js';
import { PodVaTracker } from '../../bench/lib/pod-va-tracker.js';

/** A RawKube whose watches are fed by the test, path by path. */
function fakeKube() {
  const feeds = new Map<string, (line: string) => void>();
  const kube: RawKube = {
    getJson: async <T>() => ({ metadata: { resourceVersion: '1' } }) as T,
    listAll: async () => '1',
    watch(path, _rv, onLine) {
      feeds.set(path, onLine);
      return { started: Promise.resolve(), ended: new Promise(() => {}), close() {} };
    },
    close() {},
  };
  const send = (path: string, type: string, object: unknown) => feeds.get(path)?.(JSON.stringify({ type, object }));
  return { kube, send };
}

const PODS = '/api/v1/pods';
const PVS = '/api/v1/persistentvolumes';
const VAS = '/apis/storage.k8s.io/v1/volumeattachments';

const pv = (claim: string) => ({ spec: { claimRef: { namespace: 'ns', name: claim }, csi: { driver: 'd', volumeHandle: `h-${claim}` } } });
const pod = (uid: string, claim: string) => ({
  metadata: { namespace: 'ns', name: `p-${uid}`, uid },
  spec: { nodeName: 'n1', volumes: [{ persistentVolumeClaim: { claimName: claim } }] },
});
const vaName = (claim: string) => `csi-${createHash('sha256').update(`h-${claim}` + 'd' + 'n1').digest('hex')}`;

test('a new pod deleted before its VolumeAttachment is not timed; one that got it is', async () => {
  const { kube, send } = fakeKube();
  const tracker = new PodVaTracker(kube);
  await tracker.start();
  await tracker.beginWindow();
  for (const c of ['c1', 'c2', 'c3']) send(PVS, 'ADDED', pv(c));
  send(PODS, 'ADDED', pod('u1', 'c1'));
  send(PODS, 'ADDED', pod('u2', 'c2'));
  send(PODS, 'ADDED', pod('u3', 'c3'));
  send(VAS, 'ADDED', { metadata: { name: vaName('c1') } });
  send(PODS, 'DELETED', pod('u2', 'c2'));
  // u1 deleted after its VolumeAttachment came: still timed.
  send(PODS, 'DELETED', pod('u1', 'c1'));
  await tracker.endWindow();
  const r = await tracker.result();
  assert.equal(r.deletedBeforeVa, 1);
  assert.equal(r.volumes, 2, 'u1 (matched) and u3 (still waiting)');
  assert.equal(r.matched, 1);
  assert.equal(r.newPods, 2);
  assert.equal(r.otherPods, 0);
});

test('a new pod deleted while its claim waits for its PV is not timed either', async () => {
  const { kube, send } = fakeKube();
  const tracker = new PodVaTracker(kube);
  await tracker.start();
  await tracker.beginWindow();
  send(PODS, 'ADDED', pod('u1', 'c1')); // its PV has not been seen yet
  send(PODS, 'DELETED', pod('u1', 'c1'));
  send(PVS, 'ADDED', pv('c1'));
  await tracker.endWindow();
  const r = await tracker.result();
  assert.equal(r.deletedBeforeVa, 1);
  assert.equal(r.volumes, 0);
  assert.equal(r.otherPods, 0);
});
