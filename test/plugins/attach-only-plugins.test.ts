// C7: iSCSI and FC volumes are attachable through their in-tree plugins, whose attach does
// nothing: they enter the desired and actual state under the names the kubelet waits for in
// node status (upstream iscsi and fc `GetVolumeName`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { projectPod } from '../../src/kube/projections/pod.js';
import { projectPv } from '../../src/kube/projections/pv.js';
import { createAttachOnlyPlugins, createCsiPlugin, createCsiTranslator, createVolumePluginManager, isMultiAttachAllowed } from '../../src/plugins/index.js';
import { createFakeCsiDrivers, createFakeVolumeAttachments } from '../../src/plugins/csi/fake-volume-attachments.js';
import { resolvePersistentVolume, resolvePodVolume } from '../../src/populator/volume-resolver.js';

const fake = createFakeVolumeAttachments();
const plugins = createVolumePluginManager({ plugins: [createCsiPlugin({ api: fake.api, attachments: fake.cache, drivers: createFakeCsiDrivers() }), ...createAttachOnlyPlugins()] });
const deps = { plugins, translator: createCsiTranslator({ isMigrated: () => true }) };

function pv(source: Record<string, unknown>, accessModes = ['ReadWriteOnce']) {
  const r = projectPv({ metadata: { name: 'pv-1' }, spec: { accessModes, ...source, claimRef: { namespace: 'ns', name: 'c', uid: 'u' } }, status: { phase: 'Bound' } });
  assert.ok(r.ok);
  return resolvePersistentVolume(r.value, 'node-a', deps);
}
const nameOf = (r: ReturnType<typeof pv>) => {
  assert.ok(r.ok, r.ok ? '' : r.reason);
  return r.uniqueName;
};

test('iSCSI and FC PVs are named as upstream names them: portal:iqn:lun, [wwns]:lun, else [wwids]', () => {
  const iqn = 'iqn.2001-04.com.example:storage.disk1';
  assert.equal(nameOf(pv({ iscsi: { targetPortal: '10.0.0.1:3260', iqn, lun: 2, fsType: 'ext4' } })), `kubernetes.io/iscsi/10.0.0.1:3260:${iqn}:2`);
  assert.equal(nameOf(pv({ iscsi: { targetPortal: '10.0.0.1:3260', iqn } })), `kubernetes.io/iscsi/10.0.0.1:3260:${iqn}:0`, 'lun 0 is omitted from JSON');
  assert.equal(nameOf(pv({ fc: { targetWWNs: ['500a0981891b8dc5', '500a0981991b8dc5'], lun: 0 } })), 'kubernetes.io/fc/[500a0981891b8dc5 500a0981991b8dc5]:0');
  assert.equal(nameOf(pv({ fc: { wwids: ['3600508b400105e210000900000490000'] } })), 'kubernetes.io/fc/[3600508b400105e210000900000490000]');
  const unnamed = pv({ fc: { targetWWNs: ['500a0981891b8dc5'] } }); // WWNs without a LUN, no WWIDs
  assert.ok(!unnamed.ok && unnamed.code === 'unsupported_source');
  const noIqn = pv({ iscsi: { targetPortal: '10.0.0.1:3260', lun: 1 } });
  assert.ok(!noIqn.ok && noIqn.code === 'unsupported_source');
});

test('an inline iSCSI pod volume is attachable and may go to several nodes; a ReadWriteOnce iSCSI PV may not', () => {
  const r = projectPod({
    metadata: { name: 'p', namespace: 'ns', uid: 'pu' },
    spec: { nodeName: 'node-a', volumes: [{ name: 'data', iscsi: { targetPortal: '10.0.0.9:3260', iqn: 'iqn.x:y', lun: 1, readOnly: true } }, { name: 'cfg', configMap: { name: 'c' } }] },
    status: { phase: 'Running' },
  });
  assert.ok(r.ok);
  const [data, cfg] = r.value.volumes;
  const inline = resolvePodVolume(r.value, data!, { ...deps, lookups: { pvc: () => undefined, pv: () => undefined } });
  assert.ok(inline.ok);
  assert.equal(inline.uniqueName, 'kubernetes.io/iscsi/10.0.0.9:3260:iqn.x:y:1');
  assert.equal(isMultiAttachAllowed(inline.spec), true, 'H1: inline volumes other than azureDisk and cinder');
  assert.equal(resolvePodVolume(r.value, cfg!, { ...deps, lookups: { pvc: () => undefined, pv: () => undefined } }).ok, false);
  const rwo = pv({ iscsi: { targetPortal: '10.0.0.1:3260', iqn: 'iqn.x:y' } });
  assert.ok(rwo.ok);
  assert.equal(isMultiAttachAllowed(rwo.spec), false);
});

test('attach and detach do nothing and verification keeps them attached; detach by unique name finds the plugin (A5)', async () => {
  const r = pv({ fc: { wwids: ['w1'] } });
  assert.ok(r.ok);
  assert.equal(r.plugin.name, 'kubernetes.io/fc');
  assert.deepEqual(await r.plugin.attach(r.spec, 'node-a'), { devicePath: '' });
  assert.deepEqual(r.plugin.volumesAreAttached([r.spec, r.spec], 'node-a'), [true, true]);
  const found = plugins.findAttachablePluginByUniqueName('kubernetes.io/iscsi/10.0.0.1:3260:iqn.x:y:0');
  assert.equal(found?.plugin.name, 'kubernetes.io/iscsi');
  assert.equal(found?.volumeName, '10.0.0.1:3260:iqn.x:y:0');
  await found!.plugin.detach(found!.volumeName, 'node-a');
  assert.deepEqual([fake.creates.length, fake.deletes.length], [0, 0], 'no VolumeAttachment is involved');
});
