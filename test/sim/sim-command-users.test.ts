/** `fleet-attach sim --users` and `--write-log`: parsed, refused with a flag error, and served by a running simulator. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import https from 'node:https';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parseUsers, simCommand, SIM_FLAGS } from '../../src/sim/command.js';
import { parseFlags } from '../../src/cli/flags.js';
import { isFleetError } from '../../src/errors/index.js';
import { until } from './sim-helpers.js';

const flagError = (flag: string) => (e: unknown) => isFleetError(e, 'FA_ERR_FLAG_INVALID') && (e as Error).message.includes(`--${flag}`);

test('--users parses NAME=TOKEN items', () => {
  assert.deepEqual(parseUsers(''), []);
  assert.deepEqual(parseUsers('replica-a=tok-a, replica-b=tok=b'), [{ name: 'replica-a', token: 'tok-a' }, { name: 'replica-b', token: 'tok=b' }]);
});

test('--users refuses malformed, duplicate and reserved entries without echoing tokens', () => {
  for (const bad of ['a', 'a=', '=t', 'a=t,', 'a=t,a=u', 'a=t,b=t', 'fleet-attach=t', 'a=t u']) {
    assert.throws(() => parseUsers(bad), flagError('users'), bad);
  }
  assert.throws(() => parseUsers('a=secret-own', 'secret-own'), (e: Error) => flagError('users')(e) && !e.message.includes('secret-own'), 'a user token may not be --token');
  assert.throws(() => parseUsers('a=secret-1,b=secret-1'), (e: Error) => !e.message.includes('secret-1'));
});

test('--write-log takes a record count; 0 (the default) is off', () => {
  assert.equal(parseFlags(SIM_FLAGS, []).flags['write-log'], 0);
  assert.equal(parseFlags(SIM_FLAGS, ['--write-log', '5000']).flags['write-log'], 5000);
  for (const bad of ['-1', 'many', '1.5', '100000000000']) assert.throws(() => parseFlags(SIM_FLAGS, ['--write-log', bad]), flagError('write-log'), bad);
});

test('bad --users and --write-log values reject with a flag error before anything starts', async () => {
  await assert.rejects(simCommand(['--users', 'nobody']), flagError('users'));
  await assert.rejects(simCommand(['--users', 'a=x,a=y']), flagError('users'));
  await assert.rejects(simCommand(['--write-log', '-5']), flagError('write-log'));
  await assert.rejects(simCommand(['--token', 'tok', '--users', 'a=tok']), flagError('users'));
  // Server flags, refused without a server.
  await assert.rejects(simCommand(['--actors-only', '--kubeconfig', 'kc', '--users', 'a=t']), flagError('users'));
  await assert.rejects(simCommand(['--actors-only', '--kubeconfig', 'kc', '--write-log', '10']), flagError('write-log'));
});

test('a bad --users exits 2 naming the flag', { timeout: 60_000 }, async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', MAIN, 'sim', '--users', 'replica-a'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  assert.equal(code, 2, stderr);
  assert.match(stderr, /--users/);
});

test('the sim command serves the users and the write log', { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sim-users-'));
  const kcPath = join(dir, 'kc');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', MAIN, 'sim', '--nodes', '0', '--listen', '127.0.0.1:0', '--kubeconfig-out', kcPath, '--users', 'replica-a=token-a', '--write-log', '100'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const kcText = await until('the kubeconfig', () => readFile(kcPath, 'utf8').catch(() => undefined), 60_000);
    const kc = new k8s.KubeConfig();
    kc.loadFromString(kcText);
    const cluster = kc.getCurrentCluster() as k8s.Cluster;
    const ca = Buffer.from(cluster.caData as string, 'base64').toString();
    const get = (path: string, token: string) => fetchWithCa(new URL(path, cluster.server), token, ca);
    const created = await fetchWithCa(new URL('/api/v1/nodes', cluster.server), 'token-a', ca, JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }));
    assert.equal(created.status, 201, created.body);
    const log = await get('/debug/write-log', 'token-a');
    assert.equal(log.status, 200);
    const records = log.body.trim().split('\n').map((l) => JSON.parse(l) as { user: string; name: string; verb: string });
    assert.deepEqual(records.filter((r) => r.name === 'n1').map((r) => [r.user, r.verb]), [['replica-a', 'create']]);
    assert.equal((await get('/api/v1/nodes', 'not-a-token')).status, 401);
  } finally {
    child.kill('SIGTERM');
    const code = await exited;
    await rm(dir, { recursive: true, force: true });
    assert.equal(code, 0, stderr.slice(-2000));
  }
});

/** The command line as `fleet-attach` runs it (exit code included), from the sources. */
const MAIN = `import { main } from '${new URL('../../src/cli/main.ts', import.meta.url).pathname}'; process.exitCode = await main(process.argv.slice(1));`;

function fetchWithCa(url: URL, token: string, ca: string, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const req = https.request(url, { method: body === undefined ? 'GET' : 'POST', headers, ca, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
