// The world-state adapter the node status updater reads (K3): which nodes it is told to write;
// the VolumeAttachment API adapter's errors, as the CSI plugin's events show them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { reportedAttachments, volumeAttachmentApi } from '../../src/manager/adapters.js';
import type { KubeApiClient } from '../../src/kube/api-client.js';
import { KubeHttpError, toKubeError } from '../../src/kube/kube-errors.js';
import { createCsiPlugin } from '../../src/plugins/csi/csi-plugin.js';
import { createFakeCsiDrivers, createFakeVolumeAttachments } from '../../src/plugins/csi/fake-volume-attachments.js';
import type { VolumeSpec } from '../../src/plugins/volume-spec.js';

function fleet(nodes: number) {
  const state = createWorldState();
  const ids = Array.from({ length: nodes }, (_, i) => {
    const id = state.internNode(`node-${i}`);
    state.setNodeManaged(id);
    return id;
  });
  return { state, ids, report: reportedAttachments(state) };
}

describe('reportedAttachments.flaggedNodes (K3)', () => {
  it('lists nothing while no node is flagged', () => {
    const { report } = fleet(50);
    assert.deepEqual([...report.flaggedNodes()], []);
  });

  it('lists exactly the flagged nodes by name, and a node no more once its set was taken', () => {
    const { state, ids, report } = fleet(5000);
    for (const i of [3, 1234, 4999]) state.markAttached(state.internVolume(`vol-${i}`), ids[i]!);
    assert.deepEqual([...report.flaggedNodes()].sort(), ['node-1234', 'node-3', 'node-4999']);
    assert.deepEqual(report.takeVolumesToReport('node-1234'), [{ name: 'vol-1234', devicePath: '' }]);
    assert.deepEqual([...report.flaggedNodes()].sort(), ['node-3', 'node-4999']);
    report.setNodeStatusUpdateNeeded('node-1234');
    assert.deepEqual([...report.flaggedNodes()].sort(), ['node-1234', 'node-3', 'node-4999']);
  });

  it('keeps listing a removed node while its status write is owed (K4), and not after', () => {
    const { state, ids, report } = fleet(10);
    state.markAttached(state.internVolume('vol'), ids[7]!);
    state.markDetached(state.findVolume('vol')!, ids[7]!);
    assert.equal(state.removeNode(ids[7]!), true);
    assert.deepEqual([...report.flaggedNodes()], ['node-7']);
    assert.deepEqual(report.takeVolumesToReport('node-7'), []);
    assert.deepEqual([...report.flaggedNodes()], []);
  });
});

describe('volumeAttachmentApi.create (J2, L3)', () => {
  const what = { verb: 'create', resource: 'volumeattachments', name: 'csi-x' };
  const body = { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'csi-x' }, spec: { attacher: 'd', nodeName: 'n', source: { persistentVolumeName: 'pv' } } } as const;
  const apiRejecting = (err: unknown) => volumeAttachmentApi({ createVolumeAttachment: () => Promise.reject(err) } as unknown as KubeApiClient);

  it('rejects with the API server\'s Status message, as client-go\'s StatusError reads, so the event says what upstream says', async () => {
    const refused = toKubeError(new KubeHttpError(403, 'Forbidden', 'HTTP 403', undefined, 'volumeattachments.storage.k8s.io "csi-x" is forbidden: quota'), what);
    assert.match(refused.message, /^create volumeattachments\/csi-x: /, 'the client layer names the call');
    const plugin = createCsiPlugin({ api: apiRejecting(refused), attachments: createFakeVolumeAttachments().cache, drivers: createFakeCsiDrivers() });
    const spec: VolumeSpec = { name: 'pv', origin: 'pv', source: { type: 'csi', driver: 'd', volumeHandle: 'h' }, accessModes: ['ReadWriteOnce'], readOnly: false, migrated: false };
    await assert.rejects(plugin.attach(spec, 'n'), { message: 'kubernetes.io/csi: attacher.Attach failed: volumeattachments.storage.k8s.io "csi-x" is forbidden: quota' });
  });

  it('keeps the client\'s error when the server sent no Status (no answer at all)', async () => {
    const unanswered = toKubeError(new Error('connect ECONNREFUSED 127.0.0.1:6443'), what);
    await assert.rejects(apiRejecting(unanswered).create(body), (err: unknown) => err === unanswered);
  });
});
