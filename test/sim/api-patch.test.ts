/** PATCH and the status subresource of the simulated API server. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { strategicMerge } from '../../src/sim/server/strategic-merge.js';
import { mergePatch } from '../../src/sim/server/patch.js';
import { raw, withSim } from './sim-helpers.js';

const SMP = 'application/strategic-merge-patch+json';
const MERGE = 'application/merge-patch+json';
const JSONP = 'application/json-patch+json';

test('merge patch follows RFC 7386: maps merge, null deletes, lists replace', () => {
  assert.deepEqual(mergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [3] }), { a: { c: 2, d: 3 }, l: [3] });
  assert.deepEqual(mergePatch({ a: 1 }, { a: { x: null } }), { a: {} });
});

test('strategic merge: conditions by type, finalizers as a set, taints and volumesAttached replaced', () => {
  const node = {
    metadata: { name: 'n', finalizers: ['a', 'b'] },
    spec: { taints: [{ key: 'k1', effect: 'NoSchedule' }] },
    status: {
      conditions: [{ type: 'Ready', status: 'True' }, { type: 'DiskPressure', status: 'False' }],
      volumesAttached: [{ name: 'v1', devicePath: '' }],
      volumesInUse: ['v1'],
    },
  };
  const out = strategicMerge(node, {
    metadata: { finalizers: ['c', 'a'], '$deleteFromPrimitiveList/finalizers': ['b'] },
    spec: { taints: [{ key: 'k2', effect: 'NoExecute' }] },
    status: {
      conditions: [{ type: 'Ready', status: 'False', reason: 'Down' }, { type: 'MemoryPressure', status: 'False' }],
      volumesAttached: [{ name: 'v2', devicePath: '' }],
      volumesInUse: [],
      '$setElementOrder/conditions': [{ type: 'Ready' }],
    },
  }) as typeof node;
  assert.deepEqual(out.metadata.finalizers, ['a', 'c']);
  assert.deepEqual(out.spec.taints, [{ key: 'k2', effect: 'NoExecute' }]);
  assert.deepEqual(out.status.conditions, [{ type: 'Ready', status: 'False', reason: 'Down' }, { type: 'DiskPressure', status: 'False' }, { type: 'MemoryPressure', status: 'False' }]);
  assert.deepEqual(out.status.volumesAttached, [{ name: 'v2', devicePath: '' }]);
  assert.deepEqual(out.status.volumesInUse, []);
  assert.deepEqual(node.status.volumesInUse, ['v1'], 'original untouched');
  const del = strategicMerge(node, { status: { conditions: [{ type: 'DiskPressure', $patch: 'delete' }] } }) as typeof node;
  assert.deepEqual(del.status.conditions, [{ type: 'Ready', status: 'True' }]);
  const rep = strategicMerge(node, { status: { $patch: 'replace', volumesInUse: ['x'] } }) as typeof node;
  assert.deepEqual(rep.status, { volumesInUse: ['x'] });
});

test('PATCH with merge, json (including test) and strategic patches', () =>
  withSim({}, async (sim) => {
    sim.store.create('nodes', { metadata: { name: 'n1', labels: { a: '1', b: '2' }, finalizers: ['f1'] }, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } });
    const path = '/api/v1/nodes/n1';
    let r = await raw(sim, 'PATCH', path, { contentType: MERGE, body: JSON.stringify({ metadata: { labels: { a: null, c: '3' } } }) });
    assert.equal(r.status, 200);
    assert.deepEqual((r.json().metadata as { labels: object }).labels, { b: '2', c: '3' });
    r = await raw(sim, 'PATCH', path, { contentType: JSONP, body: JSON.stringify([{ op: 'test', path: '/metadata/labels/b', value: '2' }, { op: 'replace', path: '/metadata/labels/b', value: '20' }]) });
    assert.equal(r.status, 200);
    assert.equal((r.json().metadata as { labels: Record<string, string> }).labels.b, '20');
    const rvBefore = sim.store.resourceVersion();
    r = await raw(sim, 'PATCH', path, { contentType: JSONP, body: JSON.stringify([{ op: 'test', path: '/metadata/labels/b', value: 'nope' }, { op: 'remove', path: '/metadata/labels' }]) });
    assert.equal(r.status, 422);
    assert.equal(r.json().reason, 'Invalid');
    assert.equal(sim.store.resourceVersion(), rvBefore, 'a failed test commits nothing');
    r = await raw(sim, 'PATCH', path, { contentType: SMP, body: JSON.stringify({ metadata: { finalizers: ['f2'] }, spec: { taints: [{ key: 'k2', effect: 'NoExecute' }] } }) });
    assert.equal(r.status, 200);
    assert.deepEqual((r.json().metadata as { finalizers: string[] }).finalizers, ['f1', 'f2']);
    assert.deepEqual((r.json().spec as { taints: unknown[] }).taints, [{ key: 'k2', effect: 'NoExecute' }]);
    r = await raw(sim, 'PATCH', path, { contentType: JSONP, body: '[{"op":' });
    assert.equal(r.status, 400);
    r = await raw(sim, 'PATCH', path, { contentType: 'application/apply-patch+yaml', body: '{}' });
    assert.equal(r.status, 415);
    r = await raw(sim, 'PATCH', path, { contentType: MERGE, body: JSON.stringify({ metadata: { resourceVersion: '1', labels: { z: '1' } } }) });
    assert.equal(r.status, 409, 'a resourceVersion in the patch is a precondition');
    r = await raw(sim, 'PATCH', '/api/v1/nodes/missing', { contentType: MERGE, body: '{}' });
    assert.equal(r.status, 404);
  }));

test('the status subresource: main writes ignore status, status writes ignore the rest', () =>
  withSim({}, async (sim, kc) => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNode({ body: { metadata: { name: 'n1' }, status: { volumesAttached: [] } } });
    await core.patchNode({ name: 'n1', body: { metadata: { labels: { x: '1' } }, status: { volumesInUse: ['ignored'] } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    let n = await core.readNode({ name: 'n1' });
    assert.deepEqual(n.metadata?.labels, { x: '1' });
    assert.equal(n.status?.volumesInUse, undefined);
    // client-node's default patch type (JSON patch) on /status.
    await core.patchNodeStatus({ name: 'n1', body: [{ op: 'add', path: '/status/volumesAttached', value: [{ name: 'v1', devicePath: '' }] }, { op: 'add', path: '/metadata/labels/y', value: '2' }] });
    n = await core.readNodeStatus({ name: 'n1' });
    assert.deepEqual(n.status?.volumesAttached?.map((v) => ({ name: v.name, devicePath: v.devicePath })), [{ name: 'v1', devicePath: '' }]);
    assert.deepEqual(n.metadata?.labels, { x: '1' });
    // Strategic merge on /status, as the attach/detach controller sends it.
    await core.patchNodeStatus({ name: 'n1', body: { status: { volumesAttached: [{ name: 'v2', devicePath: '' }] } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch));
    n = await core.readNode({ name: 'n1' });
    assert.deepEqual(n.status?.volumesAttached?.map((v) => v.name), ['v2']);
    // PUT on /status.
    const put = await core.replaceNodeStatus({ name: 'n1', body: { ...n, spec: { unschedulable: true }, status: { ...n.status, volumesInUse: ['v2'] } } });
    assert.deepEqual(put.status?.volumesInUse, ['v2']);
    assert.equal(put.spec?.unschedulable, undefined);
    // Resources without a status subresource have no /status path.
    sim.store.create('leases', { metadata: { name: 'l', namespace: 'default' }, spec: {} });
    assert.equal((await raw(sim, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/l/status')).status, 404);
    assert.equal((await raw(sim, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/l')).status, 200);
  }));

test('pods bound to a node are deleted gracefully through the API', () =>
  withSim({}, async (sim, kc) => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'p' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] } } });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'p', propagationPolicy: 'Background' });
    const p = await core.readNamespacedPod({ namespace: 'default', name: 'p' });
    assert.equal(p.metadata?.deletionGracePeriodSeconds, 30);
    assert.ok(p.metadata?.deletionTimestamp);
    await core.deleteNamespacedPod({ namespace: 'default', name: 'p', gracePeriodSeconds: 0 });
    assert.equal(sim.store.get('pods', 'default', 'p'), undefined);
    const r = await raw(sim, 'DELETE', '/api/v1/namespaces/default/pods/p');
    assert.equal(r.status, 404);
    const bad = await raw(sim, 'DELETE', '/api/v1/nodes/x', { body: JSON.stringify({ propagationPolicy: 'Sideways' }) });
    assert.equal(bad.status, 422);
  }));
