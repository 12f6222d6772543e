/**
 * The two controllers of the peer bench as child processes, each started cold with the same
 * client rate limit:
 *   fleet-attach   `node bin/fleet-attach.js run` with the shipped Node flags
 *                  (--max-semi-space-size=64), leader election off, every other flag at its default;
 *   upstream       kube-controller-manager (upstream/bin, `npm run upstream:build`) with only the
 *                  attach/detach controller (docs of the flags: real-control-plane.md §4), at the
 *                  client limits given or, with `qps` 'default', at its shipped 20 qps / 30 burst;
 *                  against the JSON-only simulator with --kube-api-content-type=application/json.
 * Either child is killed when the bench exits, whatever the way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CONTROLLER_SEMI_SPACE_FLAG, spawnNode } from './children.js';
import { freePort, upstreamBinary } from '../../test/real/real-cluster.js';

export type ControllerName = 'fleet-attach' | 'upstream';

export interface ControllerProcess {
  readonly pid: number;
  readonly process: ChildProcess;
  /** The command line, for the record. */
  readonly argv: string[];
  output(): string;
  stop(graceMs?: number): Promise<number | null>;
}

export interface ControllerSpec {
  controller: ControllerName;
  kubeconfig: string;
  /** Client qps and burst; undefined: the controller's shipped defaults. */
  qps?: number;
  burst?: number;
  /** Against the simulator (JSON only). */
  jsonOnly: boolean;
  /** Working directory for the controller's scratch files. */
  dir: string;
  heapMb: number;
  extraArgs: readonly string[];
}

const BIN = new URL('../../bin/fleet-attach.js', import.meta.url).pathname;
const GUARD = new URL('./exit-with-parent.js', import.meta.url).pathname;
const TAIL = 512 * 1024;
const live = new Set<ChildProcess>();
let hooked = false;

export async function startController(s: ControllerSpec): Promise<ControllerProcess> {
  if (s.controller === 'fleet-attach') {
    const limits = s.qps === undefined ? [] : ['--kube-api-qps', String(s.qps), '--kube-api-burst', String(s.burst ?? s.qps)];
    const args = ['run', '--kubeconfig', s.kubeconfig, '--leader-elect=false', ...limits, '--listen', '127.0.0.1:0', ...s.extraArgs];
    const nodeArgs = ['--import', GUARD, `--max-old-space-size=${s.heapMb}`, CONTROLLER_SEMI_SPACE_FLAG];
    const c = spawnNode(nodeArgs, BIN, args, { LOG_LEVEL: 'info' });
    return { pid: c.pid, process: c.process, argv: ['node', ...nodeArgs.slice(2), 'bin/fleet-attach.js', ...args], output: c.output, stop: c.stop };
  }
  const flex = join(s.dir, 'flex');
  mkdirSync(flex, { recursive: true });
  const port = await freePort();
  const args = [
    '--controllers=persistentvolume-attach-detach-controller', '--leader-elect=false', '--use-service-account-credentials=false',
    `--kubeconfig=${s.kubeconfig}`, '--bind-address=127.0.0.1', `--secure-port=${port}`,
    '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics', `--flex-volume-plugin-dir=${flex}`,
    ...(s.qps === undefined ? [] : [`--kube-api-qps=${s.qps}`, `--kube-api-burst=${s.burst ?? s.qps}`]),
    ...(s.jsonOnly ? ['--kube-api-content-type=application/json'] : []),
    ...s.extraArgs,
  ];
  const bin = upstreamBinary('kube-controller-manager');
  const cp = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    });
  }
  live.add(cp);
  let tail = '';
  const onData = (d: Buffer) => {
    tail = (tail + d.toString('utf8')).slice(-TAIL);
  };
  cp.stdout?.on('data', onData);
  cp.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => cp.on('exit', (code) => {
    live.delete(cp);
    resolve(code);
  }));
  return {
    pid: cp.pid ?? -1,
    process: cp,
    argv: ['kube-controller-manager', ...args],
    output: () => tail,
    async stop(graceMs = 20_000) {
      if (cp.exitCode === null && cp.signalCode === null) cp.kill('SIGTERM');
      const t = setTimeout(() => cp.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}
