import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { projectNode, projectPv, projectVolumeAttachment, type Projected } from '../../src/kube/projections/index.js';
import { keepNodeFrom } from '../../src/kube/projections/node.js';
import { PV_KIND, type PvRecord } from '../../src/kube/projections/pv.js';
import { VOLUME_ATTACHMENT_KIND, type VolumeAttachmentRecord } from '../../src/kube/projections/volume-attachment.js';
import { keepEqual } from '../../src/kube/projections/keep-equal.js';
import { keepStrings } from '../../src/kube/projections/keep-strings.js';
import { POD_KIND, type PodRecord } from '../../src/kube/projections/pod.js';

// ResourceKind.keepFrom: what the store keeps on an update. Object identity is what these
// tests can see (a string's identity is not observable from JavaScript); content must always be
// the update's.

const keepPvFrom = (old: PvRecord, fresh: PvRecord) => PV_KIND.keepFrom!(old, fresh);
const keepVolumeAttachmentFrom = (old: VolumeAttachmentRecord, fresh: VolumeAttachmentRecord) => VOLUME_ATTACHMENT_KIND.keepFrom!(old, fresh);

function ok<T>(p: Projected<T>): T {
  if (!p.ok) assert.fail(`expected a projection, got: ${p.reason}`);
  return p.value;
}

describe('keepNodeFrom (a node update as the store keeps it)', () => {
  const nodeOf = (volumesInUse: string[], volumesAttached: string[], ready = true) =>
    ok(projectNode({ metadata: { name: 'n1', uid: 'u1' }, status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }], volumesInUse, volumesAttached: volumesAttached.map((name) => ({ name, devicePath: '' })) } }));
  const v = (i: number) => `kubernetes.io/csi/d^vol-${i}`;

  it('keeps the stored record when nothing it keeps changed (a heartbeat, a condition message)', () => {
    const old = nodeOf([v(1), v(2)], [v(1), v(2)]);
    assert.equal(keepNodeFrom(old, nodeOf([v(1), v(2)], [v(1), v(2)])), old);
  });

  it('takes the unchanged list from the stored record, and the changed one from the update with the stored copies of its elements', () => {
    const old = nodeOf([v(1), v(2)], [v(1), v(2)]);
    const got = keepNodeFrom(old, nodeOf([v(1), v(2)], [v(0), v(1), v(2), v(3)]));
    assert.notEqual(got, old);
    assert.equal(got.volumesInUse, old.volumesInUse, 'the same list object');
    assert.deepEqual(got.volumesAttached, [v(0), v(1), v(2), v(3)]);
    assert.deepEqual(keepNodeFrom(old, nodeOf([v(2)], [v(1), v(2)], false)), { ...old, ready: false, volumesInUse: [v(2)] });
  });
});

describe('PV updates as the store keeps them', () => {
  const pvOf = (o: { rv?: string; phase?: string; uid?: string; handle?: string; finalizers?: string[]; modes?: string[] } = {}) => ok(projectPv({
    metadata: { name: 'pv-1', uid: 'u', resourceVersion: o.rv ?? '1', finalizers: o.finalizers ?? [] },
    spec: {
      accessModes: o.modes ?? ['ReadWriteOnce'],
      claimRef: { namespace: 'ns', name: 'data-0', uid: o.uid ?? 'claim-1' },
      csi: { driver: 'ebs.csi.aws.com', volumeHandle: o.handle ?? 'vol-1' },
    },
    status: { phase: o.phase ?? 'Bound' },
  }));
  const gceOf = (pdName: string) => ok(projectPv({ metadata: { name: 'pv-2' }, spec: { gcePersistentDisk: { pdName, partition: 1 } } }));

  it('keeps the stored record when only what it does not keep changed (the attacher\'s finalizer, the resourceVersion)', () => {
    const old = pvOf();
    assert.equal(keepPvFrom(old, pvOf({ rv: '2', finalizers: ['external-attacher/ebs-csi-aws-com'] })), old);
    const gce = gceOf('disk');
    assert.equal(keepPvFrom(gce, gceOf('disk')), gce);
  });

  it('takes the update when a kept field changed, with the stored parts that did not', () => {
    const old = pvOf();
    const released = keepPvFrom(old, pvOf({ phase: 'Released' }));
    assert.notEqual(released, old);
    assert.equal(released.phase, 'Released');
    assert.equal(released.claimRef, old.claimRef, 'the same claimRef object');
    assert.equal(released.csi, old.csi, 'the same csi object');
    const rebound = keepPvFrom(old, pvOf({ uid: 'claim-2' }));
    assert.deepEqual(rebound.claimRef, { namespace: 'ns', name: 'data-0', uid: 'claim-2' });
    assert.equal(rebound.csi, old.csi);
    assert.deepEqual(keepPvFrom(old, pvOf({ handle: 'vol-9' })).csi, { driver: 'ebs.csi.aws.com', volumeHandle: 'vol-9', readOnly: false });
    assert.deepEqual(keepPvFrom(old, pvOf({ modes: ['ReadWriteMany'] })).accessModes, ['ReadWriteMany']);
    assert.deepEqual(keepPvFrom(gceOf('disk'), gceOf('other')).intree, { type: 'gcePersistentDisk', fields: { pdName: 'other', partition: 1 } });
  });
});

describe('VolumeAttachment updates as the store keeps them', () => {
  const vaOf = (rv: string, status: Record<string, unknown>, finalizers: string[] = []) => ok(projectVolumeAttachment({
    metadata: { name: 'csi-0123', resourceVersion: rv, finalizers },
    spec: { attacher: 'd', nodeName: 'n1', source: { persistentVolumeName: 'pv-1' } },
    status,
  }));

  it('keeps the stored record when only what it does not keep changed (the attacher\'s finalizer, the resourceVersion)', () => {
    const old = vaOf('1', {});
    assert.equal(keepVolumeAttachmentFrom(old, vaOf('2', {}, ['external-attacher/d'])), old);
  });

  it('takes the update when its status changed', () => {
    const old = vaOf('1', { attached: false, attachError: { message: 'boom' } });
    const fresh = vaOf('2', { attached: true }, ['external-attacher/d']);
    const got = keepVolumeAttachmentFrom(old, fresh);
    assert.equal(got, fresh);
    assert.deepEqual(got, { name: 'csi-0123', attacher: 'd', nodeName: 'n1', pvName: 'pv-1', inline: false, attached: true, deleting: false });
    assert.equal(keepVolumeAttachmentFrom(old, vaOf('3', { attached: false, attachError: { message: 'boom again' } })).attachError, 'boom again');
    assert.equal(keepVolumeAttachmentFrom(fresh, vaOf('4', { attached: true, detachError: { message: 'stuck' } })).detachError, 'stuck');
  });
});

describe('Pod updates as the store keeps them', () => {
  const keepPodFrom = (old: PodRecord, fresh: PodRecord) => POD_KIND.keepFrom!(old, fresh);
  const raw = (o: { rv?: string; annotations?: Record<string, string>; phase?: string; ready?: boolean; claim?: string } = {}) => ({
    metadata: { name: 'p', namespace: 'ns', uid: 'u', resourceVersion: o.rv ?? '1', annotations: o.annotations },
    spec: { nodeName: 'n1', volumes: [{ name: 'data', persistentVolumeClaim: { claimName: o.claim ?? 'c' } }] },
    status: { phase: o.phase ?? 'Running', conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }], containerStatuses: [{ name: 'c', state: { running: {} } }] },
  });
  const podOf = (o?: Parameters<typeof raw>[0]) => ok(POD_KIND.project(raw(o)));

  it('keeps the stored record when only what it does not read changed (annotations, conditions, the resourceVersion)', () => {
    const old = podOf();
    assert.equal(keepPodFrom(old, podOf({ rv: '2', annotations: { a: 'b' }, ready: false })), old);
  });

  it('takes the update when a field it reads changed, with the stored volume list when that did not', () => {
    const old = podOf();
    const phase = keepPodFrom(old, podOf({ phase: 'Succeeded' }));
    assert.notEqual(phase, old);
    assert.equal(phase.phase, 'Succeeded');
    assert.equal(phase.volumes, old.volumes, 'the same list object');
    const claim = keepPodFrom(old, podOf({ claim: 'other' }));
    assert.notEqual(claim.volumes, old.volumes);
    assert.equal(claim.volumes[0]!.claimName, 'other');
  });
});

describe('keepEqual', () => {
  it('returns the stored record when equal throughout, nested records and lists included', () => {
    const old = { a: 'x', n: 1, b: true, list: ['p', 'q'], rec: { k: 'v', deep: { z: [1, 2] } } };
    assert.equal(keepEqual(old, { a: 'x', n: 1, b: true, list: ['p', 'q'], rec: { k: 'v', deep: { z: [1, 2] } } }), old);
  });

  it('else returns the update, with the stored value of each top-level field that is equal', () => {
    const old: Record<string, unknown> = { a: 'x', list: ['p'], rec: { k: 'v' }, gone: 1 };
    const fresh: Record<string, unknown> = { a: 'y', list: ['p'], rec: { k: 'v' }, added: 2 };
    const got = keepEqual(old, fresh);
    assert.equal(got, fresh);
    assert.equal(got.list, old.list);
    assert.equal(got.rec, old.rec);
    assert.deepEqual(got, { a: 'y', list: ['p'], rec: { k: 'v' }, added: 2 });
  });

  it('tells apart what only looks alike: a key on one side only, a list and a record, order in a list', () => {
    const undef: { a: Record<string, unknown> } = { a: { k: undefined } };
    assert.notEqual(keepEqual(undef, { a: {} }), undef);
    const list = { v: ['0'] as unknown };
    const rec = { v: { 0: '0' } as unknown };
    assert.equal(keepEqual(list, rec).v, rec.v);
    const ba = { v: ['b', 'a'] };
    assert.equal(keepEqual({ v: ['a', 'b'] }, ba).v, ba.v);
    const small = { v: { x: 1 } };
    const big = { v: { x: 1, y: 2 } };
    assert.equal(keepEqual(small, big).v, big.v);
    assert.equal(keepEqual(big, small).v, small.v);
  });
});

describe('keepStrings', () => {
  it('returns the stored list when equal, else the new contents in the new order', () => {
    const old = ['a', 'b', 'c'];
    assert.equal(keepStrings(old, ['a', 'b', 'c']), old);
    assert.deepEqual(keepStrings(old, ['c', 'x', 'a']), ['c', 'x', 'a']);
    assert.deepEqual(keepStrings(old, []), []);
    assert.deepEqual(keepStrings([], ['a']), ['a']);
    assert.deepEqual(keepStrings(old, ['a', 'c']), ['a', 'c']);
  });
});
