/** Serving modes of the simulator: generated TLS, user-given certificate files, plain HTTP; the kubeconfig file. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parse } from 'yaml';
import { generateTls, startSimulator } from '../../src/sim/server/index.js';
import { withSim } from './sim-helpers.js';

test('the kubeconfig is written atomically with the CA and token, and client-node verifies TLS with it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fa-sim-'));
  try {
    const path = join(dir, 'kc.yaml');
    await withSim({ kubeconfigOut: path, token: 'tok-123' }, async (sim) => {
      const doc = parse(readFileSync(path, 'utf8')) as { clusters: Array<{ cluster: Record<string, string> }>; users: Array<{ user: { token: string } }> };
      assert.equal(doc.clusters[0].cluster.server, sim.url);
      assert.match(sim.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(Buffer.from(doc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), sim.caPem);
      assert.equal(doc.clusters[0].cluster['insecure-skip-tls-verify'], undefined);
      assert.equal(doc.users[0].user.token, 'tok-123');
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
