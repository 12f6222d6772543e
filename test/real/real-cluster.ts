/**
 * A real control plane on loopback: upstream etcd and kube-apiserver (built by
 * `npm run upstream:build` into upstream/bin), with RBAC authorization, a serving certificate
 * from a throw-away CA, a service-account issuer and signing key, and two kubeconfigs:
 *
 * - `admin.kubeconfig`: a static token in group system:masters (kube-apiserver's token file);
 * - `controller.kubeconfig`: the ServiceAccount of deploy/rbac.yaml, with a token from the
 *   TokenRequest API (`kubectl create token`), as the controller runs in a cluster.
 *
 * The processes are detached and their pids kept in DIR/cluster.json, so `up` can return and a
 * later `down` (another process) can stop them. Admission: ServiceAccount is off (no controller
 * creates namespaces' default accounts here) and so is StorageObjectInUseProtection (no
 * protection controller would ever remove its finalizers); the simulator has neither.
 */
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { buildKubeconfig } from '../../src/sim/server/kubeconfig.js';
import { generateTls } from '../../src/sim/server/tls.js';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);
export const UPSTREAM_BIN = join(ROOT, 'upstream', 'bin');

export interface RealCluster {
  dir: string;
  /** https://127.0.0.1:PORT */
  url: string;
  adminKubeconfig: string;
  controllerKubeconfig: string;
  etcdUrl: string;
  pids: { etcd: number; apiserver: number };
}

export interface UpOptions {
  dir: string;
  /** Extra kube-apiserver flags (e.g. a shorter watch cache or compaction interval for tests). */
  apiserverArgs?: readonly string[];
  /** How long to wait for /readyz, ms. */
  readyTimeoutMs?: number;
}

/** Throws a message naming the missing binary and the command that builds it. */
export function upstreamBinary(name: 'etcd' | 'kube-apiserver' | 'kube-controller-manager'): string {
  const p = join(UPSTREAM_BIN, name);
  if (!existsSync(p)) throw new Error(`${p} is missing: run \`npm run upstream:build\` (needs Go 1.26)`);
  return p;
}

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => ok(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `probe` holds; fails at the deadline, or at once when the process `pid` has exited. */
async function waitFor(what: string, ms: number, probe: () => Promise<boolean>, log: string, pid: number): Promise<void> {
  const deadline = Date.now() + ms;
  let why = `not ready after ${ms} ms`;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    if (!alive(pid)) {
      why = 'exited';
      break;
    }
    await sleep(250);
  }
  const tail = existsSync(log) ? `\n--- last lines of ${log} ---\n${readFileSync(log, 'utf8').split('\n').slice(-30).join('\n')}` : '';
  throw new Error(`${what} ${why}${tail}`);
}

function spawnDetached(bin: string, args: readonly string[], logFile: string): number {
  const fd = openSync(logFile, 'a');
  const child = spawn(bin, args, { detached: true, stdio: ['ignore', fd, fd] });
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${bin}`);
  return child.pid;
}

function kubectl(kubeconfig: string, args: readonly string[], input?: string): string {
  const r = spawnSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', input });
  if (r.error) throw new Error(`kubectl: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/**
 * Starts etcd and kube-apiserver, waits for /readyz, applies deploy/rbac.yaml, writes the
 * kubeconfigs. The ports are picked free a moment before the processes bind them, so another
 * process can take one in between: a start that fails on a port in use is tried again on new ports.
 */
export async function up(opts: UpOptions): Promise<RealCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await upOnce(opts);
    } catch (err) {
      await down(opts.dir);
      if (attempt >= 3 || !/address already in use/.test((err as Error).message)) throw err;
    }
  }
}

async function upOnce(opts: UpOptions): Promise<RealCluster> {
  const dir = resolve(opts.dir);
  mkdirSync(dir, { recursive: true });
  if (existsSync(join(dir, 'cluster.json'))) await down(dir);
  const etcdBin = upstreamBinary('etcd');
  const apiBin = upstreamBinary('kube-apiserver');
  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;

  const tls = await generateTls(['127.0.0.1', 'localhost']);
  const sa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const adminToken = randomBytes(24).toString('hex');
  const files = {
    cert: join(dir, 'apiserver.crt'),
    key: join(dir, 'apiserver.key'),
    saKey: join(dir, 'sa.key'),
    saPub: join(dir, 'sa.pub'),
    tokens: join(dir, 'tokens.csv'),
  };
  writeFileSync(files.cert, tls.cert);
  writeFileSync(files.key, tls.key, { mode: 0o600 });
  writeFileSync(files.saKey, sa.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(files.saPub, sa.publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(files.tokens, `${adminToken},admin,admin-uid,"system:masters"\n`, { mode: 0o600 });

  const etcdLog = join(dir, 'etcd.log');
  const etcd = spawnDetached(etcdBin, [
    '--name=n0', `--data-dir=${join(dir, 'etcd-data')}`,
    `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=${peerUrl}`, `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=n0=${peerUrl}`, '--unsafe-no-fsync=true',
    '--quota-backend-bytes=8589934592', '--log-level=warn',
  ], etcdLog);
  const state = { dir, url: `https://127.0.0.1:${apiPort}`, etcdUrl, pids: { etcd, apiserver: 0 } };
  writeFileSync(join(dir, 'cluster.json'), JSON.stringify(state, null, 2));
  await waitFor('etcd', 30_000, async () => (await fetch(`${etcdUrl}/health`)).ok, etcdLog, etcd);

  const apiLog = join(dir, 'kube-apiserver.log');
  state.pids.apiserver = spawnDetached(apiBin, [
    `--etcd-servers=${etcdUrl}`, '--bind-address=127.0.0.1', `--secure-port=${apiPort}`,
    '--endpoint-reconciler-type=none', `--cert-dir=${dir}`,
    `--tls-cert-file=${files.cert}`, `--tls-private-key-file=${files.key}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    `--service-account-issuer=https://127.0.0.1:${apiPort}`,
    `--service-account-key-file=${files.saPub}`, `--service-account-signing-key-file=${files.saKey}`,
    '--authorization-mode=RBAC', `--token-auth-file=${files.tokens}`,
    '--disable-admission-plugins=ServiceAccount,StorageObjectInUseProtection',
    '--allow-privileged=true', '--profiling=false', '--v=1',
    ...(opts.apiserverArgs ?? []),
  ], apiLog);
  writeFileSync(join(dir, 'cluster.json'), JSON.stringify(state, null, 2));

  const adminKubeconfig = join(dir, 'admin.kubeconfig');
  writeFileSync(adminKubeconfig, buildKubeconfig({ url: state.url, token: adminToken, caPem: tls.ca, name: 'real-admin' }), { mode: 0o600 });
  await waitFor('kube-apiserver', opts.readyTimeoutMs ?? 120_000, async () => {
    const r = spawnSync('kubectl', ['--kubeconfig', adminKubeconfig, 'get', '--raw', '/readyz'], { encoding: 'utf8', timeout: 10_000 });
    return r.status === 0 && r.stdout.trim() === 'ok';
  }, apiLog, state.pids.apiserver);

  // The ServiceAccount and its RBAC exactly as shipped, then a token for it from TokenRequest.
  kubectl(adminKubeconfig, ['apply', '-f', join(ROOT, 'deploy', 'rbac.yaml')]);
  const saToken = kubectl(adminKubeconfig, ['-n', 'kube-system', 'create', 'token', 'fleet-attach', '--duration=48h']).trim();
  const controllerKubeconfig = join(dir, 'controller.kubeconfig');
  writeFileSync(controllerKubeconfig, buildKubeconfig({ url: state.url, token: saToken, caPem: tls.ca, name: 'real-fleet-attach' }), { mode: 0o600 });
  return { ...state, adminKubeconfig, controllerKubeconfig };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops what `up` started in DIR (kube-apiserver first, then etcd) and waits until both are gone. */
export async function down(dirArg: string): Promise<void> {
  const dir = resolve(dirArg);
  const file = join(dir, 'cluster.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return; // nothing started here, or another `down` of the same directory has finished
  }
  const { pids } = JSON.parse(text) as { pids: { etcd: number; apiserver: number } };
  for (const pid of [pids.apiserver, pids.etcd]) {
    if (!pid || !alive(pid)) continue;
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 15_000;
    while (alive(pid) && Date.now() < deadline) await sleep(100);
    if (alive(pid)) process.kill(pid, 'SIGKILL');
    while (alive(pid)) await sleep(50);
  }
  writeFileSync(file + '.down', text);
  spawnSync('rm', ['-f', file]);
}
