/**
 * Restarting the kube-apiserver of a cluster that real-cluster.ts `up` started, without touching
 * real-cluster.ts: its pid is in DIR/cluster.json, its command line in /proc/PID/cmdline. The
 * process is stopped (SIGTERM, then SIGKILL after a grace period) and the same binary started
 * again with the same arguments, so on the same port, with the same certificates, token file and
 * service-account keys (the controller's TokenRequest token stays valid). The new pid is written
 * back to DIR/cluster.json, so `down(dir)` stops the new process.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface ApiserverRestart {
  oldPid: number;
  newPid: number;
  /** From the signal to the old process being gone, ms. */
  stopMs: number;
  /** The SIGTERM grace ran out and the old process was SIGKILLed. */
  killed: boolean;
  /** From the new process' start to /readyz answering ok, ms. */
  readyMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The command line of a running process: [binary, ...args]. */
export function commandLine(pid: number): { bin: string; args: string[] } {
  const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  const argv = raw.split('\0');
  if (argv.length > 0 && argv[argv.length - 1] === '') argv.pop();
  if (argv.length === 0) throw new Error(`process ${pid} has an empty command line (a zombie?)`);
  let bin = argv[0];
  try {
    bin = readlinkSync(`/proc/${pid}/exe`);
  } catch {
    // argv[0] as started (real-cluster.ts starts it by absolute path)
  }
  return { bin, args: argv.slice(1) };
}

/** /readyz through kubectl and the admin kubeconfig, as real-cluster.ts `up` waits for it (without blocking the event loop). */
export function apiserverReady(adminKubeconfig: string): Promise<boolean> {
  return new Promise((ok) => {
    execFile('kubectl', ['--kubeconfig', adminKubeconfig, 'get', '--raw', '/readyz'], { encoding: 'utf8', timeout: 10_000 }, (err, stdout) => ok(!err && stdout.trim() === 'ok'));
  });
}

/**
 * Stops the cluster's kube-apiserver (`signal`, default SIGTERM; SIGKILL once `graceMs`, default
 * 10 s, passed) and starts it again with the same command line; resolves once /readyz is ok.
 * `downMs`: how long it stays down between the two. Throws when the process does not stop or the
 * new one is not ready within `readyTimeoutMs` (default 120 s).
 */
export async function restartApiserver(dirArg: string, opts: { downMs?: number; readyTimeoutMs?: number; signal?: NodeJS.Signals; graceMs?: number } = {}): Promise<ApiserverRestart> {
  const dir = resolve(dirArg);
  const file = join(dir, 'cluster.json');
  const state = JSON.parse(readFileSync(file, 'utf8')) as { pids: { etcd: number; apiserver: number } };
  const oldPid = state.pids.apiserver;
  if (!oldPid || !alive(oldPid)) throw new Error(`kube-apiserver (pid ${oldPid}) is not running`);
  const { bin, args } = commandLine(oldPid);

  const t0 = performance.now();
  process.kill(oldPid, opts.signal ?? 'SIGTERM');
  const killAt = Date.now() + (opts.graceMs ?? 10_000);
  let killed = false;
  while (alive(oldPid)) {
    if (Date.now() > killAt) {
      process.kill(oldPid, 'SIGKILL');
      killed = true;
      break;
    }
    await sleep(50);
  }
  const hardDeadline = Date.now() + 15_000;
  while (alive(oldPid)) {
    if (Date.now() > hardDeadline) throw new Error(`kube-apiserver pid ${oldPid} did not exit after SIGKILL`);
    await sleep(50);
  }
  const stopMs = performance.now() - t0;
  if (opts.downMs) await sleep(opts.downMs);

  const fd = openSync(join(dir, 'kube-apiserver.log'), 'a');
  const child = spawn(bin, args, { detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${bin} again`);
  const newPid = child.pid;
  // Written at once, so that `down(dir)` stops the new process whatever happens next.
  state.pids.apiserver = newPid;
  writeFileSync(file, JSON.stringify(state, null, 2));

  const t1 = performance.now();
  const admin = join(dir, 'admin.kubeconfig');
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 120_000);
  for (;;) {
    if (!alive(newPid)) throw new Error(`the restarted kube-apiserver exited; see ${join(dir, 'kube-apiserver.log')}`);
    if (existsSync(admin) && (await apiserverReady(admin))) break;
    if (Date.now() > deadline) throw new Error(`the restarted kube-apiserver was not ready within ${opts.readyTimeoutMs ?? 120_000} ms`);
    await sleep(250);
  }
  return { oldPid, newPid, stopMs, killed, readyMs: performance.now() - t1 };
}
