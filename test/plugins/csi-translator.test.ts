import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createCsiTranslator,
  createMigrationPredicate,
  MIGRATED_PLUGINS_ANNOTATION,
  parseMigratedPlugins,
  translateInTreeSpecToCsi,
  type TranslationResult,
} from '../../src/plugins/migration/csi-translator.js';
import { ebsVolumeId, gceBackwardCompatibleAccessModes } from '../../src/plugins/migration/in-tree-translators.js';
import { createCsiPlugin } from '../../src/plugins/csi/csi-plugin.js';
import { createFakeCsiDrivers, createFakeVolumeAttachments } from '../../src/plugins/csi/fake-volume-attachments.js';
import { createVolumePluginManager } from '../../src/plugins/volume-plugin-manager.js';
import { isMultiAttachAllowed } from '../../src/plugins/multi-attach.js';
import { LABEL_ZONE_BETA, LABEL_ZONE_GA, type AccessMode, type InTreeSource, type VolumeSpec } from '../../src/plugins/volume-spec.js';
import { projectPv, type PvRecord } from '../../src/kube/projections/pv.js';
import { pvResolutionChanged, resolvePersistentVolume } from '../../src/populator/volume-resolver.js';

const pv = (source: InTreeSource, accessModes: AccessMode[] = ['ReadWriteOnce'], zoneLabel?: string): VolumeSpec => ({
  name: 'pv-1',
  origin: 'pv',
  source,
  accessModes,
  readOnly: false,
  migrated: false,
  ...(zoneLabel !== undefined ? { zoneLabel } : {}),
});
const inline = (source: InTreeSource): VolumeSpec => ({ name: 'data', origin: 'inline', source, accessModes: [], readOnly: false, migrated: false });

const plugins = createVolumePluginManager({
  plugins: [createCsiPlugin({ api: createFakeVolumeAttachments().api, attachments: createFakeVolumeAttachments().cache, drivers: createFakeCsiDrivers() })],
});

function translated(r: TranslationResult): VolumeSpec {
  assert.equal(r.status, 'translated', r.status === 'skipped' ? r.reason : 'unchanged');
  return (r as Extract<TranslationResult, { status: 'translated' }>).spec;
}

function uniqueOf(spec: VolumeSpec): string | undefined {
  return plugins.uniqueVolumeName(translated(translateInTreeSpecToCsi(spec)));
}

test('awsElasticBlockStore → ebs.csi.aws.com, handle vol-… (aws:// prefix stripped)', () => {
  assert.equal(uniqueOf(pv({ type: 'awsElasticBlockStore', volumeID: 'vol-0abc' })), 'kubernetes.io/csi/ebs.csi.aws.com^vol-0abc');
  assert.equal(uniqueOf(pv({ type: 'awsElasticBlockStore', volumeID: 'aws://us-east-1a/vol-0abc' })), 'kubernetes.io/csi/ebs.csi.aws.com^vol-0abc');
  assert.equal(uniqueOf(pv({ type: 'awsElasticBlockStore', volumeID: 'aws:///vol-0abc' })), 'kubernetes.io/csi/ebs.csi.aws.com^vol-0abc');
  assert.deepEqual(ebsVolumeId('aws://us-east-1a/'), { ok: false, error: 'Invalid format for AWS volume (aws://us-east-1a/)' });
  const r = translateInTreeSpecToCsi(pv({ type: 'awsElasticBlockStore', volumeID: 'aws://us-east-1a/not-a-volume' }));
  assert.equal(r.status, 'skipped');
  const spec = translated(translateInTreeSpecToCsi(pv({ type: 'awsElasticBlockStore', volumeID: 'vol-1', fsType: 'ext4', partition: 2 })));
  assert.deepEqual(spec.source, { type: 'csi', driver: 'ebs.csi.aws.com', volumeHandle: 'vol-1', fsType: 'ext4', volumeAttributes: { partition: '2' } });
  assert.equal(spec.name, 'pv-1');
  assert.equal(spec.migrated, true);
  const inl = translated(translateInTreeSpecToCsi(inline({ type: 'awsElasticBlockStore', volumeID: 'vol-9' })));
  assert.equal(inl.name, 'ebs.csi.aws.com-vol-9');
  assert.equal(inl.origin, 'inline-migrated');
  assert.deepEqual(inl.accessModes, ['ReadWriteOnce']);
  assert.deepEqual(inl.inlineVolumeSpec, {
    csi: { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-9', volumeAttributes: { partition: '0' } },
    accessModes: ['ReadWriteOnce'],
    volumeMode: 'Filesystem',
  });
});

test('gcePersistentDisk → pd.csi.storage.gke.io, projects/UNSPECIFIED/{zones|regions}/…/disks/<pd>', () => {
  const src = { type: 'gcePersistentDisk', pdName: 'disk-1' } as const;
  const d = 'kubernetes.io/csi/pd.csi.storage.gke.io^projects/UNSPECIFIED';
  assert.equal(uniqueOf(pv(src, ['ReadWriteOnce'], 'us-central1-a')), `${d}/zones/us-central1-a/disks/disk-1`);
  assert.equal(uniqueOf(pv(src, ['ReadWriteOnce'], 'us-central1-a__us-central1-c')), `${d}/regions/us-central1/disks/disk-1`);
  assert.equal(uniqueOf(pv(src)), `${d}/zones/UNSPECIFIED/disks/disk-1`);
  const bad = translateInTreeSpecToCsi(pv(src, ['ReadWriteOnce'], 'us-central1-a__europe-west1-b'));
  assert.equal(bad.status, 'skipped');
  assert.match((bad as { reason: string }).reason, /^failed to get region from zones: multiple or no regions/);
  assert.equal(uniqueOf(inline(src)), `${d}/zones/UNSPECIFIED/disks/disk-1`);
  assert.equal(translated(translateInTreeSpecToCsi(inline(src))).name, 'pd.csi.storage.gke.io-disk-1');
  // Access modes are rewritten, which changes the multi-attach policy (H1 on the translated spec).
  assert.deepEqual(translated(translateInTreeSpecToCsi(pv(src, ['ReadWriteMany']))).accessModes, ['ReadWriteOnce']);
  assert.equal(isMultiAttachAllowed(translated(translateInTreeSpecToCsi(pv(src, ['ReadWriteMany'])))), false);
  assert.deepEqual(translated(translateInTreeSpecToCsi(inline({ ...src, readOnly: true }))).accessModes, ['ReadOnlyMany']);
  assert.deepEqual(gceBackwardCompatibleAccessModes(['ReadOnlyMany', 'ReadWriteOnce']), ['ReadWriteOnce']);
  assert.deepEqual(gceBackwardCompatibleAccessModes(['ReadOnlyMany']), ['ReadOnlyMany']);
  assert.deepEqual(gceBackwardCompatibleAccessModes(['ReadWriteOncePod']), ['ReadWriteOnce']);
});
test('a gcePersistentDisk PV is named with its zone label, beta label first, as the kubelet names it (C6)', () => {
  const gcePv = (labels?: Record<string, string>) => {
    const r = projectPv({
      metadata: { name: 'pv-gce', ...(labels ? { labels } : {}) },
      spec: { accessModes: ['ReadWriteOnce'], gcePersistentDisk: { pdName: 'disk-1', fsType: 'ext4' }, claimRef: { namespace: 'ns', name: 'c', uid: 'cu' } },
      status: { phase: 'Bound' },
    });
    assert.ok(r.ok);
    return r.value;
  };
  const translator = createCsiTranslator({ isMigrated: () => true });
  const nameOf = (p: PvRecord) => {
    const r = resolvePersistentVolume(p, 'node-a', { plugins, translator });
    assert.ok(r.ok, r.ok ? '' : r.reason);
    return r.uniqueName;
  };
  const d = 'kubernetes.io/csi/pd.csi.storage.gke.io^projects/UNSPECIFIED';
  assert.equal(nameOf(gcePv({ [LABEL_ZONE_GA]: 'us-central1-a' })), `${d}/zones/us-central1-a/disks/disk-1`);
  assert.equal(nameOf(gcePv({ [LABEL_ZONE_BETA]: 'europe-west1-b', [LABEL_ZONE_GA]: 'us-central1-a' })), `${d}/zones/europe-west1-b/disks/disk-1`);
  assert.equal(nameOf(gcePv({ [LABEL_ZONE_GA]: 'us-central1-a__us-central1-c' })), `${d}/regions/us-central1/disks/disk-1`);
  assert.equal(nameOf(gcePv()), `${d}/zones/UNSPECIFIED/disks/disk-1`);
  // A label change renames the volume: the populator must resolve its pods again.
  assert.ok(pvResolutionChanged(gcePv({ [LABEL_ZONE_GA]: 'us-central1-a' }), gcePv()));
  assert.ok(!pvResolutionChanged(gcePv({ [LABEL_ZONE_GA]: 'us-central1-a', team: 'x' }), gcePv({ [LABEL_ZONE_GA]: 'us-central1-a' })));
});


test('azureDisk → disk.csi.azure.com, handle = diskURI; only managed disks migrate', () => {
  const uri = '/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Compute/disks/disk-1';
  const src = { type: 'azureDisk', diskName: 'disk-1', dataDiskURI: uri } as const;
  assert.equal(uniqueOf(pv(src)), `kubernetes.io/csi/disk.csi.azure.com^${uri}`);
  assert.equal(uniqueOf(pv({ ...src, kind: 'Managed', cachingMode: 'ReadOnly' })), `kubernetes.io/csi/disk.csi.azure.com^${uri}`);
  const shared = translateInTreeSpecToCsi(pv({ ...src, kind: 'Shared' }));
  assert.deepEqual(shared, { status: 'skipped', inTreePluginName: 'kubernetes.io/azure-disk', reason: 'kind(Shared) is not supported in csi migration' });
  const inl = translated(translateInTreeSpecToCsi(inline(src)));
  assert.equal(inl.name, uri);
  assert.deepEqual(inl.source, { type: 'csi', driver: 'disk.csi.azure.com', volumeHandle: uri, volumeAttributes: { kind: 'Managed' } });
});

test('cinder → cinder.csi.openstack.org and vsphereVolume → csi.vsphere.vmware.com', () => {
  const id = '6f5a3b46-3a0e-4c4e-9d3c-1a2b3c4d5e6f';
  assert.equal(uniqueOf(pv({ type: 'cinder', volumeID: id })), `kubernetes.io/csi/cinder.csi.openstack.org^${id}`);
  assert.equal(translated(translateInTreeSpecToCsi(inline({ type: 'cinder', volumeID: id }))).name, `cinder.csi.openstack.org-${id}`);
  const path = '[vsanDatastore] kubevols/kubernetes-dynamic-pvc-1.vmdk';
  assert.equal(uniqueOf(pv({ type: 'vsphereVolume', volumePath: path })), `kubernetes.io/csi/csi.vsphere.vmware.com^${path}`);
  const vs = translated(translateInTreeSpecToCsi(pv({ type: 'vsphereVolume', volumePath: path, storagePolicyName: 'gold' })));
  assert.deepEqual(vs.source, { type: 'csi', driver: 'csi.vsphere.vmware.com', volumeHandle: path, volumeAttributes: { storagepolicyname: 'gold' } });
});

test('CSI and other sources pass through unchanged', () => {
  const csi: VolumeSpec = { name: 'p', origin: 'pv', source: { type: 'csi', driver: 'd', volumeHandle: 'h' }, accessModes: [], readOnly: false, migrated: false };
  assert.deepEqual(translateInTreeSpecToCsi(csi), { status: 'unchanged', spec: csi });
  const nfs: VolumeSpec = { name: 'n', origin: 'inline', source: { type: 'other', name: 'nfs' }, accessModes: [], readOnly: false, migrated: false };
  assert.equal(translateInTreeSpecToCsi(nfs).status, 'unchanged');
  assert.equal(plugins.canAttach(nfs), false);
});

test('C6: translation only when migration is complete or the CSINode lists the plugin', () => {
  const annotations: Record<string, string> = { 'node-a': 'kubernetes.io/gce-pd,kubernetes.io/aws-ebs' };
  const isMigrated = createMigrationPredicate({ migrationComplete: [], csiNodeAnnotation: (n) => annotations[n] });
  const lines: unknown[] = [];
  const log = { info: (o: unknown) => lines.push(o) } as unknown as Parameters<typeof createCsiTranslator>[0]['log'];
  const translator = createCsiTranslator({ isMigrated, log });
  const spec = pv({ type: 'awsElasticBlockStore', volumeID: 'vol-1' });
  assert.equal(translator.translateForNode(spec, 'node-a').status, 'translated');
  const skipped = translator.translateForNode(spec, 'node-b');
  assert.equal(skipped.status, 'skipped');
  translator.translateForNode(spec, 'node-b');
  assert.equal(lines.length, 1, 'a skip reason is logged once');
  // Default: upstream considers migration complete for all five plugins.
  const complete = createMigrationPredicate({ csiNodeAnnotation: () => undefined });
  for (const p of ['kubernetes.io/aws-ebs', 'kubernetes.io/gce-pd', 'kubernetes.io/azure-disk', 'kubernetes.io/cinder', 'kubernetes.io/vsphere-volume']) {
    assert.equal(complete(p, 'any'), true, p);
  }
  assert.equal(complete('kubernetes.io/portworx-volume', 'any'), false);
  assert.deepEqual([...parseMigratedPlugins('a,b')], ['a', 'b']);
  assert.equal(MIGRATED_PLUGINS_ANNOTATION, 'storage.alpha.kubernetes.io/migrated-plugins');
});
