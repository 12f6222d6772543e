/**
 * The hot calls over HTTP/2 (the simulator offers h2 by ALPN, as kube-apiserver does): the same
 * results as over HTTP/1.1, on one connection, with errors, timeouts and a server without h2.
 */
import assert from 'node:assert/strict';
import type http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { createKubeApiClient, type KubeApiClient } from '../../src/kube/api-client.js';
import { loadKubeConfig, type FleetKubeConfig } from '../../src/kube/kube-config.js';
import { isAlreadyExists } from '../../src/kube/kube-errors.js';
import { ignoreLateError } from '../../src/kube/raw-request.js';
import { createFaultInjector } from '../../src/sim/faults/index.js';
import { generateTls } from '../../src/sim/server/index.js';
import { raw, withSim } from '../sim/sim-helpers.js';

const va = (name: string) => ({ metadata: { name }, spec: { attacher: 'd', nodeName: 'n1', source: { persistentVolumeName: `pv-${name}` } } });

async function hotCalls(api: KubeApiClient, tag: string): Promise<unknown[]> {
  const created = await api.createVolumeAttachment(va(`va-${tag}`));
  const again = await api.createVolumeAttachment(va(`va-${tag}`));
  return [
    created,
    (await api.getVolumeAttachment(`va-${tag}`))?.nodeName,
    again,
    await api.patchNodeStatus('n1', [{ name: `kubernetes.io/csi/d^${tag}`, devicePath: '' }]),
    (await api.getNode('n1'))?.volumesAttached,
    await api.patchNodeStatus('missing', null),
    await api.getNode('missing'),
    await api.deleteVolumeAttachment(`va-${tag}`),
    await api.deleteVolumeAttachment(`va-${tag}`),
  ];
}

/** The options client-node gives the raw calls, for reaching the connection under test. */
async function h2Session(kc: FleetKubeConfig) {
  const opts = {};
  await kc.applyToHTTPSOptions(opts);
  return kc.h2Connection(opts)?.session();
}

test('the hot calls give the same results over HTTP/2 as over HTTP/1.1, all on one connection', () =>
  withSim({}, async (sim) => {
    const node = await raw(sim, 'POST', '/api/v1/nodes', { body: JSON.stringify({ metadata: { name: 'n1' } }) });
    assert.equal(node.status, 201);
    const results: Record<string, unknown[]> = {};
    for (const h2 of [true, false]) {
      const kc = loadKubeConfig({ yaml: sim.kubeconfig });
      kc.http2 = h2;
      try {
        const api = createKubeApiClient({ kc, qps: 0 });
        results[String(h2)] = await hotCalls(api, 'x');
        const session = await h2Session(kc);
        if (h2) {
          assert.equal(session?.alpnProtocol, 'h2');
          // Client stream ids are odd, from 1: the eight raw calls (two creates, two patches, two
          // gets, two deletes; the VolumeAttachment GETs, after the 409 and the test's own, are the generated client's) leave 17 as the next.
          assert.equal(session?.state.nextStreamID, 17, 'every raw call was a stream of the one session');
        } else {
          assert.equal(session, undefined, 'no HTTP/2 when it is switched off');
        }
      } finally {
        kc.close();
      }
    }
    assert.deepEqual(results.true, results.false);
    assert.deepEqual(results.true, ['created', 'n1', 'already-exists', 'patched', ['kubernetes.io/csi/d^x'], 'not-found', undefined, 'deleted', 'not-found']);
  }));

test('a settled HTTP/2 call leaves none of its listeners on its stream (Node 20 keeps finished streams until a full collection)', () =>
  withSim({}, async (sim) => {
    const node = await raw(sim, 'POST', '/api/v1/nodes', { body: JSON.stringify({ metadata: { name: 'n1' } }) });
    assert.equal(node.status, 201);
    const kc = loadKubeConfig({ yaml: sim.kubeconfig });
    kc.http2 = true;
    try {
      const api = createKubeApiClient({ kc, qps: 0 });
      await api.createVolumeAttachment(va('warm'));
      const session = await h2Session(kc);
      assert.ok(session);
      // Each stream with the listeners our code (src/) put on it; Node adds its own as well.
      const EVENTS = ['response', 'data', 'end', 'error', 'close'] as const;
      const streams: Array<{ s: http2.ClientHttp2Stream; ours: Set<unknown> }> = [];
      const request = session.request.bind(session);
      session.request = ((...args: Parameters<typeof request>) => {
        const s = request(...args);
        const ours = new Set<unknown>();
        for (const m of ['on', 'once', 'addListener', 'prependListener', 'prependOnceListener'] as const) {
          const add = s[m].bind(s) as (e: string, fn: (...a: unknown[]) => void) => http2.ClientHttp2Stream;
          (s as unknown as Record<string, unknown>)[m] = (e: string, fn: (...a: unknown[]) => void) => {
            if (/[\\/]src[\\/]kube[\\/]/.test(new Error().stack?.split('\n')[2] ?? '')) ours.add(fn);
            return add(e, fn);
          };
        }
        streams.push({ s, ours });
        return s;
      }) as typeof session.request;
      // A parsed answer, an ignored one (drain), a 409 and a 404: each way a call settles.
      assert.deepEqual(await hotCalls(api, 'y'), ['created', 'n1', 'already-exists', 'patched', ['kubernetes.io/csi/d^y'], 'not-found', undefined, 'deleted', 'not-found']);
      assert.equal(streams.length, 8);
      await new Promise((r) => setImmediate(r)); // the streams' own 'close' comes after the answer
      for (const [i, { s, ours }] of streams.entries()) {
        assert.ok(ours.size >= 4, `stream ${i}: the call's listeners were seen (${ours.size})`);
        for (const e of EVENTS) {
          const left = s.listeners(e).filter((l) => ours.has(l) && l !== ignoreLateError);
          assert.deepEqual(left, [], `stream ${i}, '${e}': none of the call's listeners is left`);
        }
        assert.ok(s.listeners('error').includes(ignoreLateError), `stream ${i}: the shared no-op takes a late error`);
      }
      assert.doesNotThrow(() => streams[0]!.s.emit('error', new Error('late')), 'a late error is absorbed');
    } finally {
      kc.close();
    }
  }));

test('over HTTP/2 a call that outlives its timeout fails alone, and the connection serves the next calls', async () => {
  const injector = createFaultInjector({ spec: 'none', seed: 1 });
  await withSim({ faultInjection: injector }, async (sim) => {
    const kc = loadKubeConfig({ yaml: sim.kubeconfig });
    kc.http2 = true;
    try {
      const api = createKubeApiClient({ kc, qps: 0, requestTimeoutMs: 300 });
      await api.createVolumeAttachment(va('warm'));
      const first = await h2Session(kc);
      injector.set('latency=2s..2s');
      await assert.rejects(api.createVolumeAttachment(va('slow')), (err: unknown) => !isAlreadyExists(err));
      injector.set('none');
      assert.equal(await api.createVolumeAttachment(va('after')), 'created');
      assert.equal(await h2Session(kc), first, 'a live connection is kept after a timed-out stream');
    } finally {
      kc.close();
    }
  });
});

test('a TLS server without h2 is remembered as HTTP/1.1-only and served over HTTP/1.1', async () => {
  const tls = await generateTls();
  let protocols = new Set<string>();
  const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    protocols.add(req.httpVersion);
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment', ...JSON.parse(body), status: { attached: false } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const yaml = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", certificate-authority-data: "${Buffer.from(tls.ca).toString('base64')}"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;
  const kc = loadKubeConfig({ yaml });
  kc.http2 = true;
  try {
    const api = createKubeApiClient({ kc, qps: 0 });
    assert.equal(await api.createVolumeAttachment(va('a')), 'created');
    assert.equal(await api.createVolumeAttachment(va('b')), 'created');
    assert.equal(await h2Session(kc), undefined);
    assert.deepEqual([...protocols], ['1.1']);
    protocols = new Set();
  } finally {
    kc.close();
    server.close();
  }
});
