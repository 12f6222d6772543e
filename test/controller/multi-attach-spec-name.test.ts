/**
 * The spec in per-pod event texts and in the attach itself is the one of the pod's own (volume,
 * node) entry (§C, H3, J1, L2): upstream's desired state keeps the spec per node entry, from the
 * pod that added the volume to that node. Two PVs in two namespaces with the same CSI driver and
 * volume handle are one unique volume; a pod waiting on node B is told about its own claim's PV,
 * not the PV of a pod elsewhere, and the VolumeAttachment for node B names that PV.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/sim/store/sim-store.js';
import {
  attachVa, DRIVER, node, pod, podEvents, setVolumesInUse, startHarness, uniqueName, vaExists, vaName, volumesAttached, waitFor,
  type Harness,
} from './harness.js';

const HANDLE = 'shared-handle';

/** A PVC in `ns` bound to PV `pvName`, whose CSI source is the shared driver and handle (RWO). */
function createClaim(h: Harness, ns: string, pvName: string): void {
  const { store } = h.sim;
  const pvc = store.create('persistentvolumeclaims', {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name: 'data', namespace: ns },
    spec: { accessModes: ['ReadWriteOnce'], volumeName: pvName },
    status: { phase: 'Bound' },
  } as KubeObject);
  store.create('persistentvolumes', {
    apiVersion: 'v1', kind: 'PersistentVolume',
    metadata: { name: pvName },
    spec: {
      accessModes: ['ReadWriteOnce'],
      capacity: { storage: '1Gi' },
      csi: { driver: DRIVER, volumeHandle: HANDLE },
      claimRef: { namespace: ns, name: 'data', uid: pvc.metadata.uid },
    },
    status: { phase: 'Bound' },
  } as KubeObject);
}

/** The volume-wide spec name (the inspection API's): the spec resolved last, from any pod. */
function specNameOfVolume(h: Harness): string | undefined {
  const v = h.ctl.state.findVolume(uniqueName(HANDLE));
  const info = v === undefined ? undefined : (h.ctl.state.volumeInfo(v) as { specName?: string } | undefined);
  return info?.specName;
}

/** The VolumeAttachment's `spec.source.persistentVolumeName` (L2). */
function vaPvName(h: Harness, name: string): unknown {
  const va = h.sim.store.get('volumeattachments', undefined, name);
  return (va?.spec as { source?: { persistentVolumeName?: unknown } } | undefined)?.source?.persistentVolumeName;
}

function desiredOn(h: Harness, nodeName: string): number {
  const v = h.ctl.state.findVolume(uniqueName(HANDLE));
  const n = h.ctl.state.findNode(nodeName);
  return v === undefined || n === undefined ? 0 : (h.ctl.state.pair(v, n)?.desiredPods ?? 0);
}

test('two PVs sharing one volume handle: each pod\'s events and VolumeAttachment name the PV of its own claim (§C, H3, J1, L2)', async () => {
  const h = await startHarness();
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-1'));
    store.create('nodes', node('node-2'));
    createClaim(h, 'ns1', 'pv1');
    createClaim(h, 'ns2', 'pv2');
    // Pod A (ns1, pv1) on node-1: its attach starts; the attacher has not answered yet.
    store.create('pods', pod('ns1', 'pod-a', 'node-1', ['data']));
    const vaA = vaName(HANDLE, 'node-1');
    await waitFor('VA on node-1', () => vaExists(h.sim, vaA));
    assert.equal(vaPvName(h, vaA), 'pv1');
    // Pod B (ns2, pv2) on node-2 meanwhile: no event while node-1's attach runs (H5).
    store.create('pods', pod('ns2', 'pod-b', 'node-2', ['data']));
    await waitFor('pod-b desired on node-2', () => desiredOn(h, 'node-2') === 1);
    await waitFor('pv2 resolved', () => specNameOfVolume(h) === 'pv2');
    // Pod A is seen again after pod B (a claim update re-processes the claim's pods, C8): the
    // name of node-2's entry must not follow it.
    store.mutate('persistentvolumeclaims', 'ns1', 'data', (pvc) => {
      pvc.metadata.labels = { touched: 'yes' };
    });
    await waitFor('pod-a processed again', () => specNameOfVolume(h) === 'pv1');
    attachVa(h.sim, vaA);
    await waitFor('node-1 reports the volume', () => volumesAttached(h.sim, 'node-1').includes(uniqueName(HANDLE)));
    setVolumesInUse(h.sim, 'node-1', [uniqueName(HANDLE)]);
    await waitFor('attach event for pod-a', () => podEvents(h.sim, 'SuccessfulAttachVolume').some((e) => e.pod === 'pod-a'));
    assert.deepEqual(
      podEvents(h.sim, 'SuccessfulAttachVolume').map((e) => [e.namespace, e.pod, e.message]),
      [['ns1', 'pod-a', 'AttachVolume.Attach succeeded for volume "pv1" ']],
    );

    // Node-1 holds the volume: pod B is blocked, and told about pv2, its own claim's PV.
    await waitFor('Multi-Attach event for pod-b', () => podEvents(h.sim, 'FailedAttachVolume').some((e) => e.pod === 'pod-b'));
    assert.deepEqual(
      podEvents(h.sim, 'FailedAttachVolume').map((e) => [e.namespace, e.pod, e.message]),
      [['ns2', 'pod-b', 'Waiting for detach for volume "pv2" Volume is already used by 1 pod(s) in different namespaces']],
    );
    assert.equal(vaExists(h.sim, vaName(HANDLE, 'node-2')), false);

    // Pod A goes and node-1 unmounts: the volume moves to node-2; the VolumeAttachment created
    // for node-2 and pod-b's attach event name pv2 (the volume's spec was resolved last from pv1).
    store.delete('pods', 'ns1', 'pod-a', { gracePeriodSeconds: 0 });
    setVolumesInUse(h.sim, 'node-1', []);
    const vaB = vaName(HANDLE, 'node-2');
    await waitFor('VA on node-2', () => vaExists(h.sim, vaB), 30_000);
    assert.equal(specNameOfVolume(h), 'pv1', 'the volume-wide spec is still pv1\'s');
    assert.equal(vaPvName(h, vaB), 'pv2');
    attachVa(h.sim, vaB);
    await waitFor('attach event for pod-b', () => podEvents(h.sim, 'SuccessfulAttachVolume').some((e) => e.pod === 'pod-b'));
    assert.deepEqual(
      podEvents(h.sim, 'SuccessfulAttachVolume').filter((e) => e.pod === 'pod-b').map((e) => e.message),
      ['AttachVolume.Attach succeeded for volume "pv2" '],
    );
  } finally {
    await h.stop();
  }
});
