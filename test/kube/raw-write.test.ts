import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { isFleetError } from '../../src/errors/index.js';
import { createKubeApiClient, type VolumeAttachmentBody } from '../../src/kube/api-client.js';
import { loadKubeConfig, type FleetKubeConfig } from '../../src/kube/kube-config.js';
import { isAlreadyExists, isNotFound, kubeErrorDetails } from '../../src/kube/kube-errors.js';
import type { RequestReport } from '../../src/kube/request-hook.js';
import { startFakeKubeServer, useFakeKubeServer, type FakeKubeServer } from './fake-kube-server.js';
import { mockClock, settle, turns } from '../support/mock-clock.js';

const VA_PATH = '/apis/storage.k8s.io/v1/volumeattachments';
const NOT_FOUND = { status: 404, body: { kind: 'Status', code: 404, reason: 'NotFound', message: 'not there' } };

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

const nodeObject = (name: string) => ({
  metadata: { name, uid: `u-${name}`, annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
  status: { conditions: [{ type: 'Ready', status: 'True' }], volumesInUse: ['kubernetes.io/csi/d^h1'], volumesAttached: [{ name: 'kubernetes.io/csi/d^h1', devicePath: '/dev/x' }] },
});

/** Answers the four hot calls like an API server that has every object. */
const happyRoute: FakeKubeServer['route'] = (req, body, url) => {
  if (req.method === 'POST' && url.pathname === VA_PATH) return { status: 201, body: { ...JSON.parse(body), status: { attached: false } } };
  if (req.method === 'DELETE') return { status: 200, body: vaObject(url.pathname.split('/').pop() ?? '', 'n1', 'pv1') };
  if (url.pathname.startsWith('/api/v1/nodes/')) return { status: 200, body: nodeObject(url.pathname.split('/')[4] ?? '') };
  return undefined;
};

describe('KubeApiClient raw hot calls', () => {
  const fx = useFakeKubeServer();

  it('sends the same requests and resolves the same results as the generated client', async () => {
    fx.srv.route = happyRoute;
    const results: Record<string, unknown[]> = {};
    const sent: Record<string, Array<{ method: string; url: string; type: string | undefined; auth: string | undefined; body: unknown }>> = {};
    for (const rawWrites of [true, false]) {
      const api = createKubeApiClient({ kc: fx.kc, rawWrites, qps: 0 });
      const n = fx.srv.requests.length;
      results[String(rawWrites)] = [
        await api.createVolumeAttachment({ metadata: { name: 'va/1' }, spec: { attacher: 'd', nodeName: 'n 1', source: { inlineVolumeSpec: { csi: { driver: 'd', volumeHandle: 'h' } } } } }),
        await api.patchNodeStatus('n 1', [{ name: 'kubernetes.io/csi/d^h1', devicePath: '' }]),
        await api.patchNodeStatus('n1', null),
        await api.getNode('n 1'),
        await api.deleteVolumeAttachment('va/1'),
      ];
      sent[String(rawWrites)] = fx.srv.requests.slice(n).map((r) => ({
        method: r.method,
        url: r.url,
        // The generated client labels even a bodiless DELETE as JSON; only a body's type matters.
        type: r.body ? r.headers['content-type'] : undefined,
        auth: r.headers.authorization,
        body: r.body ? JSON.parse(r.body) : undefined,
      }));
    }
    assert.deepEqual(sent.true, sent.false);
    assert.deepEqual(results.true, results.false);
    assert.deepEqual(
      sent.true?.map((r) => [r.method, r.url, r.type]),
      [
        ['POST', VA_PATH, 'application/json'],
        ['PATCH', '/api/v1/nodes/n%201/status', 'application/merge-patch+json'],
        ['PATCH', '/api/v1/nodes/n1/status', 'application/merge-patch+json'],
        ['GET', '/api/v1/nodes/n%201', undefined],
        ['DELETE', `${VA_PATH}/va%2F1`, undefined],
      ],
    );
    assert.deepEqual(sent.true?.[2]?.body, { status: { volumesAttached: null } });
    assert.ok(sent.true?.every((r) => r.auth === 'Bearer fake-token'));
  });

  it('maps 404 to not-found, undefined, or a not-found kube error carrying the Status', async () => {
    fx.srv.route = () => NOT_FOUND;
    const api = createKubeApiClient({ kc: fx.kc });
    assert.equal(await api.deleteVolumeAttachment('nope'), 'not-found');
    assert.equal(await api.patchNodeStatus('nope', []), 'not-found');
    assert.equal(await api.getNode('nope'), undefined);
    await assert.rejects(api.createVolumeAttachment(vaBody('x')), (err: unknown) => {
      assert.ok(isNotFound(err));
      assert.deepEqual(kubeErrorDetails(err), { verb: 'create', resource: 'volumeattachments', name: 'x', code: 404, reason: 'NotFound', statusMessage: 'not there' });
      assert.match((err as Error).message, /^create volumeattachments\/x: not there$/);
      return true;
    });
  });

  it('treats 409 AlreadyExists on a raw create as success only when the existing spec matches', async () => {
    fx.srv.route = (req, _b, url) => {
      if (req.method === 'POST') return { status: 409, body: { kind: 'Status', code: 409, reason: 'AlreadyExists', message: 'exists' } };
      if (url.pathname === `${VA_PATH}/va-same`) return { status: 200, body: vaObject('va-same', 'n1', 'pv1') };
      if (url.pathname === `${VA_PATH}/va-other`) return { status: 200, body: vaObject('va-other', 'n2', 'pv1') };
      return undefined;
    };
    const api = createKubeApiClient({ kc: fx.kc });
    assert.equal(await api.createVolumeAttachment(vaBody('va-same')), 'already-exists');
    await assert.rejects(api.createVolumeAttachment(vaBody('va-other')), (err: unknown) => isAlreadyExists(err) && kubeErrorDetails(err)?.code === 409);
  });

  it('retries 429 after Retry-After, reporting every attempt, and gives up with the code and the wait', async (t) => {
    fx.srv.route = happyRoute;
    fx.srv.failNext((m, u) => m === 'PATCH' && u.pathname === '/api/v1/nodes/n1/status', 429, 2, { 'retry-after': '0.1' });
    const reports: RequestReport[] = [];
    const api = createKubeApiClient({ kc: fx.kc, onRequest: (r) => reports.push(r), maxRetries: 2 });
    const clock = mockClock(t, { performanceNow: false }); // the client's waits run on it; the requests on real I/O
    const patched = api.patchNodeStatus('n1', []);
    // Each retry waits its Retry-After (100 ms) on the clock: not sent 1 ms before, sent at it
    // (each attempt takes a rate-limiter token as it goes out).
    for (const n of [1, 2]) {
      await settle(`answer ${n}`, () => reports.length === n);
      clock.tick(99);
      await turns();
      assert.equal(api.rateLimiterStats().acquired, n, `attempt ${n + 1} went out before the Retry-After wait`);
      clock.tick(1);
    }
    assert.equal(await patched, 'patched');
    t.mock.timers.reset(); // real timers again: the zero Retry-After waits below
    assert.deepEqual(reports.map((r) => [r.verb, r.resource, r.code]), [['patch', 'nodes/status', 429], ['patch', 'nodes/status', 429], ['patch', 'nodes/status', 200]]);

    fx.srv.failNext((m) => m === 'DELETE', 429, 3, { 'retry-after': '0' });
    await assert.rejects(api.deleteVolumeAttachment('a'), (err: unknown) => isFleetError(err, 'FA_ERR_KUBE_API') && kubeErrorDetails(err)?.code === 429 && kubeErrorDetails(err)?.retryAfterMs === 0);
    assert.equal(api.rateLimiterStats().acquired, 6, 'each attempt took a token');
  });

  it('rejects a 500 with FA_ERR_KUBE_API code 500 at once, and a connection reset with code 0', async () => {
    fx.srv.route = () => ({ status: 500, body: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd down' } });
    const reports: RequestReport[] = [];
    const api = createKubeApiClient({ kc: fx.kc, onRequest: (r) => reports.push(r) });
    await assert.rejects(api.getNode('n1'), (err: unknown) => {
      assert.ok(isFleetError(err, 'FA_ERR_KUBE_API'));
      assert.equal(kubeErrorDetails(err)?.code, 500);
      assert.equal(kubeErrorDetails(err)?.reason, 'InternalError');
      assert.match(err.message, /etcd down/);
      return true;
    });
    fx.srv.route = (req) => {
      req.socket.destroy();
      return undefined;
    };
    await assert.rejects(api.patchNodeStatus('n1', []), (err: unknown) => isFleetError(err, 'FA_ERR_KUBE_API') && kubeErrorDetails(err)?.code === 0);
    await assert.rejects(api.createVolumeAttachment(vaBody('r')), (err: unknown) => isFleetError(err, 'FA_ERR_KUBE_API') && kubeErrorDetails(err)?.code === 0);
    assert.deepEqual(reports.map((r) => r.code), [500, 0, 0]);
  });

  it('sends client-node\'s headers over HTTP/1.1 but leaves connection management to the pool', async () => {
    fx.srv.route = happyRoute;
    const apply = fx.kc.applyToHTTPSOptions.bind(fx.kc);
    fx.kc.applyToHTTPSOptions = async (o) => {
      await apply(o);
      o.headers = { ...o.headers, 'Impersonate-User': 'alice', 'Impersonate-Group': ['ops', 'audit'], Connection: 'upgrade', 'Transfer-Encoding': 'chunked', Upgrade: 'h2c' };
    };
    const api = createKubeApiClient({ kc: fx.kc, qps: 0 });
    const n = fx.srv.requests.length;
    assert.equal((await api.getNode('n1'))?.name, 'n1');
    const sent = fx.srv.requests[n];
    assert.equal(sent?.headers['impersonate-user'], 'alice');
    // One field per group, as kube-apiserver reads Impersonate-Group, not one joined value.
    const groups = (sent?.rawHeaders ?? []).filter((_, i, raw) => i % 2 === 1 && raw[i - 1]?.toLowerCase() === 'impersonate-group');
    assert.deepEqual(groups, ['ops', 'audit']);
    assert.equal(sent?.headers.upgrade, undefined);
    assert.notEqual(sent?.headers['transfer-encoding'], 'chunked');
  });

  it('reuses one keep-alive connection across raw writes, reads and error responses', async () => {
    // A response far larger than the stream buffers: the socket is free only once it is read.
    const big = { ...nodeObject('big'), metadata: { name: 'big', annotations: { padding: 'x'.repeat(1 << 20) } } };
    fx.srv.route = (req, body, url) => {
      if (url.pathname.endsWith('/gone') || url.pathname.endsWith('/gone/status')) return NOT_FOUND;
      if (url.pathname === '/api/v1/nodes/big/status') return { status: 200, body: big };
      return happyRoute(req, body, url);
    };
    const api = createKubeApiClient({ kc: fx.kc, qps: 0 });
    await api.getNode('n1'); // opens the connection
    const before = fx.srv.connections();
    for (let i = 0; i < 5; i++) {
      await api.createVolumeAttachment(vaBody(`va-${i}`));
      await api.patchNodeStatus('n1', [{ name: `v${i}`, devicePath: '' }]);
      await api.patchNodeStatus('gone', []);
      await api.patchNodeStatus('big', []);
      await api.getNode('n1');
      await api.deleteVolumeAttachment(`va-${i}`);
      await api.deleteVolumeAttachment('gone');
    }
    // undici's pool marks a connection free a tick after its response ends, so a call sent at
    // once from the previous one's resolution may open one second connection; never more.
    assert.ok(fx.srv.connections() - before <= 1, `${fx.srv.connections() - before} connections opened for 35 calls`);
  });
});

describe('KubeApiClient raw hot calls against a server that never answers', () => {
  let server: http.Server;
  let kc: FleetKubeConfig;
  const pending = new Set<http.ServerResponse>();
  before(async () => {
    server = http.createServer((_req, res) => pending.add(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    kc = loadKubeConfig({
      yaml: [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: s, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]`,
        'users: [{name: u, user: {token: t}}]',
        'contexts: [{name: c, context: {cluster: s, user: u}}]',
        'current-context: c',
      ].join('\n'),
    });
  });
  after(async () => {
    kc.close();
    for (const res of pending) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('aborts each attempt after requestTimeoutMs and releases its in-flight slot', { timeout: 10_000 }, async (t) => {
    const reports: RequestReport[] = [];
    const api = createKubeApiClient({ kc, requestTimeoutMs: 150, maxInFlight: 1, onRequest: (r) => reports.push(r) });
    const clock = mockClock(t, { performanceNow: false }); // the attempts' timeouts run on it
    const results = Promise.allSettled([api.getNode('n1'), api.patchNodeStatus('n1', [])]);
    // The second call waits for the slot the first holds; each attempt's 150 ms starts at its
    // send (a timeout started at the call would end the second at once once the first's ended).
    for (const n of [1, 2]) {
      await settle(`attempt ${n} at the server`, () => pending.size === n);
      clock.tick(149);
      await turns();
      assert.equal(reports.length, n - 1, `attempt ${n} ended before its timeout`);
      clock.tick(1);
      await settle(`attempt ${n} aborted`, () => reports.length === n);
    }
    for (const r of await results) assert.ok(r.status === 'rejected' && isFleetError(r.reason, 'FA_ERR_KUBE_API') && kubeErrorDetails(r.reason)?.code === 0);
    assert.deepEqual(reports.map((r) => r.code), [0, 0]);
    assert.deepEqual(api.backlog(), { waiting: 0, inFlight: 0 });
  });
});
