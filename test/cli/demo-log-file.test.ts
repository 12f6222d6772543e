/**
 * `npm start`'s terminal is for a person. The demo's stdout has the fleet being built,
 * the URLs and the progress lines, and names a log file; the controller's and simulator's JSON
 * log lines go to that file, not to stdout. Warnings and errors are echoed readably.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ensureBuilt } from '../e2e/spawn.js';

before(() => ensureBuilt());

function runNode(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((r) => child.on('exit', (code) => r({ code, stdout, stderr })));
}

const isJsonLogLine = (line: string) => {
  try {
    return typeof JSON.parse(line)?.level === 'number';
  } catch {
    return false;
  }
};

test('`fleet-attach demo`: stdout holds no JSON log line; they go to the log file it names', { timeout: 180_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fa-demo-log-'));
  try {
    // The default log file is in the temp folder: this test's own.
    const r = await runNode(
      [BIN, 'demo', '--nodes', '50', '--pods-per-node', '2', '--churn', '0', '--node-failure-rate', '0', '--listen', '127.0.0.1:0', '--until-converged', '--timeout', '150s', '--progress-interval', '1s'],
      { TMPDIR: dir },
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const lines = r.stdout.split('\n').filter((l) => l !== '');
    assert.deepEqual(lines.filter((l) => l.trimStart().startsWith('{') || isJsonLogLine(l)), [], 'JSON log lines on stdout');
    assert.match(r.stdout, /building a simulated fleet of 50 nodes/);
    assert.match(r.stdout, /inspection API: http:\/\/127\.0\.0\.1:\d+/);
    assert.match(r.stdout, /attached\/desired 100\/100/);
    const named = /logs \(JSON\) in (\S+fleet-attach-demo-\d+\.log)/.exec(r.stdout)?.[1];
    assert.ok(named, `no log file named:\n${r.stdout}`);
    assert.equal(named, join(dir, named.slice(dir.length + 1)), 'the default log file is in the temp folder');
    const logged = readFileSync(named, 'utf8').split('\n').filter((l) => l !== '');
    assert.ok(logged.length > 0 && logged.every(isJsonLogLine), logged.slice(0, 5).join('\n'));
    const msgs = logged.map((l) => JSON.parse(l) as { component?: string; msg: string });
    assert.ok(msgs.some((m) => m.component === 'sim' && /^listening on https:/.test(m.msg)), 'the simulator logs to the file');
    assert.ok(msgs.some((m) => m.component === 'http' && /^listening on http:/.test(m.msg)), 'the controller logs to the file');
    assert.ok(msgs.some((m) => m.component === 'controller' && m.msg === 'stop: done'), 'logging lasts to the end');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('`fleet-attach demo --log-file` where no file can be made exits 2 naming the flag, before building the fleet', { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fa-demo-log-'));
  try {
    writeFileSync(join(dir, 'a-file'), '');
    const r = await runNode([BIN, 'demo', '--nodes', '5', '--listen', '127.0.0.1:0', '--log-file', join(dir, 'a-file', 'demo.log')], {});
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /--log-file .*a-file\/demo\.log: cannot open/);
    assert.doesNotMatch(r.stdout, /building a simulated fleet/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('with logs in a file, warnings and errors are also shown on stdout, one readable line each; info is not', { timeout: 30_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fa-demo-log-'));
  try {
    const file = join(dir, 'logs', 'demo.log');
    const logger = new URL('../../src/log/logger.ts', import.meta.url).href;
    const script = `
      import { logger, sendLogsToFile } from ${JSON.stringify(logger)};
      const early = logger('early'); // made before the switch, as module-level loggers are
      sendLogsToFile(${JSON.stringify(file)}, { echoWarnings: true });
      early.info('quiet');
      logger('api').warn({ err: new Error('connection reset') }, 'list failed; retrying');
      logger('api').error('gave up');
      for (let i = 0; i < 10; i++) logger('flood').warn('again');
    `;
    const r = await runNode(['--import', 'tsx', '--input-type=module', '-e', script], {});
    assert.equal(r.code, 0, r.stderr);
    const out = r.stdout.split('\n').filter((l) => l !== '');
    assert.match(out[0], /^\d\d:\d\d:\d\d WARN api: list failed; retrying \(connection reset\)$/);
    assert.match(out[1], /^\d\d:\d\d:\d\d ERROR api: gave up$/);
    // At most 5 in 10 s: the file has the rest.
    assert.equal(out.length, 5, r.stdout);
    assert.ok(!out.some(isJsonLogLine) && !/quiet/.test(r.stdout), r.stdout);
    const logged = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
    assert.equal(logged.length, 13);
    assert.ok(logged.every(isJsonLogLine));
    assert.equal(JSON.parse(logged[0]).msg, 'quiet');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
