import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  projectCsiDriver,
  projectCsiNode,
  projectNode,
  projectPod,
  projectPv,
  projectPvc,
  projectVolumeAttachment,
  type Projected,
} from '../../src/kube/projections/index.js';

function ok<T>(p: Projected<T>): T {
  if (!p.ok) assert.fail(`expected a projection, got: ${p.reason}`);
  return p.value;
}
function reason<T>(p: Projected<T>): string {
  if (p.ok) assert.fail('expected the object to be rejected');
  return p.reason;
}

const meta = (name: string, extra: Record<string, unknown> = {}) => ({ name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '1', ...extra });

describe('pod projection', () => {
  it('classifies volumes and keeps only what the rules need', () => {
    const p = ok(
      projectPod({
        metadata: meta('web-0', { labels: { big: 'x'.repeat(1000) } }),
        spec: {
          nodeName: 'n1',
          containers: [{ name: 'c', image: 'i' }],
          volumes: [
            { name: 'data', persistentVolumeClaim: { claimName: 'data-web-0', readOnly: true } },
            { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } },
            { name: 'inline', csi: { driver: 'secrets.csi', readOnly: true } },
            { name: 'ebs', awsElasticBlockStore: { volumeID: 'vol-1', fsType: 'ext4', secret: { no: 1 } } },
            { name: 'cfg', configMap: { name: 'c' } },
          ],
        },
        status: { phase: 'Running', containerStatuses: [{ name: 'c', state: { running: {} } }] },
      }),
    );
    assert.deepEqual(p, {
      uid: 'uid-web-0',
      namespace: 'ns',
      name: 'web-0',
      nodeName: 'n1',
      phase: 'Running',
      allContainersNotRunning: false,
      volumes: [
        { name: 'data', kind: 'pvc', claimName: 'data-web-0', readOnly: true, sourceType: 'persistentVolumeClaim' },
        { name: 'scratch', kind: 'ephemeral', claimName: 'web-0-scratch', sourceType: 'ephemeral' },
        { name: 'inline', kind: 'csi-inline', driver: 'secrets.csi', readOnly: true, sourceType: 'csi' },
        { name: 'ebs', kind: 'intree', intree: { type: 'awsElasticBlockStore', fields: { volumeID: 'vol-1', fsType: 'ext4' } }, sourceType: 'awsElasticBlockStore' },
        { name: 'cfg', kind: 'other', sourceType: 'configMap' },
      ],
    });
  });

  it('computes the C2 container test over init, regular and ephemeral statuses', () => {
    const withStatuses = (status: Record<string, unknown>) => ok(projectPod({ metadata: meta('p'), spec: {}, status })).allContainersNotRunning;
    assert.equal(withStatuses({}), true, 'no statuses count as not running');
    assert.equal(withStatuses({ containerStatuses: [{ state: { terminated: { exitCode: 0 } } }, { state: { waiting: {} } }] }), true);
    assert.equal(withStatuses({ containerStatuses: [{ state: { terminated: {} } }], initContainerStatuses: [{ state: { running: {} } }] }), false);
    assert.equal(withStatuses({ ephemeralContainerStatuses: [{ state: { running: {} } }] }), false);
    assert.equal(withStatuses({ containerStatuses: [{ state: {} }] }), false, 'an empty state counts as running, as upstream');
  });

  it('accepts Date timestamps (generated-client objects) and strings alike', () => {
    const d = new Date('2024-05-01T10:00:00Z');
    assert.equal(ok(projectPod({ metadata: meta('p', { deletionTimestamp: d }), spec: {} })).deletionTimestamp, '2024-05-01T10:00:00.000Z');
    assert.equal(ok(projectPod({ metadata: meta('p', { deletionTimestamp: '2024-05-01T10:00:00Z' }), spec: {} })).deletionTimestamp, '2024-05-01T10:00:00Z');
  });

  it('rejects malformed pods with a reason naming the field', () => {
    assert.match(reason(projectPod({ metadata: { name: 'p', namespace: 'ns' } })), /metadata\.uid/);
    assert.match(reason(projectPod({ metadata: meta('p'), spec: { volumes: {} } })), /spec\.volumes: not an array/);
    assert.match(reason(projectPod({ metadata: meta('p'), spec: { volumes: [{ name: 'v', persistentVolumeClaim: {} }] } })), /claimName/);
    assert.match(reason(projectPod(null)), /not an object/);
    assert.match(reason(projectPod({ metadata: meta('p'), spec: { nodeName: 7 } })), /spec\.nodeName/);
  });
});

describe('other projections', () => {
  it('PVC: phase, volumeName and the controlling owner', () => {
    const pvc = ok(
      projectPvc({
        metadata: meta('web-0-scratch', { ownerReferences: [{ uid: 'other', controller: false }, { uid: 'pod-uid', controller: true }] }),
        spec: { volumeName: 'pv-1' },
        status: { phase: 'Bound' },
      }),
    );
    assert.deepEqual(pvc, { uid: 'uid-web-0-scratch', namespace: 'ns', name: 'web-0-scratch', phase: 'Bound', volumeName: 'pv-1', controllerUid: 'pod-uid' });
    assert.deepEqual(ok(projectPvc({ metadata: meta('x'), spec: {} })), { uid: 'uid-x', namespace: 'ns', name: 'x', phase: '', volumeName: '' });
  });

  it('PV: CSI source, in-tree source, other source', () => {
    const csi = ok(
      projectPv({
        metadata: { name: 'pv1', uid: 'u1' },
        spec: { accessModes: ['ReadWriteOnce'], claimRef: { namespace: 'ns', name: 'c', uid: 'cu' }, csi: { driver: 'd', volumeHandle: 'h', readOnly: true } },
        status: { phase: 'Bound' },
      }),
    );
    assert.deepEqual(csi, { name: 'pv1', phase: 'Bound', accessModes: ['ReadWriteOnce'], claimRef: { namespace: 'ns', name: 'c', uid: 'cu' }, csi: { driver: 'd', volumeHandle: 'h', readOnly: true } });
    const gce = ok(projectPv({ metadata: { name: 'pv2', uid: 'u2' }, spec: { gcePersistentDisk: { pdName: 'disk', partition: 1 }, capacity: { storage: '1Gi' } } }));
    assert.deepEqual(gce.intree, { type: 'gcePersistentDisk', fields: { pdName: 'disk', partition: 1 } });
    assert.equal(ok(projectPv({ metadata: { name: 'pv3', uid: 'u3' }, spec: { storageClassName: 's', nfs: { server: 'x', path: '/' } } })).otherSourceType, 'nfs');
    assert.match(reason(projectPv({ metadata: { name: 'pv4', uid: 'u4' }, spec: { csi: { driver: 'd' } } })), /volumeHandle/);
  });

  it('Node: managed by annotation key, Ready=True, out-of-service taint, status lists', () => {
    const n = ok(
      projectNode({
        metadata: { name: 'n1', uid: 'u', annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'false' } },
        spec: { taints: [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoSchedule' }] },
        status: {
          conditions: [{ type: 'MemoryPressure', status: 'True' }, { type: 'Ready', status: 'True' }],
          volumesInUse: ['kubernetes.io/csi/d^h'],
          volumesAttached: [{ name: 'kubernetes.io/csi/d^h' }],
        },
      }),
    );
    assert.deepEqual(n, { name: 'n1', uid: 'u', managed: true, ready: true, outOfService: true, volumesInUse: ['kubernetes.io/csi/d^h'], volumesAttached: ['kubernetes.io/csi/d^h'] });
    const bare = ok(projectNode({ metadata: { name: 'n2' }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }));
    assert.deepEqual([bare.managed, bare.ready, bare.outOfService], [false, false, false]);
  });

  it('Node: an unreadable part takes the value that detaches nothing early, named with its path', () => {
    const node = (status: unknown, spec: unknown = {}, annotations: unknown = {}) => ok(projectNode({ metadata: { name: 'n', annotations }, spec, status }));
    const unreadable = (n: { unreadable?: string[] }) => (n.unreadable ?? []).join('; ');
    // A bad volumesAttached entry is left out; a bad devicePath is ''.
    let n = node({ volumesAttached: [{ name: 'a' }, { name: 7 }, 'b', { name: 'c', devicePath: '/dev/c' }] });
    assert.deepEqual([n.volumesAttached, n.devicePaths], [['a', 'c'], ['', '/dev/c']]);
    assert.match(unreadable(n), /status\.volumesAttached\[1\]\.name: .*status\.volumesAttached\[2\]: not an object/);
    n = node({ volumesAttached: [{ name: 'a', devicePath: 1 }] });
    assert.deepEqual([n.volumesAttached, n.devicePaths], [['a'], undefined]);
    assert.match(unreadable(n), /^status\.volumesAttached\[0\]\.devicePath: not a string/);
    // volumesInUse: not observed (null: everything on the node counts as mounted), never a shorter list.
    n = node({ volumesInUse: ['a', ''] });
    assert.equal(n.volumesInUse, null);
    assert.match(unreadable(n), /^status\.volumesInUse\[1\]: /);
    // Conditions: Ready (no forced detach); taints: not out of service; annotations: not managed.
    n = node({ conditions: [{ type: 'Ready', status: 'False' }, null] });
    assert.equal(n.ready, true);
    assert.match(unreadable(n), /^status\.conditions\[1\]: not an object/);
    n = node({}, { taints: ['x', { key: 'node.kubernetes.io/out-of-service' }] });
    assert.equal(n.outOfService, false);
    assert.match(unreadable(n), /^spec\.taints\[0\]: not an object/);
    assert.equal(node({}, {}, 'x').managed, false);
    // A status that is not an object: every status part at its safe value.
    n = node('broken');
    assert.deepEqual([n.ready, n.volumesInUse, n.volumesAttached], [true, null, []]);
    // The list is read only up to the first Ready=True condition (what follows is not needed).
    assert.equal(node({ conditions: [{ type: 'Ready', status: 'True' }, null] }).unreadable, undefined);
    // Absent parts are not unreadable: no status is no Ready condition and empty lists.
    n = node(undefined);
    assert.deepEqual([n.ready, n.volumesInUse, n.volumesAttached, n.unreadable], [false, [], [], undefined]);
    // The name is the one part without which there is no node.
    assert.match(reason(projectNode({ metadata: { name: 7 } })), /metadata\.name/);
  });

  it('PVC: a malformed list item is rejected with its index in the path', () => {
    const pvc = (refs: unknown) => projectPvc({ metadata: { ...meta('c'), ownerReferences: refs }, spec: {} });
    assert.match(reason(pvc([{ controller: true, uid: 'u' }, { controller: 'yes' }])), /^metadata\.ownerReferences\[1\]\.controller: not a boolean/);
    assert.equal(ok(pvc([{ controller: false, uid: 'x' }, { controller: true, uid: 'owner' }])).controllerUid, 'owner');
  });

  it('VolumeAttachment: source, status and errors (an error without message is still an error)', () => {
    const va = ok(
      projectVolumeAttachment({
        metadata: { name: 'csi-1', uid: 'u', resourceVersion: '5', deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['external-attacher/d'] },
        spec: { attacher: 'd', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } },
        status: { attached: false, attachError: { message: 'boom' }, detachError: {} },
      }),
    );
    assert.deepEqual(va, {
      name: 'csi-1', uid: 'u', attacher: 'd', nodeName: 'n1', pvName: 'pv1', inline: false, attached: false,
      attachError: 'boom', detachError: '', deletionTimestamp: '2024-01-01T00:00:00Z', deleting: true,
    });
    assert.equal(ok(projectVolumeAttachment({ metadata: { name: 'x' }, spec: { attacher: 'd', nodeName: 'n', source: { inlineVolumeSpec: {} } } })).inline, true);
    assert.match(reason(projectVolumeAttachment({ metadata: { name: 'x' }, spec: { attacher: 'd' } })), /spec\.nodeName/);
  });

  it('CSIDriver defaults attachRequired to true; CSINode splits migrated plugins', () => {
    assert.equal(ok(projectCsiDriver({ metadata: { name: 'd' }, spec: {} })).attachRequired, true);
    assert.equal(ok(projectCsiDriver({ metadata: { name: 'd' }, spec: { attachRequired: false } })).attachRequired, false);
    const cn = ok(projectCsiNode({ metadata: { name: 'n1', annotations: { 'storage.alpha.kubernetes.io/migrated-plugins': 'kubernetes.io/aws-ebs, kubernetes.io/gce-pd,' } } }));
    assert.deepEqual(cn.migratedPlugins, ['kubernetes.io/aws-ebs', 'kubernetes.io/gce-pd']);
    assert.deepEqual(ok(projectCsiNode({ metadata: { name: 'n2' } })).migratedPlugins, []);
  });
});
