import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isFleetError } from '../../src/errors/index.js';
import { createKubeApiClient, type VolumeAttachmentBody } from '../../src/kube/api-client.js';
import { isConflict, kubeErrorDetails } from '../../src/kube/kube-errors.js';
import type { RequestReport } from '../../src/kube/request-hook.js';
import { useFakeKubeServer } from './fake-kube-server.js';
import { mockClock, settle, turns } from '../support/mock-clock.js';

const VA_PATH = '/apis/storage.k8s.io/v1/volumeattachments';

function vaBody(name: string, nodeName = 'n1', pv = 'pv1'): VolumeAttachmentBody {
  return { metadata: { name }, spec: { attacher: 'ebs.csi.aws.com', nodeName, source: { persistentVolumeName: pv } } };
}

function vaObject(name: string, nodeName: string, pv: string) {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name, uid: `u-${name}`, resourceVersion: '7' },
    spec: { attacher: 'ebs.csi.aws.com', nodeName, source: { persistentVolumeName: pv } },
    status: { attached: true },
  };
}

describe('KubeApiClient (generated client against a fake API server)', () => {
  const fx = useFakeKubeServer();

  it('patches node status as a merge patch of status.volumesAttached on the status subresource', async () => {
    fx.srv.route = (req, _b, url) => (url.pathname === '/api/v1/nodes/n1/status' ? { status: 200, body: { metadata: { name: 'n1' } } } : { status: 404, body: { kind: 'Status', code: 404, reason: 'NotFound' } });
    const api = createKubeApiClient({ kc: fx.kc });
    const n = fx.srv.requests.length;
    assert.equal(await api.patchNodeStatus('n1', [{ name: 'kubernetes.io/csi/d^h1', devicePath: '' }]), 'patched');
    const req = fx.srv.requests[n];
    assert.equal(req?.method, 'PATCH');
    assert.equal(req?.url, '/api/v1/nodes/n1/status');
    assert.equal(req?.headers['content-type'], 'application/merge-patch+json');
    assert.equal(req?.headers.authorization, 'Bearer fake-token');
    assert.deepEqual(JSON.parse(req?.body ?? ''), { status: { volumesAttached: [{ name: 'kubernetes.io/csi/d^h1', devicePath: '' }] } });
    assert.equal(await api.patchNodeStatus('gone', []), 'not-found');
  });

  it('treats 409 AlreadyExists on create as success when the existing spec matches, and rejects otherwise', async () => {
    fx.srv.route = (req, _b, url) => {
      if (req.method === 'POST') return { status: 409, body: { kind: 'Status', code: 409, reason: 'AlreadyExists', message: 'exists' } };
      if (url.pathname === `${VA_PATH}/va-same`) return { status: 200, body: vaObject('va-same', 'n1', 'pv1') };
      if (url.pathname === `${VA_PATH}/va-other`) return { status: 200, body: vaObject('va-other', 'n2', 'pv1') };
      return undefined;
    };
    const api = createKubeApiClient({ kc: fx.kc });
    const n = fx.srv.requests.length;
    assert.equal(await api.createVolumeAttachment(vaBody('va-same')), 'already-exists');
    assert.deepEqual(fx.srv.requests.slice(n).map((r) => r.url), [VA_PATH, `${VA_PATH}/va-same`]);
    await assert.rejects(api.createVolumeAttachment(vaBody('va-other')), (err: unknown) => isConflict(err) && kubeErrorDetails(err)?.reason === 'AlreadyExists');
  });

  it('creates a VolumeAttachment with the L2 body and does not read the echoed object', async () => {
    // The answer's body is not a VolumeAttachment: a create that parsed and projected it would fail.
    fx.srv.route = (req) => (req.method === 'POST' ? { status: 201, body: { unexpected: true } } : undefined);
    const api = createKubeApiClient({ kc: fx.kc });
    const n = fx.srv.requests.length;
    assert.equal(await api.createVolumeAttachment(vaBody('csi-abc')), 'created');
    assert.equal(fx.srv.requests[n]?.url, VA_PATH);
    assert.deepEqual(JSON.parse(fx.srv.requests[n]?.body ?? ''), {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'VolumeAttachment',
      metadata: { name: 'csi-abc' },
      spec: { attacher: 'ebs.csi.aws.com', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } },
    });
  });

  it('maps 404 to not-found on delete and undefined on get', async () => {
    fx.srv.route = () => ({ status: 404, body: { kind: 'Status', code: 404, reason: 'NotFound' } });
    const api = createKubeApiClient({ kc: fx.kc });
    assert.equal(await api.deleteVolumeAttachment('nope'), 'not-found');
    assert.equal(await api.getVolumeAttachment('nope'), undefined);
    assert.equal(await api.getNode('nope'), undefined);
  });

  it('honours 429 Retry-After and reports every attempt', async (t) => {
    fx.srv.route = () => ({ status: 200, body: { metadata: { name: 'n1', uid: 'u' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
    fx.srv.failNext((m, u) => u.pathname === '/api/v1/nodes/n1', 429, 2, { 'retry-after': '0.15' });
    const reports: RequestReport[] = [];
    const api = createKubeApiClient({ kc: fx.kc, onRequest: (r) => reports.push(r) });
    const clock = mockClock(t, { performanceNow: false }); // the client's waits run on it; the requests on real I/O
    const node = api.getNode('n1');
    // Each retry waits its Retry-After (150 ms) on the clock: not sent 1 ms before, sent at it
    // (each attempt takes a rate-limiter token as it goes out).
    for (const n of [1, 2]) {
      await settle(`answer ${n}`, () => reports.length === n);
      clock.tick(149);
      await turns();
      assert.equal(api.rateLimiterStats().acquired, n, `attempt ${n + 1} went out before the Retry-After wait`);
      clock.tick(1);
    }
    assert.equal((await node)?.ready, true);
    assert.deepEqual(reports.map((r) => [r.verb, r.resource, r.code]), [['get', 'nodes', 429], ['get', 'nodes', 429], ['get', 'nodes', 200]]);
    assert.equal(api.rateLimiterStats().acquired, 3);
  });

  it('retries a 5xx that carries Retry-After, as client-go does, and not one without', async () => {
    fx.srv.route = () => ({ status: 200, body: { metadata: { name: 'n3', uid: 'u' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
    fx.srv.failNext((m, u) => u.pathname === '/api/v1/nodes/n3', 503, 1, { 'retry-after': '0' });
    const reports: RequestReport[] = [];
    const api = createKubeApiClient({ kc: fx.kc, onRequest: (r) => reports.push(r) });
    assert.equal((await api.getNode('n3'))?.ready, true);
    assert.deepEqual(reports.map((r) => r.code), [503, 200]);
    fx.srv.failNext((m, u) => u.pathname === '/api/v1/nodes/n3', 503, 1);
    await assert.rejects(api.getNode('n3'), (err: unknown) => kubeErrorDetails(err)?.code === 503);
  });

  it('gives up after maxRetries 429s with a kube error carrying the code', async () => {
    fx.srv.failNext((m, u) => u.pathname === '/api/v1/nodes/n2', 429, 3, { 'retry-after': '0' });
    const api = createKubeApiClient({ kc: fx.kc, maxRetries: 2 });
    await assert.rejects(api.getNode('n2'), (err: unknown) => isFleetError(err, 'FA_ERR_KUBE_API') && kubeErrorDetails(err)?.code === 429);
  });

  it('spaces writes with the shared token bucket, in call order, and reports the waiting', async () => {
    const order: string[] = [];
    fx.srv.route = (req, _b, url) => {
      order.push(url.pathname.split('/').pop() ?? '');
      return { status: 200, body: vaObject(url.pathname.split('/').pop() ?? '', 'n1', 'pv1') };
    };
    const waits: number[] = [];
    const api = createKubeApiClient({ kc: fx.kc, qps: 40, burst: 2, onThrottle: (ms) => waits.push(ms) });
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    await Promise.all(names.map((n) => api.deleteVolumeAttachment(n)));
    assert.deepEqual(order, names);
    const s = api.rateLimiterStats();
    assert.equal(s.acquired, 6);
    assert.equal(s.throttled, 4);
    assert.equal(waits.length, 4);
    for (let i = 1; i < waits.length; i++) assert.ok((waits[i] as number) > (waits[i - 1] as number), `waits grow: ${waits}`);
  });

  it('round-trips a Lease with microsecond times and a resourceVersion-guarded update', async () => {
    let stored: Record<string, unknown> | undefined;
    fx.srv.route = (req, body, url) => {
      if (!url.pathname.startsWith('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases')) return undefined;
      if (req.method === 'GET') return stored ? { status: 200, body: stored } : { status: 404, body: { kind: 'Status', code: 404, reason: 'NotFound' } };
      const obj = JSON.parse(body);
      if (req.method === 'PUT' && obj.metadata.resourceVersion !== (stored?.metadata as { resourceVersion: string }).resourceVersion) {
        return { status: 409, body: { kind: 'Status', code: 409, reason: 'Conflict' } };
      }
      stored = { ...obj, metadata: { ...obj.metadata, namespace: 'kube-system', resourceVersion: String(Math.random()).slice(2, 8) } };
      return { status: req.method === 'POST' ? 201 : 200, body: stored };
    };
    const api = createKubeApiClient({ kc: fx.kc });
    assert.equal(await api.getLease('kube-system', 'fa'), undefined);
    const now = new Date().toISOString();
    const created = await api.createLease({ namespace: 'kube-system', name: 'fa', holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: now, renewTime: now, leaseTransitions: 0 });
    const sent = JSON.parse(fx.srv.requests.at(-1)?.body ?? '{}');
    assert.match(sent.spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const got = await api.getLease('kube-system', 'fa');
    assert.equal(got?.holderIdentity, 'me');
    assert.equal(got?.resourceVersion, created.resourceVersion);
    await api.updateLease({ ...created, holderIdentity: 'me' });
    await assert.rejects(api.updateLease({ ...created, holderIdentity: 'other' }), isConflict);
    const { resourceVersion: _rv, ...unguarded } = created;
    await assert.rejects(api.updateLease(unguarded), /no resourceVersion/, 'an update without resourceVersion is never sent');
  });

  it('renews a Lease keeping what it holds beyond the election record (labels, annotations, owner, strategy)', async () => {
    const now = new Date().toISOString();
    let stored: Record<string, unknown> = {
      apiVersion: 'coordination.k8s.io/v1', kind: 'Lease',
      metadata: {
        name: 'fa', namespace: 'kube-system', resourceVersion: '7', labels: { team: 'storage' }, annotations: { note: 'kept' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'u-1' }],
      },
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: now, renewTime: now, leaseTransitions: 2, strategy: 'OldestEmulationVersion', preferredHolder: 'me' },
    };
    fx.srv.route = (req, body, url) => {
      if (!url.pathname.startsWith('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases')) return undefined;
      if (req.method === 'GET') return { status: 200, body: stored };
      const obj = JSON.parse(body);
      stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: '8' } };
      return { status: 200, body: stored };
    };
    const api = createKubeApiClient({ kc: fx.kc });
    const got = await api.getLease('kube-system', 'fa');
    assert.ok(got);
    await api.updateLease({ ...got, renewTime: new Date().toISOString() });
    const sent = JSON.parse(fx.srv.requests.at(-1)?.body ?? '{}');
    assert.deepEqual(sent.metadata.labels, { team: 'storage' });
    assert.deepEqual(sent.metadata.annotations, { note: 'kept' });
    assert.equal(sent.metadata.ownerReferences?.[0]?.name, 'owner');
    assert.equal(sent.metadata.resourceVersion, '7');
    assert.equal(sent.spec.strategy, 'OldestEmulationVersion');
    assert.equal(sent.spec.preferredHolder, 'me');
    assert.equal(sent.spec.leaseTransitions, 2);
  });

  it('sends a VolumeAttachment delete ahead of queued creates and reads: it follows its live Node check (F9) at once', async () => {
    fx.srv.route = (req, _b, url) => {
      if (req.method === 'DELETE') return { status: 200, body: { kind: 'Status', status: 'Success' } };
      if (req.method === 'POST') return { status: 201, body: vaObject('va-new', 'n1', 'pv1') };
      if (url.pathname.startsWith('/api/v1/nodes/')) return { status: 200, body: { metadata: { name: 'n1', uid: 'u' } } };
      return { status: 200, body: vaObject('va-1', 'n1', 'pv1') };
    };
    for (const rawWrites of [true, false]) {
      const api = createKubeApiClient({ kc: fx.kc, qps: 0, maxInFlight: 1, rawWrites });
      const n = fx.srv.requests.length;
      // The first call takes the one slot; the others wait for it, each in its lane.
      await Promise.all([
        api.getVolumeAttachment('va-1'),
        api.createVolumeAttachment(vaBody('va-new')),
        api.getNode('n1'),
        api.deleteVolumeAttachment('va-2'),
      ]);
      assert.deepEqual(fx.srv.requests.slice(n).map((r) => `${r.method} ${r.url.replace(/\?.*$/, '')}`), [
        `GET ${VA_PATH}/va-1`,
        `DELETE ${VA_PATH}/va-2`,
        `POST ${VA_PATH}`,
        'GET /api/v1/nodes/n1',
      ], rawWrites ? 'raw calls' : 'generated calls');
    }
  });

  it('writes Events to the namespace: a create, a merge patch of the repeat, 404 as not-found (raw and generated alike)', async () => {
    fx.srv.route = (req, _b, url) => {
      if (url.pathname.endsWith('/gone')) return { status: 404, body: { kind: 'Status', code: 404, reason: 'NotFound' } };
      return { status: req.method === 'POST' ? 201 : 200, body: { kind: 'Event', metadata: { name: 'e1', namespace: 'ns-1' } } };
    };
    // As the recorder builds it (CoreV1Event: apiVersion and kind included).
    const event = {
      apiVersion: 'v1', kind: 'Event',
      metadata: { name: 'pod-1.18ea5430fe77ee40', namespace: 'ns-1' },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: 'ns-1', name: 'pod-1', uid: 'u1' },
      reason: 'SuccessfulAttachVolume', message: 'AttachVolume.Attach succeeded for volume "pvc-1"', type: 'Normal',
      source: { component: 'attachdetach-controller' },
      firstTimestamp: '2026-11-22T10:00:00Z', lastTimestamp: '2026-11-22T10:00:00Z', count: 1,
    };
    const patch = { count: 2, lastTimestamp: '2026-11-22T10:00:05Z', message: 'again' };
    for (const rawWrites of [true, false]) {
      const how = rawWrites ? 'raw calls' : 'generated calls';
      const api = createKubeApiClient({ kc: fx.kc, qps: 0, rawWrites });
      const n = fx.srv.requests.length;
      await api.createEvent('ns-1', event);
      assert.equal(await api.patchEvent('ns-1', 'pod-1.18ea5430fe77ee40', patch), 'patched');
      assert.equal(await api.patchEvent('ns-1', 'gone', patch), 'not-found');
      const [create, repeat] = fx.srv.requests.slice(n);
      assert.equal(`${create?.method} ${create?.url}`, 'POST /api/v1/namespaces/ns-1/events', how);
      assert.deepEqual(JSON.parse(create?.body ?? ''), event, how);
      assert.equal(`${repeat?.method} ${repeat?.url}`, 'PATCH /api/v1/namespaces/ns-1/events/pod-1.18ea5430fe77ee40', how);
      assert.equal(repeat?.headers['content-type'], 'application/merge-patch+json', how);
      assert.deepEqual(JSON.parse(repeat?.body ?? ''), patch, how);
    }
  });

  it('reuses keep-alive connections for sequential calls', async () => {
    fx.srv.route = () => ({ status: 200, body: { metadata: { name: 'n1', uid: 'u' } } });
    const api = createKubeApiClient({ kc: fx.kc, qps: 0 });
    const before = fx.srv.connections();
    for (let i = 0; i < 10; i++) await api.getNode('n1');
    // One, or two: undici's pool marks a connection free a tick after its response ends, so the
    // next call, sent at once, may take a second one; the two are then reused.
    const opened = fx.srv.connections() - before;
    assert.ok(opened >= 1 && opened <= 2, `${opened} connections for 10 calls`);
  });
});
