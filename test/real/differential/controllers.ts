/**
 * The two controllers a scenario runs against, as child processes of the test:
 *
 * - `kcm`: upstream kube-controller-manager with only the attach/detach controller, with the
 *   admin kubeconfig (docs/../shared reference §4.2 flags);
 * - `fleet-attach`: `fleet-attach run` with the shipped RBAC's ServiceAccount token
 *   (real-cluster.ts's controller.kubeconfig), from the built package bin.
 *
 * `args` are the parity knobs a scenario sets on both alike (e.g. the reconcile sync period).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import type { RealCluster } from '../real-cluster.js';
import { upstreamBinary } from '../real-cluster.js';

export type ControllerKind = 'kcm' | 'fleet-attach';
export const CONTROLLERS: readonly ControllerKind[] = ['kcm', 'fleet-attach'];

const BIN = new URL('../../../bin/fleet-attach.js', import.meta.url).pathname;

export interface RunningController {
  kind: ControllerKind;
  logFile: string;
  /** The last lines of its log. */
  tail(lines?: number): string;
  /**
   * Until its log says the attach/detach loop runs (KCM: the controller's caches synced, after
   * which it fills both worlds and starts the reconciler and populator at once; fleet-attach:
   * the desired state filled). Fails after `timeoutMs` or when the process exits.
   */
  waitReady(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Shared knobs, spelled the same in both (fleet-attach's flags keep upstream's names). */
export interface ControllerArgs {
  reconcileSyncPeriod?: string;
}

export function startController(kind: ControllerKind, cluster: RealCluster, dir: string, args: ControllerArgs = {}): RunningController {
  const logFile = join(dir, `${kind}.log`);
  const fd = openSync(logFile, 'a');
  const shared = args.reconcileSyncPeriod ? [`--attach-detach-reconcile-sync-period=${args.reconcileSyncPeriod}`] : [];
  let child: ChildProcess;
  if (kind === 'kcm') {
    const flex = join(dir, 'flex');
    mkdirSync(flex, { recursive: true });
    child = spawn(upstreamBinary('kube-controller-manager'), [
      `--kubeconfig=${cluster.adminKubeconfig}`,
      '--controllers=persistentvolume-attach-detach-controller',
      '--leader-elect=false',
      '--use-service-account-credentials=false',
      '--bind-address=127.0.0.1',
      '--secure-port=0',
      `--flex-volume-plugin-dir=${flex}`,
      '--v=4',
      ...shared,
    ], { stdio: ['ignore', fd, fd] });
  } else {
    child = spawn(process.execPath, [
      BIN, 'run',
      '--kubeconfig', cluster.controllerKubeconfig,
      '--leader-elect=false',
      '--listen', '127.0.0.1:0',
      ...shared,
    ], { stdio: ['ignore', fd, fd], env: { ...process.env, LOG_LEVEL: 'debug' } });
  }
  closeSync(fd);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const readLog = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  const ready = kind === 'kcm' ? /"Caches are synced"/ : /desired state filled/;
  return {
    kind,
    logFile,
    tail(lines = 40) {
      return readLog().split('\n').slice(-lines).join('\n');
    },
    async waitReady(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!ready.test(readLog())) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${kind} exited (${child.exitCode ?? child.signalCode}) before it was ready`);
        if (Date.now() > deadline) throw new Error(`${kind} not ready after ${timeoutMs} ms (no line matching ${ready} in ${logFile})`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}
