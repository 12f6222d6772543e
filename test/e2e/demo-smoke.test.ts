import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ensureBuilt, spawnBin } from './spawn.js';

before(() => ensureBuilt());

test('`fleet-attach demo` converges a 200-node fleet and serves the inspection API', { timeout: 180_000 }, async () => {
  const p = spawnBin(['demo', '--nodes', '200', '--pods-per-node', '5', '--churn', '0', '--node-failure-rate', '0', '--listen', '127.0.0.1:0', '--until-converged', '--timeout', '150s', '--progress-interval', '2s']);
  const code = await p.exited;
  const out = p.output();
  assert.equal(code, 0, out);
  assert.match(out, /inspection API: http:\/\/127\.0\.0\.1:\d+/);
  assert.match(out, /attached\/desired 1000\/1000/);
  assert.match(out, /converged in [\d.]+ s/);
});

test('`fleet-attach demo` with a bad flag exits 2 naming the flag', async () => {
  const p = spawnBin(['demo', '--nodes', 'many']);
  assert.equal(await p.exited, 2);
  assert.match(p.output(), /--nodes/);
});

test('`fleet-attach demo --kubeconfig` is refused: the demo runs against its own simulator', async () => {
  const p = spawnBin(['demo', '--kubeconfig', '/tmp/kc']);
  assert.equal(await p.exited, 2);
  assert.match(p.output(), /unknown flag: --kubeconfig/);
});

test('`fleet-attach run` with an unreadable kubeconfig exits 2 naming the problem', async () => {
  const p = spawnBin(['run', '--kubeconfig', '/nonexistent/kubeconfig', '--listen', '127.0.0.1:0']);
  assert.equal(await p.exited, 2);
  assert.match(p.output(), /kubeconfig/);
});

test('`fleet-attach demo | head -1`: once its stdout is closed the demo stops cleanly and promptly', { timeout: 60_000 }, async () => {
  // A reader that takes the first line and goes away, as `head -1` does. The --duration is far
  // beyond the test's timeout, so an exit at all is the closed stdout's doing; the log says so.
  const dir = mkdtempSync(join(tmpdir(), 'fleet-attach-head-'));
  const logFile = join(dir, 'demo.log');
  try {
    const child = spawn(process.execPath, [BIN, 'demo', '--nodes', '50', '--pods-per-node', '2', '--duration', '600s', '--listen', '127.0.0.1:0', '--log-file', logFile], {
      env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    assert.equal(code, 0, err);
    assert.doesNotMatch(err, /EPIPE/);
    assert.match(readFileSync(logFile, 'utf8'), /stdout closed/, 'stopped because its stdout was closed');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('`fleet-attach demo` on a --listen address in use exits 2 naming it, before building the fleet', { timeout: 30_000 }, async () => {
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  const port = (blocker.address() as net.AddressInfo).port;
  try {
    const p = spawnBin(['demo', '--nodes', '50', '--listen', `127.0.0.1:${port}`]);
    assert.equal(await p.exited, 2, p.output());
    assert.match(p.output(), new RegExp(`--listen 127\\.0\\.0\\.1:${port}: address already in use`));
    assert.doesNotMatch(p.output(), /building a simulated fleet/);
  } finally {
    blocker.close();
  }
});

test('`fleet-attach demo --until-converged` that runs out of --duration exits 1; --timeout alone is refused', { timeout: 60_000 }, async () => {
  // Churn keeps volumes on their way: this fleet does not converge in 3 s.
  const p = spawnBin(['demo', '--nodes', '300', '--pods-per-node', '5', '--churn', '200', '--listen', '127.0.0.1:0', '--until-converged', '--duration', '3s']);
  assert.equal(await p.exited, 1, p.output());
  assert.match(p.output(), /stopping: duration reached/);
  const q = spawnBin(['demo', '--timeout', '3s']);
  assert.equal(await q.exited, 2);
  assert.match(q.output(), /--timeout applies to --until-converged/);
});
