import assert from 'node:assert/strict';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isFleetError } from '../../src/errors/index.js';
import { loadKubeConfig } from '../../src/kube/kube-config.js';

const good = (server: string, extra = '') =>
  [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{name: c1, cluster: {server: "${server}"${extra}}}]`,
    'users: [{name: u1, user: {token: t}}]',
    'contexts: [{name: x, context: {cluster: c1, user: u1}}]',
    'current-context: x',
  ].join('\n');

const invalid = (pattern: RegExp) => (err: unknown) => isFleetError(err, 'FA_ERR_KUBECONFIG_INVALID') && pattern.test(err.message);

describe('loadKubeConfig', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fa-kc-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('loads --kubeconfig before KUBECONFIG', () => {
    const a = path.join(dir, 'a.yaml');
    const b = path.join(dir, 'b.yaml');
    fs.writeFileSync(a, good('https://a.example:6443'));
    fs.writeFileSync(b, good('https://b.example:6443'));
    assert.equal(loadKubeConfig({ path: a, env: { KUBECONFIG: b } }).server(), 'https://a.example:6443');
    assert.equal(loadKubeConfig({ env: { KUBECONFIG: `${dir}/missing.yaml:${b}` } }).server(), 'https://b.example:6443');
  });

  it('merges KUBECONFIG files as kubectl does: the first definition of a name wins, and the first current-context set', () => {
    const a = path.join(dir, 'merge-a.yaml');
    const b = path.join(dir, 'merge-b.yaml');
    const noContext = path.join(dir, 'merge-none.yaml');
    fs.writeFileSync(a, good('https://a.example:6443'));
    fs.writeFileSync(b, good('https://b.example:6443')); // the same names c1, u1, x
    fs.writeFileSync(noContext, good('https://n.example:6443').replace('current-context: x', '').replace(/\bx\b/, 'other').replace(/\bc1\b/g, 'c9'));
    assert.equal(loadKubeConfig({ env: { KUBECONFIG: `${a}:${b}` } }).server(), 'https://a.example:6443');
    assert.equal(loadKubeConfig({ env: { KUBECONFIG: `${b}:${a}` } }).server(), 'https://b.example:6443');
    // The first file sets no current-context: the second's is used.
    assert.equal(loadKubeConfig({ env: { KUBECONFIG: `${noContext}:${b}` } }).server(), 'https://b.example:6443');
  });

  it('names what is wrong', () => {
    assert.throws(() => loadKubeConfig({ path: path.join(dir, 'nope.yaml'), env: {} }), invalid(/nope\.yaml: file not found/));
    assert.throws(() => loadKubeConfig({ yaml: ': : not yaml [', env: {} }), invalid(/kubeconfig document/));
    assert.throws(() => loadKubeConfig({ yaml: good('ftp://x'), env: {} }), invalid(/server must be http\(s\)/));
    assert.throws(() => loadKubeConfig({ yaml: good('http://127.0.0.1:1'), env: {} }), invalid(/insecure-skip-tls-verify/));
    assert.throws(() => loadKubeConfig({ yaml: good('https://x').replace('current-context: x', 'current-context: y'), env: {} }), invalid(/"y" is not defined/));
    assert.throws(() => loadKubeConfig({ env: {} }), invalid(/no kubeconfig/));
    assert.throws(() => loadKubeConfig({ env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' } }), invalid(/in-cluster/));
  });

  it('accepts plain http only with insecure-skip-tls-verify', () => {
    const kc = loadKubeConfig({ yaml: good('http://127.0.0.1:1/', ', insecure-skip-tls-verify: true'), env: {} });
    assert.equal(kc.server(), 'http://127.0.0.1:1');
  });

  it('applies the cluster TLS settings for a context without a user (anonymous)', async () => {
    const yaml = good('https://a.example:6443', ', insecure-skip-tls-verify: true').replace('users: [{name: u1, user: {token: t}}]', 'users: []').replace(', user: u1', '');
    const kc = loadKubeConfig({ yaml, env: {} });
    const opts = await kc.applyToFetchOptions({});
    assert.equal((opts.agent as https.Agent).options.rejectUnauthorized, false);
    kc.close();
  });

  it('hands out one agent per TLS material for fetch options, and closes it', async () => {
    const kc = loadKubeConfig({ yaml: good('https://a.example:6443', ', insecure-skip-tls-verify: true'), env: {} });
    const a = await kc.applyToFetchOptions({});
    const b = await kc.applyToFetchOptions({});
    assert.ok(a.agent);
    assert.equal(a.agent, b.agent);
    assert.equal((a.headers as unknown as { get(k: string): string }).get('authorization'), 'Bearer t');
    kc.close();
    const c = await kc.applyToFetchOptions({});
    assert.notEqual(c.agent, a.agent);
    kc.close();
  });

  it('caps the agent at 128 sockets unless the in-flight bound needs room beside the watches', async () => {
    const agentFor = async (inFlight?: number) => {
      const kc = loadKubeConfig({ yaml: good('https://a.example:6443', ', insecure-skip-tls-verify: true'), env: {} });
      if (inFlight !== undefined) kc.sizeAgentFor(inFlight);
      const { agent } = await kc.applyToFetchOptions({});
      kc.close();
      return agent as https.Agent;
    };
    assert.equal((await agentFor()).maxSockets, 128);
    assert.equal((await agentFor(96)).maxSockets, 128);
    assert.equal((await agentFor(256)).maxSockets, 288);
  });

  it('reuses the hot calls\' request options for a while, as copies, and never on http or when HTTP/2 is off', async () => {
    const kc = loadKubeConfig({ yaml: good('https://a.example:6443', ', insecure-skip-tls-verify: true'), env: {} });
    kc.http2 = true;
    let applied = 0;
    const apply = kc.applyToHTTPSOptions.bind(kc);
    kc.applyToHTTPSOptions = async (o) => {
      applied++;
      return apply(o);
    };
    const a = await kc.hotRequestOptions();
    (a.headers as Record<string, string>).Authorization = 'changed by a caller';
    const b = await kc.hotRequestOptions();
    assert.equal(applied, 1, 'the second call within the TTL reuses the options');
    assert.equal((b.headers as Record<string, string>).Authorization, 'Bearer t', 'a caller\'s change does not leak into the cache');
    assert.ok(kc.h2Connection(b), 'https: an HTTP/2 connection');
    kc.http2 = false;
    assert.equal(kc.h2Connection(b), undefined, 'HTTP/2 off');
    kc.close();
    const plain = loadKubeConfig({ yaml: good('http://a.example:8080', ', insecure-skip-tls-verify: true'), env: {} });
    assert.equal(plain.h2Connection(await plain.hotRequestOptions()), undefined, 'plain http has no HTTP/2');
    plain.close();
  });
});
