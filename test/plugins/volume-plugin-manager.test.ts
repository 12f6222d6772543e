import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createVolumePluginManager } from '../../src/plugins/volume-plugin-manager.js';
import { createCsiPlugin } from '../../src/plugins/csi/csi-plugin.js';
import { createFakeCsiDrivers, createFakeVolumeAttachments } from '../../src/plugins/csi/fake-volume-attachments.js';
import { isMultiAttachAllowed } from '../../src/plugins/multi-attach.js';
import { pvSpec } from '../../src/populator/volume-resolver.js';
import {
  csiUniqueVolumeName,
  splitCsiUniqueVolumeName,
  splitUniqueVolumeName,
} from '../../src/plugins/unique-volume-name.js';
import type { VolumePlugin } from '../../src/plugins/volume-plugin.js';
import { createFakeAttachablePlugin } from '../../src/plugins/fake-attachable-plugin.js';
import type { AccessMode, VolumeSource, VolumeSpec } from '../../src/plugins/volume-spec.js';

const csiSource: VolumeSource = { type: 'csi', driver: 'ebs.csi.aws.com', volumeHandle: 'vol-1' };

function spec(origin: VolumeSpec['origin'], source: VolumeSource, accessModes: AccessMode[] = []): VolumeSpec {
  return { name: 'v', origin, source, accessModes, readOnly: false, migrated: false };
}

function manager(extra: VolumePlugin[] = [], drivers: Record<string, boolean> = {}) {
  const vas = createFakeVolumeAttachments();
  const csi = createCsiPlugin({ api: vas.api, attachments: vas.cache, drivers: createFakeCsiDrivers(drivers) });
  return { csi, plugins: createVolumePluginManager({ plugins: [csi, ...extra] }) };
}

test('unique names: kubernetes.io/csi/<driver>^<handle> and back (A5)', () => {
  const u = csiUniqueVolumeName('pd.csi.storage.gke.io', 'projects/p/zones/z/disks/d');
  assert.equal(u, 'kubernetes.io/csi/pd.csi.storage.gke.io^projects/p/zones/z/disks/d');
  assert.deepEqual(splitUniqueVolumeName(u), { pluginName: 'kubernetes.io/csi', volumeName: 'pd.csi.storage.gke.io^projects/p/zones/z/disks/d' });
  assert.deepEqual(splitCsiUniqueVolumeName(u), { driver: 'pd.csi.storage.gke.io', volumeHandle: 'projects/p/zones/z/disks/d' });
  assert.equal(splitUniqueVolumeName('kubernetes.io/csi'), undefined);
  assert.equal(splitCsiUniqueVolumeName('kubernetes.io/aws-ebs/vol-1'), undefined, 'not CSI');
  assert.equal(splitCsiUniqueVolumeName('kubernetes.io/csi/d^h^x'), undefined, 'handle with ^ cannot be split, as upstream');
  assert.equal(splitCsiUniqueVolumeName('kubernetes.io/csi/no-separator'), undefined);
});

test('findAttachablePluginBySpec / canAttach (C7)', () => {
  const { csi, plugins } = manager([], { 'nfs.csi.k8s.io': false });
  assert.equal(plugins.findAttachablePluginBySpec(spec('pv', csiSource)), csi);
  assert.equal(plugins.canAttach(spec('pv', csiSource)), true);
  assert.equal(plugins.canAttach(spec('pv', { ...csiSource, driver: 'nfs.csi.k8s.io' })), false, 'attachRequired: false');
  assert.equal(plugins.canAttach(spec('inline', csiSource)), false, 'CSI ephemeral inline');
  assert.equal(plugins.canAttach(spec('inline', { type: 'other', name: 'hostPath' })), false);
  assert.equal(plugins.canAttach(spec('pv', { type: 'awsElasticBlockStore', volumeID: 'vol-1' })), false, 'untranslated in-tree');
  const lookup = plugins.findPluginBySpec(spec('inline', { type: 'other', name: 'nfs' }));
  assert.equal(lookup.found, false);
  assert.equal(plugins.uniqueVolumeName(spec('pv', csiSource)), 'kubernetes.io/csi/ebs.csi.aws.com^vol-1');
  const byName = plugins.findAttachablePluginByUniqueName('kubernetes.io/csi/ebs.csi.aws.com^vol-1');
  assert.equal(byName?.plugin, csi);
  assert.equal(byName?.volumeName, 'ebs.csi.aws.com^vol-1');
  assert.equal(plugins.findAttachablePluginByUniqueName('kubernetes.io/unknown/x'), undefined);
  assert.deepEqual(plugins.pluginNames(), ['kubernetes.io/csi']);
});

test('plugin registration: duplicates and malformed names are refused; overlapping plugins are reported', () => {
  const rival: VolumePlugin = { name: 'example.com/rival', canSupport: (s) => s.source.type === 'csi', getVolumeName: () => 'x' };
  assert.throws(() => manager([{ ...rival, name: 'kubernetes.io/csi' }]), /registered twice/);
  assert.throws(() => manager([{ ...rival, name: 'noslash' }]), /<domain>\/<name>/);
  const { plugins } = manager([rival]);
  const lookup = plugins.findPluginBySpec(spec('pv', csiSource));
  assert.equal(lookup.found, false);
  assert.equal(lookup.found ? '' : lookup.reason, 'multiple-plugins');
  assert.equal(plugins.canAttach(spec('pv', csiSource)), false);
});

test('H1 multi-attach policy table', () => {
  const azure: VolumeSource = { type: 'azureDisk', diskName: 'd', dataDiskURI: 'u' };
  const cinder: VolumeSource = { type: 'cinder', volumeID: 'c' };
  const rows: Array<[string, VolumeSpec | undefined, boolean]> = [
    ['undefined spec', undefined, true],
    ['inline azureDisk', spec('inline', azure), false],
    ['inline cinder', spec('inline', cinder), false],
    ['inline CSI', spec('inline', csiSource), true],
    ['inline other', spec('inline', { type: 'other', name: 'nfs' }), true],
    ['PV without access modes', spec('pv', csiSource, []), true],
    ['PV RWO', spec('pv', csiSource, ['ReadWriteOnce']), false],
    ['PV RWOP', spec('pv', csiSource, ['ReadWriteOncePod']), false],
    ['PV RWO+RWOP', spec('pv', csiSource, ['ReadWriteOnce', 'ReadWriteOncePod']), false],
    ['PV RWX', spec('pv', csiSource, ['ReadWriteMany']), true],
    ['PV ROX', spec('pv', csiSource, ['ReadOnlyMany']), true],
    ['PV RWO+ROX', spec('pv', csiSource, ['ReadWriteOnce', 'ReadOnlyMany']), true],
    ['PV azureDisk RWX', spec('pv', azure, ['ReadWriteMany']), true],
    ['PV cinder no modes', spec('pv', cinder, []), true],
    ['migrated inline RWO', spec('inline-migrated', csiSource, ['ReadWriteOnce']), false],
    ['migrated inline ROX', spec('inline-migrated', csiSource, ['ReadOnlyMany']), true],
  ];
  for (const [label, s, allowed] of rows) assert.equal(isMultiAttachAllowed(s), allowed, label);
});

test('H1 on a PV listing modes this controller does not know: decided as upstream decides on the raw list', () => {
  const allowed = (modes: string[]) => {
    const s = pvSpec({ name: 'pv', phase: 'Bound', accessModes: modes, csi: { driver: 'd.example.com', volumeHandle: 'h', readOnly: false } }, false);
    if (!('source' in s)) throw new Error('no spec');
    return isMultiAttachAllowed(s);
  };
  assert.equal(allowed([]), true, 'no modes');
  assert.equal(allowed(['ReadWriteOnceForever']), false, 'unknown modes only: non-empty, no RWX/ROX');
  assert.equal(allowed(['ReadWriteOnceForever', 'ReadWriteMany']), true);
  assert.equal(allowed(['ReadWriteOnceForever', 'ReadWriteOnce']), false);
});

test('the fake attachable plugin names volumes like CSI and ends calls when told', async () => {
  const fake = createFakeAttachablePlugin();
  const plugins = createVolumePluginManager({ plugins: [fake] });
  const s = spec('pv', csiSource, ['ReadWriteOnce']);
  assert.equal(plugins.uniqueVolumeName(s), 'kubernetes.io/csi/ebs.csi.aws.com^vol-1');
  const attach = fake.attach(s, 'n1');
  const detach = fake.detach('ebs.csi.aws.com^vol-1', 'n2');
  assert.deepEqual(fake.pending().map((c) => [c.op, c.volumeName, c.nodeName]), [
    ['attach', 'ebs.csi.aws.com^vol-1', 'n1'],
    ['detach', 'ebs.csi.aws.com^vol-1', 'n2'],
  ]);
  fake.calls[0]!.finish();
  fake.calls[1]!.finish(new Error('detach failed'));
  assert.deepEqual(await attach, { devicePath: '' });
  await assert.rejects(detach, { message: 'detach failed' });
  assert.equal(fake.pending().length, 0);
});
