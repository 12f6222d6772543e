/**
 * What enters the desired state (B1–B3, C2, C4, C7–C10): pods on managed nodes only, PVCs
 * only once bound to a PV that claims them (picked up by the PVC worker), attachable volumes
 * only (CSIDriver attachRequired), non-terminated pods only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DRIVER, attachVa, attachVolume, createVolumeAndPod, csiDriver, neverDuringPasses, node, populatorPasses, reflectorOf, startHarness, uniqueName, vaExists,
  vaLive, vaName, volumeObjects, volumesAttached, waitFor, type Harness,
} from './harness.js';
import { MANAGED_ANNOTATION } from '../../src/kube/projections/node.js';

const desired = (h: Harness) => h.ctl.state.counts().desiredPairs;

test('a pod on an unmanaged node is ignored until the node is managed and the full pod list runs (B1, B3, C10)', async () => {
  const h = await startHarness({ dswPopulatorPeriodMs: 500, dswListPodsPeriodMs: 500 });
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-u', { managed: false }));
    store.create('nodes', node('node-a'));
    createVolumeAndPod(store, 'default', 'u1', { nodeName: 'node-u' });
    createVolumeAndPod(store, 'default', 'a1', { nodeName: 'node-a' });
    await waitFor('VA of the managed node', () => vaExists(h.sim, vaName('a1', 'node-a')));
    // Several full pod lists (every 500 ms) pass: the unmanaged node's pod stays out.
    const listed = await populatorPasses(h.ctl, 'pods-listed');
    await neverDuringPasses(h.ctl, 'VA on the unmanaged node', () => vaExists(h.sim, vaName('u1', 'node-u')), 10, {
      after: async () => (await populatorPasses(h.ctl, 'pods-listed')) >= listed + 2,
    });
    assert.equal(desired(h), 1);
    store.mutate('nodes', undefined, 'node-u', (n) => {
      n.metadata.annotations = { [MANAGED_ANNOTATION]: 'true' };
    });
    await waitFor('VA once the node is managed', () => vaExists(h.sim, vaName('u1', 'node-u')));
  } finally {
    await h.stop();
  }
});

test('an unbound PVC is ignored until it binds to a PV claiming it; the PV event then attaches (C4, C8)', async () => {
  // Periodic passes far away: only PVC and PV events can add the pod.
  const h = await startHarness({ dswPopulatorPeriodMs: 60_000, dswListPodsPeriodMs: 60_000 });
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    const v = volumeObjects('default', 'b1', { bound: false });
    const pvc = store.create('persistentvolumeclaims', v.pvc);
    store.create('pods', v.pod);
    await waitFor('pod seen', () => reflectorOf(h.ctl, 'pods').get('default/pod-b1'));
    // A PV claiming another uid (C4): even a Bound PVC does not resolve to it.
    const pv = v.pv as { spec: { claimRef: { uid: string } } } & typeof v.pv;
    pv.spec.claimRef.uid = 'someone-else';
    store.create('persistentvolumes', pv);
    await waitFor('PV seen', () => reflectorOf(h.ctl, 'persistentvolumes').get('pv-b1'));
    store.mutate('persistentvolumeclaims', 'default', 'pvc-b1', (c) => {
      (c.spec as Record<string, unknown>).volumeName = 'pv-b1';
      c.status = { phase: 'Bound' };
    });
    await waitFor('bound PVC seen', () => (reflectorOf(h.ctl, 'persistentvolumeclaims').get('default/pvc-b1') as { phase?: string } | undefined)?.phase === 'Bound');
    // Bound, but the PV claims another uid: the PVC event (C8) resolves nothing (C4).
    await neverDuringPasses(h.ctl, 'VA while the PV claims another PVC', () => vaExists(h.sim, vaName('b1', 'node-a')), 10);
    assert.equal(desired(h), 0);
    // The PV now claims the PVC: its update event re-processes the claim's pods. (Our addition:
    // upstream waits for another PVC event or the full pod pass. The PVC worker alone is
    // covered by populator-pv-events.test.ts.)
    store.mutate('persistentvolumes', undefined, 'pv-b1', (p) => {
      ((p.spec as Record<string, unknown>).claimRef as Record<string, unknown>).uid = pvc.metadata.uid;
    });
    await waitFor('VA after the PV event', () => vaExists(h.sim, vaName('b1', 'node-a')));
  } finally {
    await h.stop();
  }
});

test('CSIDriver attachRequired=false: no VolumeAttachment; a desired volume whose driver turns so is dropped and detached (C7, C9)', async () => {
  const h = await startHarness({ dswPopulatorPeriodMs: 500 });
  try {
    const { store } = h.sim;
    const noAttach = 'noattach.csi.fleet-attach.io';
    store.create('csidrivers', csiDriver(noAttach, false));
    store.create('nodes', node('node-a'));
    await waitFor('CSIDriver seen', () => reflectorOf(h.ctl, 'csidrivers').get(noAttach));
    createVolumeAndPod(store, 'default', 'n1', { driver: noAttach });
    await attachVolume(h.sim, 'c1'); // created after n1's pod: n1 was processed first
    await neverDuringPasses(h.ctl, 'VA of a driver without attach', () => store.count('volumeattachments') !== 1, 10);
    assert.equal(vaExists(h.sim, vaName('n1', 'node-a', noAttach)), false);
    assert.equal(desired(h), 1);
    // The test driver stops requiring attach: the 500 ms populator pass drops the volume (C9),
    // and, unmounted, it is detached.
    store.create('csidrivers', csiDriver(DRIVER, false));
    await waitFor('VA deleted', () => !vaExists(h.sim, vaName('c1', 'node-a')));
    assert.equal(desired(h), 0);
  } finally {
    await h.stop();
  }
});

test('a terminated pod (Succeeded) loses its volumes; a deleting pod with a running container keeps them until it stops (C2)', async () => {
  const h = await startHarness();
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    const vaT = await attachVolume(h.sim, 't1'); // not mounted: a detach would follow at once
    const vaD = await attachVolume(h.sim, 't2');
    store.mutate('pods', 'default', 'pod-t1', (p) => {
      p.status = { phase: 'Succeeded', containerStatuses: [{ name: 'c', state: { terminated: { exitCode: 0 } } }] };
    });
    await waitFor('VA of the Succeeded pod deleted', () => !vaExists(h.sim, vaT));
    // Graceful deletion: deletionTimestamp set, the container still runs.
    const deleting = store.delete('pods', 'default', 'pod-t2');
    assert.ok(deleting?.metadata.deletionTimestamp, 'pod is being deleted, not gone');
    await waitFor('deletion seen', () => (reflectorOf(h.ctl, 'pods').get('default/pod-t2') as { deletionTimestamp?: string } | undefined)?.deletionTimestamp);
    // Passes, and a C9 pass (it removes terminated pods), with the container still running.
    const removed = await populatorPasses(h.ctl, 'pods-removed');
    await neverDuringPasses(h.ctl, 'detach while a container runs', () => !vaLive(h.sim, vaD), 10, {
      after: async () => (await populatorPasses(h.ctl, 'pods-removed')) > removed,
    });
    assert.deepEqual(h.ctl.state.desiredPods(h.ctl.state.findVolume(uniqueName('t2'))!, h.ctl.state.findNode('node-a')!).length, 1);
    store.mutate('pods', 'default', 'pod-t2', (p) => {
      (p.status as Record<string, unknown>).containerStatuses = [{ name: 'c', state: { terminated: { exitCode: 0 } } }];
    });
    await waitFor('VA deleted once no container runs', () => !vaExists(h.sim, vaD));
  } finally {
    await h.stop();
  }
});

test('a generic ephemeral volume attaches through the PVC the pod owns, not one it does not (C5)', async () => {
  const h = await startHarness();
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    const ephemeralPod = (name: string) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
      spec: {
        nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }],
        volumes: [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'] } } } }],
      },
      status: { phase: 'Running', containerStatuses: [{ name: 'c', state: { running: {} } }] },
    });
    /** The claim `<pod>-scratch`, owned by `ownerUid`, bound to PV `pv-<handle>`. */
    const claim = async (podName: string, handle: string, ownerUid: string) => {
      const v = volumeObjects('default', handle, { bound: false });
      v.pvc.metadata.name = `${podName}-scratch`;
      v.pvc.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Pod', name: podName, uid: ownerUid, controller: true }];
      const pvc = store.create('persistentvolumeclaims', v.pvc);
      const spec = v.pv.spec as { claimRef: { name: string; uid: string } };
      spec.claimRef.name = pvc.metadata.name;
      spec.claimRef.uid = pvc.metadata.uid!;
      store.create('persistentvolumes', v.pv);
      await waitFor('PV seen', () => reflectorOf(h.ctl, 'persistentvolumes').get(`pv-${handle}`));
      store.mutate('persistentvolumeclaims', 'default', pvc.metadata.name, (c) => {
        (c.spec as Record<string, unknown>).volumeName = `pv-${handle}`;
        c.status = { phase: 'Bound' };
      });
    };
    const stranger = store.create('pods', ephemeralPod('pod-e2'));
    const owner = store.create('pods', ephemeralPod('pod-e1'));
    await claim('pod-e2', 'g2', `not-${stranger.metadata.uid}`);
    await claim('pod-e1', 'g1', owner.metadata.uid!);
    await waitFor('VA of the owned claim', () => vaExists(h.sim, vaName('g1', 'node-a')));
    await neverDuringPasses(h.ctl, 'VA of a claim the pod does not own', () => vaExists(h.sim, vaName('g2', 'node-a')), 10);
  } finally {
    await h.stop();
  }
});

test('an in-tree awsElasticBlockStore PV is attached through the EBS CSI driver under its CSI name (C6, L1, L2)', async () => {
  const h = await startHarness();
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    const v = volumeObjects('default', 'ebs1');
    const spec = v.pv.spec as Record<string, unknown>;
    delete spec.csi;
    spec.awsElasticBlockStore = { volumeID: 'aws://us-east-1a/vol-0abc123', fsType: 'ext4' };
    const pvc = store.create('persistentvolumeclaims', v.pvc);
    (spec.claimRef as Record<string, unknown>).uid = pvc.metadata.uid;
    store.create('persistentvolumes', v.pv);
    store.create('pods', v.pod);
    const va = vaName('vol-0abc123', 'node-a', 'ebs.csi.aws.com');
    await waitFor('VA of the translated volume', () => vaExists(h.sim, va));
    const created = store.get('volumeattachments', undefined, va) as unknown as { spec: Record<string, unknown> };
    assert.deepEqual(created.spec, { attacher: 'ebs.csi.aws.com', nodeName: 'node-a', source: { persistentVolumeName: 'pv-ebs1' } });
    attachVa(h.sim, va);
    await waitFor('reported under the CSI unique name', () =>
      volumesAttached(h.sim, 'node-a').includes('kubernetes.io/csi/ebs.csi.aws.com^vol-0abc123'));
  } finally {
    await h.stop();
  }
});
