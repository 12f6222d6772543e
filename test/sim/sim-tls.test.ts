/** Serving modes of the simulator: generated TLS, user-given certificate files, plain HTTP; the kubeconfig file. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import tls from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parse } from 'yaml';
import { generateTls, startSimulator } from '../../src/sim/server/index.js';
import { withSim } from './sim-helpers.js';

test('the kubeconfig is written atomically with the CA and a client certificate, and client-node verifies TLS with it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fa-sim-'));
  try {
    const path = join(dir, 'kc.yaml');
    await withSim({ kubeconfigOut: path, token: 'tok-123' }, async (sim) => {
      const doc = parse(readFileSync(path, 'utf8')) as { clusters: Array<{ cluster: Record<string, string> }>; users: Array<{ user: Record<string, string> }> };
      assert.equal(doc.clusters[0].cluster.server, sim.url);
      assert.match(sim.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(Buffer.from(doc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), sim.caPem);
      assert.equal(doc.clusters[0].cluster['insecure-skip-tls-verify'], undefined);
      // A certificate instead of the token: no header value per request (kubeconfig.ts says why).
      assert.equal(doc.users[0].user.token, undefined);
      const clientCert = new X509Certificate(Buffer.from(doc.users[0].user['client-certificate-data']!, 'base64'));
      assert.match(clientCert.subject, /CN=fleet-attach/);
      assert.ok(clientCert.checkIssued(new X509Certificate(String(sim.caPem))));
      assert.ok(doc.users[0].user['client-key-data']);
      assert.equal(statSync(path).mode & 0o777, 0o600);
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(path);
      assert.ok((await kc.makeApiClient(k8s.CoreV1Api).listNamespace()).items.length >= 1);
      // A client trusting another CA refuses the server.
      const other = await generateTls();
      const wrong = new k8s.KubeConfig();
      wrong.loadFromString(sim.kubeconfig.replace(Buffer.from(String(sim.caPem)).toString('base64'), Buffer.from(other.ca).toString('base64')));
      await assert.rejects(wrong.makeApiClient(k8s.CoreV1Api).listNamespace());
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('user-given certificate files are served, and the kubeconfig trusts them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fa-sim-'));
  try {
    const m = await generateTls();
    writeFileSync(join(dir, 'tls.crt'), m.cert + m.ca); // chain: serving certificate, then its CA
    writeFileSync(join(dir, 'tls.key'), m.key);
    await withSim({ tlsCertFile: join(dir, 'tls.crt'), tlsKeyFile: join(dir, 'tls.key') }, async (_sim, kc) => {
      assert.ok((await kc.makeApiClient(k8s.CoreV1Api).listNamespace()).items.length >= 1);
    });
    await assert.rejects(startSimulator({ tlsCertFile: join(dir, 'missing.crt'), tlsKeyFile: join(dir, 'tls.key') }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--insecure-http serves plain HTTP with a kubeconfig client-node accepts', () =>
  withSim({ insecureHttp: true }, async (sim, kc) => {
    assert.match(sim.url, /^http:\/\//);
    assert.equal(sim.caPem, undefined);
    assert.ok((await kc.makeApiClient(k8s.CoreV1Api).listNamespace()).items.length >= 1);
    const r = await fetch(`${sim.url}/api/v1/nodes`);
    assert.equal(r.status, 401);
  }));

/** Status of GET /api/v1/nodes over HTTP/2 with the given client material and headers. */
function h2Status(url: string, ca: string, client: { cert?: string; key?: string }, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url, { ca, ...client });
    session.on('error', reject);
    const req = session.request({ ':path': '/api/v1/nodes', ...headers });
    req.on('response', (h) => {
      req.resume();
      req.on('end', () => session.close(() => resolve(Number(h[':status']))));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a request is authenticated by a client certificate the CA signed, or by the bearer token, over HTTP/2 and HTTP/1.1', () =>
  withSim({ token: 'tok-456' }, async (sim, kc) => {
    const ca = String(sim.caPem);
    const doc = parse(sim.kubeconfig) as { users: Array<{ user: Record<string, string> }> };
    const mine = { cert: Buffer.from(doc.users[0].user['client-certificate-data']!, 'base64').toString(), key: Buffer.from(doc.users[0].user['client-key-data']!, 'base64').toString() };
    const foreign = (await generateTls()).client!; // signed by another CA
    assert.equal(await h2Status(sim.url, ca, mine), 200);
    assert.equal(await h2Status(sim.url, ca, {}), 401);
    assert.equal(await h2Status(sim.url, ca, foreign), 401);
    assert.equal(await h2Status(sim.url, ca, {}, { authorization: 'Bearer tok-456' }), 200);
    assert.equal(await h2Status(sim.url, ca, foreign, { authorization: 'Bearer tok-456' }), 200);
    // HTTP/1.1 (client-node's fetch): the kubeconfig's certificate, then the token alone.
    assert.equal((await kc.makeApiClient(k8s.CoreV1Api).listNode()).items.length, 0, 'answered: the empty fleet');
    const byToken = new k8s.KubeConfig();
    byToken.loadFromOptions({
      clusters: [{ name: 'c', server: sim.url, caData: Buffer.from(ca).toString('base64') }],
      users: [{ name: 'u', token: 'tok-456' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    assert.equal((await byToken.makeApiClient(k8s.CoreV1Api).listNode()).items.length, 0, 'answered: the empty fleet');
    const nobody = new k8s.KubeConfig();
    nobody.loadFromOptions({ clusters: byToken.clusters, users: [{ name: 'u' }], contexts: byToken.contexts, currentContext: 'x' });
    await assert.rejects(nobody.makeApiClient(k8s.CoreV1Api).listNode(), (err: unknown) => (err as { code?: number }).code === 401);
  }));

/** One HTTP/1.1 GET over a fresh TLS connection; the status code, whether TLS resumed, and the session to resume. */
function h1Get(url: string, ca: string, session?: Buffer, client: { cert?: string; key?: string } = {}): Promise<{ status: number; reused: boolean; session: Buffer | undefined }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let next: Buffer | undefined;
    let text = '';
    let reused = false;
    const socket = tls.connect({ host: hostname, port: Number(port), ca, session, ALPNProtocols: ['http/1.1'], ...client }, () => {
      reused = socket.isSessionReused();
      socket.write(`GET /api/v1/nodes HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`);
    });
    socket.on('session', (s: Buffer) => (next = s));
    socket.on('data', (d: Buffer) => (text += d.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve({ status: Number(text.split(' ')[1]), reused, session: next }));
  });
}

test('a resumed TLS session without a client certificate is not taken for one', () =>
  withSim({ token: 'tok-789' }, async (sim) => {
    const ca = String(sim.caPem);
    const first = await h1Get(sim.url, ca);
    assert.equal(first.status, 401);
    assert.ok(first.session, 'the server issued a session ticket');
    const resumed = await h1Get(sim.url, ca, first.session);
    assert.equal(resumed.reused, true, 'the session was resumed (Node reports such a connection as authorized)');
    assert.equal(resumed.status, 401);
    // A session that began with the kubeconfig's certificate keeps it when resumed.
    const doc = parse(sim.kubeconfig) as { users: Array<{ user: Record<string, string> }> };
    const mine = { cert: Buffer.from(doc.users[0].user['client-certificate-data']!, 'base64').toString(), key: Buffer.from(doc.users[0].user['client-key-data']!, 'base64').toString() };
    const withCert = await h1Get(sim.url, ca, undefined, mine);
    assert.equal(withCert.status, 200);
    const again = await h1Get(sim.url, ca, withCert.session);
    assert.equal(again.reused, true);
    assert.equal(again.status, 200);
  }));
