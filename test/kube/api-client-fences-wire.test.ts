/**
 * The fenced calls on the wire, against a fake API server answering as kube-apiserver does: the
 * Node status compare-and-swap and the PV patch as JSON Patches (422 of a failed `test` and 409
 * are `conflict`, anything else rejects), the VolumeAttachment delete with its DeleteOptions
 * body (409 is `precondition-failed` only when preconditions were sent), the PV metadata read.
 * Raw and generated requests alike.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isFleetError } from '../../src/errors/index.js';
import { createKubeApiClient } from '../../src/kube/api-client.js';
import { isConflict } from '../../src/kube/kube-errors.js';
import { useFakeKubeServer } from './fake-kube-server.js';

const V = { name: 'kubernetes.io/csi/d^h1', devicePath: '' };
/** kube-apiserver's answer to a JSON Patch whose `test` fails (handlers/patch.go: a generic 422). */
const TEST_FAILED = {
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code: 422,
  reason: 'Invalid',
  message: 'the server rejected our request due to an error in our request: testing value /status/volumesAttached failed: test failed',
};
const status = (code: number, reason: string) => ({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: reason });

for (const rawWrites of [true, false]) {
  describe(`fenced calls on the wire (${rawWrites ? 'raw' : 'generated'} requests)`, () => {
    const fx = useFakeKubeServer();

    it('sends the status CAS as a JSON Patch of the status subresource; 422 and 409 are `conflict`', async () => {
      const answers = [{ status: 200, body: { metadata: { name: 'n1' } } }, { status: 422, body: TEST_FAILED }, { status: 409, body: status(409, 'Conflict') }, { status: 404, body: status(404, 'NotFound') }];
      fx.srv.route = () => answers.shift();
      const api = createKubeApiClient({ kc: fx.kc, rawWrites });
      const n = fx.srv.requests.length;
      assert.equal(await api.patchNodeStatus('n1', [V], { expected: [] }), 'patched');
      const req = fx.srv.requests[n];
      assert.equal(req?.method, 'PATCH');
      assert.equal(req?.url, '/api/v1/nodes/n1/status');
      assert.match(String(req?.headers['content-type']), /^application\/json-patch\+json/);
      assert.deepEqual(JSON.parse(req?.body ?? ''), [
        { op: 'test', path: '/status/volumesAttached', value: null },
        { op: 'add', path: '/status/volumesAttached', value: [V] },
      ]);
      assert.equal(await api.patchNodeStatus('n1', null, { expected: [V] }), 'conflict');
      assert.equal(await api.patchNodeStatus('n1', null, { expected: [V] }), 'conflict');
      assert.equal(await api.patchNodeStatus('n1', null, { expected: [V] }), 'not-found');
    });

    it('rejects a status CAS that failed otherwise', async () => {
      fx.srv.route = () => ({ status: 500, body: status(500, 'InternalError') });
      const api = createKubeApiClient({ kc: fx.kc, rawWrites });
      await assert.rejects(api.patchNodeStatus('n1', [V], { expected: [] }), (err: unknown) => isFleetError(err, 'FA_ERR_KUBE_API'));
    });

    it('sends delete preconditions as a DeleteOptions body; 409 is `precondition-failed` only with them', async () => {
      fx.srv.route = () => ({ status: 409, body: status(409, 'Conflict') });
      const api = createKubeApiClient({ kc: fx.kc, rawWrites });
      const n = fx.srv.requests.length;
      assert.equal(await api.deleteVolumeAttachment('va-1', { uid: 'u-1', resourceVersion: '42' }), 'precondition-failed');
      const req = fx.srv.requests[n];
      assert.equal(req?.method, 'DELETE');
      assert.equal(req?.url, '/apis/storage.k8s.io/v1/volumeattachments/va-1');
      assert.deepEqual(JSON.parse(req?.body ?? ''), { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'u-1', resourceVersion: '42' } });
      await assert.rejects(api.deleteVolumeAttachment('va-1'), isConflict);
    });

    it('reads a PV\'s metadata, undefined when it is gone, and refuses one without a resourceVersion', async () => {
      const pvs: Record<string, unknown> = {
        '/api/v1/persistentvolumes/pv-1': { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-1', uid: 'u', resourceVersion: '9', annotations: { a: 'b' } }, spec: {} },
        '/api/v1/persistentvolumes/pv-bad': { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-bad' }, spec: {} },
      };
      fx.srv.route = (_req, _b, url) => (pvs[url.pathname] ? { status: 200, body: pvs[url.pathname] } : { status: 404, body: status(404, 'NotFound') });
      const api = createKubeApiClient({ kc: fx.kc, rawWrites });
      assert.deepEqual(await api.getPersistentVolume('pv-1'), { name: 'pv-1', uid: 'u', resourceVersion: '9', annotations: { a: 'b' }, labels: undefined });
      assert.equal(await api.getPersistentVolume('pv-gone'), undefined);
      await assert.rejects(api.getPersistentVolume('pv-bad'), (err: unknown) => isFleetError(err, 'FA_ERR_KUBE_OBJECT_INVALID'));
    });

    it('sends a PV patch as a JSON Patch; a failed `test` is `conflict`', async () => {
      const answers = [{ status: 200, body: { metadata: { name: 'pv-1' } } }, { status: 422, body: TEST_FAILED }];
      fx.srv.route = () => answers.shift();
      const api = createKubeApiClient({ kc: fx.kc, rawWrites });
      const n = fx.srv.requests.length;
      const ops = [{ op: 'test', path: '/metadata/resourceVersion', value: '9' }, { op: 'add', path: '/metadata/annotations/fleet-attach.io~1attach-lock', value: 'node=n1,epoch=1' }] as const;
      assert.equal(await api.patchPersistentVolume('pv-1', ops), 'patched');
      const req = fx.srv.requests[n];
      assert.equal(req?.method, 'PATCH');
      assert.equal(req?.url, '/api/v1/persistentvolumes/pv-1');
      assert.match(String(req?.headers['content-type']), /^application\/json-patch\+json/);
      assert.deepEqual(JSON.parse(req?.body ?? ''), ops);
      assert.equal(await api.patchPersistentVolume('pv-1', ops), 'conflict');
    });
  });
}
