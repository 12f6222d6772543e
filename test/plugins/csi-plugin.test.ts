import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { attachmentName } from '../../src/plugins/csi/attachment-name.js';
import { createCsiPlugin, DEFAULT_CSI_TIMEOUT_MS } from '../../src/plugins/csi/csi-plugin.js';
import { createFakeCsiDrivers, createFakeVolumeAttachments } from '../../src/plugins/csi/fake-volume-attachments.js';
import { fleetError, isFleetError } from '../../src/errors/index.js';
import type { AccessMode, VolumeSpec } from '../../src/plugins/volume-spec.js';

const DRIVER = 'ebs.csi.aws.com';

function pvSpec(name: string, handle: string, driver = DRIVER, accessModes: AccessMode[] = ['ReadWriteOnce']): VolumeSpec {
  return { name, origin: 'pv', source: { type: 'csi', driver, volumeHandle: handle }, accessModes, readOnly: false, migrated: false };
}

function setup(opts: { csiTimeoutMs?: number; drivers?: Record<string, boolean> } = {}) {
  const vas = createFakeVolumeAttachments();
  const drivers = createFakeCsiDrivers(opts.drivers);
  const plugin = createCsiPlugin({ api: vas.api, attachments: vas.cache, drivers, csiTimeoutMs: opts.csiTimeoutMs ?? 30_000 });
  return { vas, drivers, plugin };
}

/** Lets pending promise callbacks (create → wait registration) run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

test('L1: VolumeAttachment name is csi- + hex sha256(handle + driver + node)', () => {
  const cases: Array<[string, string, string]> = [
    ['vol-1', DRIVER, 'node-1'],
    ['projects/UNSPECIFIED/zones/us-central1-a/disks/d', 'pd.csi.storage.gke.io', 'gke-node'],
    ['', '', ''],
  ];
  for (const [h, d, n] of cases) {
    const expected = 'csi-' + createHash('sha256').update(`${h}${d}${n}`).digest('hex');
    assert.equal(attachmentName(h, d, n), expected);
    assert.match(attachmentName(h, d, n), /^csi-[0-9a-f]{64}$/);
  }
  // Literal vectors, checked by hand with `printf '%s' '<handle><driver><node>' | sha256sum`.
  assert.equal(
    attachmentName('vol-0123456789abcdef0', DRIVER, 'ip-10-0-1-23.ec2.internal'),
    'csi-880af19cc88681d68f80a4a11ffa3d31efb3ee865ea742d7701040e168882925',
  );
  assert.equal(attachmentName('pvc-a1b2', 'hostpath.csi.k8s.io', 'node-7'), 'csi-fc2bd8ce554994b8c37eaa8309b909a34a46cbd6ab08cf698822b7e4f23ddb86');
  assert.equal(DEFAULT_CSI_TIMEOUT_MS, 120_000);
});

test('attach creates the VolumeAttachment of L2 and resolves once status.attached is true', async () => {
  const { vas, plugin } = setup();
  const name = attachmentName('vol-1', DRIVER, 'node-1');
  let done = false;
  const p = plugin.attach(pvSpec('pv-1', 'vol-1'), 'node-1').then((r) => ((done = true), r));
  await settle();
  assert.deepEqual(vas.creates, [
    { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name }, spec: { attacher: DRIVER, nodeName: 'node-1', source: { persistentVolumeName: 'pv-1' } } },
  ]);
  assert.equal(done, false, 'not attached yet');
  assert.equal(plugin.pendingWaits(), 1);
  vas.update(name, { attached: true });
  assert.deepEqual(await p, { devicePath: '' });
  assert.equal(plugin.pendingWaits(), 0);
  assert.equal(vas.listenerCount(), 0, 'no listener kept after the wait');
});

test('attach reuses a cached VolumeAttachment as is, without a create', async () => {
  const { vas, plugin } = setup();
  vas.put(attachmentName('vol-1', DRIVER, 'node-1'), { attached: true, deleting: false });
  assert.deepEqual(await plugin.attach(pvSpec('pv-1', 'vol-1'), 'node-1'), { devicePath: '' });
  assert.equal(vas.creates.length, 0);
});

test('attach treats AlreadyExists as created and tolerates not-found while waiting', async () => {
  const { vas, plugin } = setup();
  vas.onCreate = 'invisible';
  const name = attachmentName('vol-1', DRIVER, 'node-1');
  await vas.api.create({ apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name }, spec: { attacher: DRIVER, nodeName: 'node-1', source: { persistentVolumeName: 'pv-1' } } });
  const p = plugin.attach(pvSpec('pv-1', 'vol-1'), 'node-1');
  await settle();
  assert.equal(vas.creates.length, 2, 'the plugin posted and got AlreadyExists');
  vas.remove('unrelated');
  vas.put(name, { attached: false, deleting: false });
  vas.remove(name); // gone from the cache for a moment: still waiting
  await settle();
  assert.equal(plugin.pendingWaits(), 1);
  vas.put(name, { attached: true, deleting: false });
  assert.deepEqual(await p, { devicePath: '' });
});

test('attach fails at once with attachError.message', async () => {
  const { vas, plugin } = setup();
  const name = attachmentName('vol-1', DRIVER, 'node-1');
  const p = plugin.attach(pvSpec('pv-1', 'vol-1'), 'node-1');
  await settle();
  vas.update(name, { attachError: 'rpc error: code = Internal desc = disk busy' });
  await assert.rejects(p, (err: unknown) => isFleetError(err, 'FA_ERR_OP_FAILED') && err.message === 'rpc error: code = Internal desc = disk busy');
  // An error already present when attach starts fails it too.
  await assert.rejects(plugin.attach(pvSpec('pv-1', 'vol-1'), 'node-1'), /disk busy/);
});

test('attach fails when the VolumeAttachment is being deleted, even if attached', async () => {
  const { vas, plugin } = setup();
  const name = attachmentName('vol-1', DRIVER, 'node-1');
  vas.put(name, { attached: true, deleting: true, detachError: 'x' });
  await assert.rejects(plugin.attach(pvSpec('pv-1', 'vol-1'), 'node-1'), { message: 'volume attachment is being deleted' });
  assert.equal(vas.creates.length, 0, 'L5: the deleting VA is not re-created');
  vas.put(name, { attached: false, deleting: false });
  const p = plugin.attach(pvSpec('pv-1', 'vol-1'), 'node-1');
  vas.update(name, { deleting: true });
  await assert.rejects(p, { message: 'volume attachment is being deleted' });
});

test('attach times out with the upstream text and leaves nothing pending', async () => {
  const { vas, plugin } = setup({ csiTimeoutMs: 50 });
  await assert.rejects(
    plugin.attach(pvSpec('pv-1', 'vol-9'), 'node-1'),
    (err: unknown) => isFleetError(err, 'FA_ERR_OP_TIMEOUT') && err.message === `timed out waiting for external-attacher of ${DRIVER} CSI driver to attach volume vol-9`,
  );
  assert.equal(plugin.pendingWaits(), 0);
  assert.equal(vas.listenerCount(), 0);
});

test('attach rejects with the API error when create fails', async () => {
  const { vas, plugin } = setup();
  vas.createError = new Error('volumeattachments.storage.k8s.io is forbidden');
  await assert.rejects(plugin.attach(pvSpec('pv-1', 'vol-1'), 'node-1'), {
    message: 'kubernetes.io/csi: attacher.Attach failed: volumeattachments.storage.k8s.io is forbidden',
  });
  assert.equal(plugin.pendingWaits(), 0);
});

test('a migrated inline volume is attached with spec.source.inlineVolumeSpec', async () => {
  const { vas, plugin } = setup();
  const inlineVolumeSpec = { csi: { driver: DRIVER, volumeHandle: 'vol-2' }, accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' };
  const spec: VolumeSpec = { ...pvSpec(`${DRIVER}-vol-2`, 'vol-2'), origin: 'inline-migrated', migrated: true, inlineVolumeSpec };
  const p = plugin.attach(spec, 'n');
  await settle();
  assert.deepEqual(vas.creates[0]!.spec.source, { inlineVolumeSpec });
  vas.update(vas.creates[0]!.metadata.name, { attached: true });
  await p;
});

test('detach deletes the VolumeAttachment and resolves once it is gone', async () => {
  const { vas, plugin } = setup();
  const name = attachmentName('vol-1', DRIVER, 'node-1');
  vas.put(name, { attached: true, deleting: false });
  const p = plugin.detach(`${DRIVER}^vol-1`, 'node-1');
  await settle();
  assert.deepEqual(vas.deletes, [name]);
  assert.equal(plugin.pendingWaits(), 1, 'finalizer still holds it');
  vas.remove(name);
  await p;
  assert.equal(vas.listenerCount(), 0);
});

test('detach of a missing VolumeAttachment (NotFound) succeeds at once', async () => {
  const { vas, plugin } = setup();
  await plugin.detach(`${DRIVER}^vol-1`, 'node-1');
  assert.equal(vas.deletes.length, 1);
});

test('detach fails with detachError.message, and times out with the upstream text', async () => {
  const { vas, plugin } = setup();
  const name = attachmentName('vol-1', DRIVER, 'node-1');
  vas.put(name, { attached: true, deleting: false });
  const p = plugin.detach(`${DRIVER}^vol-1`, 'node-1');
  await settle();
  vas.update(name, { detachError: 'rpc error: detach failed' });
  await assert.rejects(p, { message: 'rpc error: detach failed' });

  const short = createCsiPlugin({ api: vas.api, attachments: vas.cache, drivers: createFakeCsiDrivers(), csiTimeoutMs: 50 });
  vas.put(name, { attached: true, deleting: false });
  await assert.rejects(short.detach(`${DRIVER}^vol-1`, 'node-1'), {
    message: 'timed out waiting for external-attacher of unknown CSI driver to detach volume vol-1',
  });
  await assert.rejects(plugin.detach('no-separator', 'node-1'), (err: unknown) => isFleetError(err, 'FA_ERR_SPEC_UNSUPPORTED'));
  assert.equal(plugin.pendingWaits(), 0);
});

test('C7: attachable unless the CSIDriver says attachRequired: false; inline CSI never', () => {
  const { plugin } = setup({ drivers: { 'nfs.csi.k8s.io': false, [DRIVER]: true } });
  assert.equal(plugin.canAttach(pvSpec('a', 'h')), true);
  assert.equal(plugin.canAttach(pvSpec('a', 'h', 'no-csidriver.example.com')), true);
  assert.equal(plugin.canAttach(pvSpec('a', 'h', 'nfs.csi.k8s.io')), false);
  const ephemeral: VolumeSpec = { ...pvSpec('scratch', 'h'), origin: 'inline', accessModes: [] };
  assert.equal(plugin.canAttach(ephemeral), false);
  assert.equal(plugin.getVolumeName(pvSpec('a', 'vol-1')), `${DRIVER}^vol-1`);
});

test('L6: volumesAreAttached answers from the cache', () => {
  const { vas, plugin } = setup({ drivers: { 'nfs.csi.k8s.io': false } });
  vas.put(attachmentName('a', DRIVER, 'n'), { attached: true, deleting: false });
  vas.put(attachmentName('b', DRIVER, 'n'), { attached: false, deleting: false });
  const specs = [pvSpec('a', 'a'), pvSpec('b', 'b'), pvSpec('c', 'c'), pvSpec('d', 'd', 'nfs.csi.k8s.io')];
  assert.deepEqual(plugin.volumesAreAttached(specs, 'n'), [true, false, false, true]);
  assert.deepEqual(plugin.volumesAreAttached(specs, 'other-node'), [false, false, false, true]);
});

test('L6, second look: a VolumeAttachment missing from the cache is read from the API server; a failed read counts as detached', async () => {
  const { vas, plugin } = setup();
  vas.put(attachmentName('cached', DRIVER, 'n'), { attached: false, deleting: false }); // the cache's answer stands
  vas.server.set(attachmentName('cached', DRIVER, 'n'), { attached: true, deleting: false });
  vas.server.set(attachmentName('lagging', DRIVER, 'n'), { attached: true, deleting: false }); // not seen by the watch yet
  vas.server.set(attachmentName('unattached', DRIVER, 'n'), { attached: false, deleting: false });
  const specs = [pvSpec('a', 'cached'), pvSpec('b', 'lagging'), pvSpec('c', 'unattached'), pvSpec('d', 'gone')];
  assert.deepEqual(plugin.volumesAreAttached(specs, 'n'), [false, false, false, false]);
  assert.deepEqual(await plugin.recheckAttached(specs, 'n'), [false, true, false, false]);
  vas.getError = new Error('connection refused');
  assert.deepEqual(await plugin.recheckAttached(specs, 'n'), [false, false, false, false]);
  // A read the client refused to send (stopping, or not leading) is no answer: the look fails
  // rather than calling the lagging volume detached.
  vas.getError = fleetError('FA_ERR_NOT_LEADER');
  await assert.rejects(plugin.recheckAttached(specs, 'n'), (err: unknown) => isFleetError(err, 'FA_ERR_NOT_LEADER'));
  // Without a live GET (a client that cannot read them) the cache is the whole answer.
  const cacheOnly = createCsiPlugin({ api: { create: vas.api.create, delete: vas.api.delete }, attachments: vas.cache, drivers: createFakeCsiDrivers() });
  vas.getError = undefined;
  assert.deepEqual(await cacheOnly.recheckAttached(specs, 'n'), [false, false, false, false]);
});

test('thousands of concurrent waits share one cache listener and all settle', async () => {
  const { vas, plugin } = setup();
  const n = 2000;
  const waits = Array.from({ length: n }, (_, i) => plugin.attach(pvSpec(`pv-${i}`, `vol-${i}`), `node-${i % 50}`));
  await settle();
  assert.equal(plugin.pendingWaits(), n);
  assert.equal(vas.listenerCount(), 1);
  for (const body of vas.creates) vas.update(body.metadata.name, { attached: true });
  await Promise.all(waits);
  assert.equal(plugin.pendingWaits(), 0);
  assert.equal(vas.listenerCount(), 0);
});

test('close abandons pending waits', async () => {
  const { plugin } = setup();
  const p = plugin.attach(pvSpec('pv-1', 'vol-1'), 'node-1');
  await settle();
  plugin.close();
  await assert.rejects(p, /abandoned/);
  assert.equal(plugin.pendingWaits(), 0);
  // A create answered after the close (it was on the wire) starts no new wait, and no timer.
  await assert.rejects(plugin.attach(pvSpec('pv-2', 'vol-2'), 'node-1'), /abandoned/);
  assert.equal(plugin.pendingWaits(), 0);
});
