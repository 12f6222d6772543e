/**
 * The package as shipped runs: `npm pack` (its prepack builds what is missing), the
 * tarball unpacked into an empty folder with the lockfile's production dependencies only
 * (`npm ci --omit=dev`, the steps of deploy/Dockerfile), then from there `fleet-attach sim` and
 * `fleet-attach run` with run's default flags (KUBECONFIG names the simulator; only --listen is
 * given, port 0, so that it cannot collide with another process on 8080) until every desired
 * volume is attached, and its dashboard (build/ui) is served. A file the default path loads but
 * "files" leaves out fails this test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('../..', import.meta.url).pathname;
const NODES = 50;
const PODS_PER_NODE = 2;

/** The environment of a process started outside this test run and outside `npm test`. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'NODE_TEST_CONTEXT' || k === 'NODE_OPTIONS' || k.startsWith('npm_package_') || k.startsWith('npm_lifecycle_') || k === 'npm_config_local_prefix') continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, env: cleanEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
}

interface Child {
  proc: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function start(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Child {
  const proc = spawn(process.execPath, [bin, ...args], { cwd, env: cleanEnv({ LOG_LEVEL: 'info', ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
  return { proc, output: () => out, exited };
}

async function stop(c: Child | undefined): Promise<void> {
  if (!c || c.proc.exitCode !== null || c.proc.signalCode !== null) return;
  c.proc.kill('SIGTERM');
  const t = setTimeout(() => c.proc.kill('SIGKILL'), 15_000);
  await c.exited;
  clearTimeout(t);
}

/** What a file the package should ship but does not looks like in a log (no point waiting on). */
const MISSING_FILE = /cannot read \S+ \(run npm run build\)|ERR_MODULE_NOT_FOUND|Cannot find (module|package)/;

/**
 * Resolves with the value `probe` returns other than undefined; rejects when `c` exits first,
 * logs a missing file, or at the deadline.
 */
async function waitFor<T>(what: string, c: Child, deadline: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    const missing = MISSING_FILE.exec(c.output());
    if (missing) throw new Error(`${what}: a file is missing from the package: ${missing[0]}\n${c.output().slice(-3000)}`);
    if (c.proc.exitCode !== null) throw new Error(`${what}: the process exited (${c.proc.exitCode}) first:\n${c.output().slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`${what}: not within the wait bound:\n${c.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

test('the packed package, installed with production dependencies only, runs `fleet-attach run` with its default flags to convergence against `fleet-attach sim`', { timeout: 600_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fa-packed-'));
  let sim: Child | undefined;
  let run: Child | undefined;
  try {
    // As the Dockerfile's build stage: npm pack (prepack builds what is missing).
    const tgz = npm(['pack', '--silent', '--pack-destination', dir], ROOT).trim().split('\n').pop()!;
    assert.match(tgz, /^fleet-attach-.*\.tgz$/);
    // As its runtime stage: the tarball's contents and the lockfile, production dependencies only.
    const app = join(dir, 'app');
    mkdirSync(app);
    execFileSync('tar', ['-xzf', join(dir, tgz), '-C', app, '--strip-components=1']);
    copyFileSync(join(ROOT, 'package-lock.json'), join(app, 'package-lock.json'));
    npm(['ci', '--omit=dev', '--no-audit', '--no-fund'], app);
    // No build tool, test helper or source came along.
    for (const dev of ['typescript', 'assemblyscript', 'tsx']) assert.ok(!existsSync(join(app, 'node_modules', dev)), `${dev} installed`);
    assert.ok(!existsSync(join(app, 'src')), 'src/ packed');

    // Started from the temp folder, so nothing resolves from the checkout.
    const bin = join(app, 'bin', 'fleet-attach.js');
    const kubeconfig = join(dir, 'kubeconfig');
    const deadline = Date.now() + 240_000;
    sim = start(bin, ['sim', '--nodes', String(NODES), '--pods-per-node', String(PODS_PER_NODE), '--listen', '127.0.0.1:0', '--kubeconfig-out', kubeconfig], dir, {});
    await waitFor('sim writes its kubeconfig', sim, deadline, () => (existsSync(kubeconfig) ? true : undefined));
    run = start(bin, ['run', '--listen', '127.0.0.1:0'], dir, { KUBECONFIG: kubeconfig });
    const r = run;
    const url = await waitFor('run serves its inspection API', r, deadline, () => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(r.output())?.[1]);
    const pairs = await waitFor('run converges', r, deadline, async () => {
      const res = await fetch(`${url}/api/v1/summary`).catch(() => undefined);
      if (!res?.ok) return undefined;
      const s = (await res.json()) as { pairs: { desired: number; desiredAttached: number } };
      return s.pairs.desired === NODES * PODS_PER_NODE && s.pairs.desiredAttached === s.pairs.desired ? s.pairs : undefined;
    });
    assert.equal(pairs.desiredAttached, NODES * PODS_PER_NODE);
    // The dashboard ships built: the shell names its bundle, and the bundle is there.
    const shell = await fetch(`${url}/`);
    assert.equal(shell.status, 200, await shell.clone().text());
    assert.match(shell.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.match(await shell.text(), /src="\/ui\/app\.js"/);
    for (const asset of ['/ui/app.js', '/ui/app.css']) assert.equal((await fetch(`${url}${asset}`)).status, 200, asset);
    assert.doesNotMatch(r.output(), MISSING_FILE);
    await stop(run);
    assert.equal(await run.exited, 0, run.output().slice(-3000));
    run = undefined;
  } finally {
    await stop(run);
    await stop(sim);
    rmSync(dir, { recursive: true, force: true });
  }
});
