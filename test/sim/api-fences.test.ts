/**
 * What fenced writers rely on, against the in-process simulator: JSON patch `test` as
 * kube-apiserver applies it, DeleteOptions preconditions, resourceVersion preconditions on every
 * kind of write, and updates that must carry a resourceVersion.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { raw, withSim } from './sim-helpers.js';

const PVS = '/api/v1/persistentvolumes';
const NODES = '/api/v1/nodes';
const VAS = '/apis/storage.k8s.io/v1/volumeattachments';
const JSONP = 'application/json-patch+json';
const MERGE = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const OWNER = '/metadata/annotations/fleet-attach.io~1owner';

const pv = (name: string, annotations: Record<string, string>, finalizers?: string[]) => JSON.stringify({
  apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name, annotations, ...(finalizers ? { finalizers } : {}) },
  spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], csi: { driver: 'd', volumeHandle: name } },
});

test('JSON patch test fences PV annotations: compare-and-swap, a missing member tested null, keys with "/"', () =>
  withSim({}, async (sim) => {
    assert.equal((await raw(sim, 'POST', PVS, { body: pv('v', { 'fleet-attach.io/owner': 'a' }) })).status, 201);
    const jp = (ops: unknown[]) => raw(sim, 'PATCH', `${PVS}/v`, { contentType: JSONP, body: JSON.stringify(ops) });
    const swap = await jp([{ op: 'test', path: OWNER, value: 'a' }, { op: 'replace', path: OWNER, value: 'b' }]);
    assert.equal(swap.status, 200);
    const lost = await jp([{ op: 'test', path: OWNER, value: 'a' }, { op: 'replace', path: OWNER, value: 'c' }]);
    assert.equal(lost.status, 422);
    assert.equal(lost.json().reason, 'Invalid');
    const owner = ((await raw(sim, 'GET', `${PVS}/v`)).json().metadata as { annotations: Record<string, string> }).annotations['fleet-attach.io/owner'];
    assert.equal(owner, 'b', 'a failed test changes nothing');
    // kube-apiserver's json-patch: a missing member of an existing object tests equal to null.
    assert.equal((await jp([{ op: 'test', path: '/metadata/annotations/absent', value: null }])).status, 200);
    assert.equal((await jp([{ op: 'test', path: '/metadata/annotations/absent', value: 'x' }])).status, 422);
    assert.equal((await jp([{ op: 'test', path: '/metadata/labels/absent', value: null }])).status, 422, 'the object itself must exist');
    const added = await jp([{ op: 'add', path: '/metadata/annotations/example.com~1k', value: 'v' }]);
    assert.equal((added.json().metadata as { annotations: Record<string, string> }).annotations['example.com/k'], 'v');
    const removed = await jp([{ op: 'remove', path: '/metadata/annotations/example.com~1k' }]);
    assert.equal((removed.json().metadata as { annotations: Record<string, string> }).annotations['example.com/k'], undefined);
    assert.equal((await jp([{ op: 'remove', path: '/metadata/annotations/example.com~1k' }])).status, 422);
    const replaced = await jp([{ op: 'replace', path: '/metadata/annotations/fresh', value: 'v' }]);
    assert.equal(replaced.status, 200, 'replace of a missing member adds it');
  }));

test('DeleteOptions preconditions: wrong resourceVersion is 409, the right one deletes, finalizers hold the object', () =>
  withSim({}, async (sim) => {
    const va = JSON.stringify({ apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va' }, spec: { attacher: 'd', nodeName: 'n', source: { persistentVolumeName: 'p' } } });
    const created = (await raw(sim, 'POST', VAS, { body: va })).json().metadata as { resourceVersion: string; uid: string };
    const wrong = await raw(sim, 'DELETE', `${VAS}/va`, { body: JSON.stringify({ preconditions: { resourceVersion: '1' } }) });
    assert.equal(wrong.status, 409);
    assert.deepEqual(wrong.json().details, { name: 'va', group: 'storage.k8s.io', kind: 'VolumeAttachment' });
    const bothWrong = await raw(sim, 'DELETE', `${VAS}/va`, { body: JSON.stringify({ preconditions: { uid: 'x', resourceVersion: '1' } }) });
    assert.match(String(bothWrong.json().message), /UID in the precondition/, 'the uid is checked first');
    assert.equal((await raw(sim, 'DELETE', `${VAS}/va`, { body: JSON.stringify({ preconditions: { resourceVersion: created.resourceVersion, uid: created.uid } }) })).status, 200);
    assert.equal((await raw(sim, 'GET', `${VAS}/va`)).status, 404);

    const p = (await raw(sim, 'POST', PVS, { body: pv('held', {}, ['example.com/hold']) })).json().metadata as { resourceVersion: string };
    const marked = await raw(sim, 'DELETE', `${PVS}/held`, { body: JSON.stringify({ preconditions: { resourceVersion: p.resourceVersion } }) });
    assert.equal(marked.status, 200);
    const meta = marked.json().metadata as { deletionTimestamp?: string; resourceVersion: string };
    assert.ok(meta.deletionTimestamp);
    assert.notEqual(meta.resourceVersion, p.resourceVersion);
    assert.equal((await raw(sim, 'DELETE', `${PVS}/held`, { body: JSON.stringify({ preconditions: { resourceVersion: p.resourceVersion } }) })).status, 409, 'marking changed the resourceVersion');
    assert.equal((await raw(sim, 'DELETE', `${PVS}/held`, { body: JSON.stringify({ preconditions: { resourceVersion: meta.resourceVersion } }) })).status, 200);
    assert.equal((await raw(sim, 'GET', `${PVS}/held`)).status, 200, 'still held by its finalizer');
  }));

test('a stale metadata.resourceVersion is 409 on merge, strategic and JSON patches, status writes and updates', () =>
  withSim({}, async (sim) => {
    const n = (await raw(sim, 'POST', NODES, { body: JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } }) })).json();
    const old = (n.metadata as { resourceVersion: string }).resourceVersion;
    await raw(sim, 'PATCH', `${NODES}/n`, { contentType: MERGE, body: JSON.stringify({ metadata: { labels: { bump: '1' } } }) });
    const stale = [
      await raw(sim, 'PATCH', `${NODES}/n`, { contentType: MERGE, body: JSON.stringify({ metadata: { resourceVersion: old, labels: { m: '1' } } }) }),
      await raw(sim, 'PATCH', `${NODES}/n`, { contentType: SMP, body: JSON.stringify({ metadata: { resourceVersion: old } }) }),
      await raw(sim, 'PATCH', `${NODES}/n`, { contentType: JSONP, body: JSON.stringify([{ op: 'replace', path: '/metadata/resourceVersion', value: old }]) }),
      await raw(sim, 'PATCH', `${NODES}/n/status`, { contentType: MERGE, body: JSON.stringify({ metadata: { resourceVersion: old }, status: { volumesInUse: ['x'] } }) }),
      await raw(sim, 'PUT', `${NODES}/n/status`, { body: JSON.stringify({ ...n, status: { volumesInUse: ['x'] } }) }),
      await raw(sim, 'PUT', `${NODES}/n`, { body: JSON.stringify(n) }),
    ];
    assert.deepEqual(stale.map((a) => [a.status, a.json().reason]), stale.map(() => [409, 'Conflict']));
    const labels = ((await raw(sim, 'GET', `${NODES}/n`)).json().metadata as { labels: Record<string, string> }).labels;
    assert.deepEqual(labels, { bump: '1' }, 'nothing stale was written');
  }));

test('an update without resourceVersion is 422 where kube-apiserver allows no unconditional update', () =>
  withSim({}, async (sim) => {
    const va = { apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', metadata: { name: 'va' }, spec: { attacher: 'd', nodeName: 'n', source: { persistentVolumeName: 'p' } } };
    assert.equal((await raw(sim, 'POST', VAS, { body: JSON.stringify(va) })).status, 201);
    const put = await raw(sim, 'PUT', `${VAS}/va`, { body: JSON.stringify({ ...va, metadata: { name: 'va', labels: { a: 'b' } } }) });
    assert.equal(put.status, 422);
    assert.equal((put.json().details as { kind: string }).kind, 'volumeattachments');
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' } };
    assert.equal((await raw(sim, 'POST', NODES, { body: JSON.stringify(node) })).status, 201);
    assert.equal((await raw(sim, 'PUT', `${NODES}/n`, { body: JSON.stringify({ ...node, metadata: { name: 'n', labels: { a: 'b' } } }) })).status, 200, 'a Node may be updated unconditionally');
  }));
