/**
 * `fleet-attach demo` (what `npm start` runs): the simulated fleet on a free loopback port, the
 * controller against it through the simulator's kubeconfig (the same code path as a real
 * cluster), and the inspection API — with a progress display until Ctrl-C, `--duration`, or
 * (with `--until-converged`) the first moment every desired volume is attached.
 *
 * Its terminal is for a person: the fleet being built, the URLs to try and the progress lines.
 * The controller's and simulator's JSON logs go to a file it names at start (`--log-file`);
 * warnings and errors also appear on the terminal, one readable line each.
 */
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { flagHelp, parseFlags } from './flags.js';
import { CONTROLLER_FLAGS, controllerOptionsFromFlags } from './controller-flags.js';
import { fleetError } from '../errors/index.js';
import { SIMULATOR_CLIENT_SIZING, startSimulator } from '../sim/server/index.js';
import { startControllerWithApi, untilSignal } from '../manager/run-controller.js';
import { createProgress } from './demo-progress.js';
import { requireTokenOffLoopback } from '../http/auth-hook.js';
import { parseListen, probeListen } from '../http/server.js';
import { sendLogsToFile } from '../log/logger.js';
import { applyHeapGrowth } from './heap-growth.js';

// The demo's cluster is its own simulator, so `run`'s --kubeconfig is not a demo flag (an
// accepted but ignored one would mislead).
const { kubeconfig: _runOnly, ...SHARED_FLAGS } = CONTROLLER_FLAGS;

const DEMO_FLAGS = {
  ...SHARED_FLAGS,
  'leader-elect': { ...CONTROLLER_FLAGS['leader-elect'], default: false },
  // The client limits sized to the embedded simulator (client-sizing.ts says why).
  'kube-api-qps': { ...CONTROLLER_FLAGS['kube-api-qps'], default: SIMULATOR_CLIENT_SIZING.kubeApiQps },
  'kube-api-burst': { ...CONTROLLER_FLAGS['kube-api-burst'], default: SIMULATOR_CLIENT_SIZING.kubeApiBurst },
  'kube-api-max-in-flight': { ...CONTROLLER_FLAGS['kube-api-max-in-flight'], default: SIMULATOR_CLIENT_SIZING.kubeApiMaxInFlight },
  'list-page-size': { ...CONTROLLER_FLAGS['list-page-size'], default: SIMULATOR_CLIENT_SIZING.listPageSize },
  nodes: { kind: 'int', default: 5000, min: 0, max: 200_000, help: 'simulated nodes' },
  'pods-per-node': { kind: 'int', default: 10, min: 0, max: 100, help: 'pods (each with its own PVC) per node' },
  'rwx-fraction': { kind: 'float', default: 0.1, min: 0, max: 1, help: 'fraction of ReadWriteMany volumes' },
  churn: { kind: 'float', default: 50, min: 0, max: 1_000_000, help: 'pod changes per second, from the moment the fleet is built' },
  'node-failure-rate': { kind: 'float', default: 0.05, min: 0, max: 1_000_000, help: 'node failures per second (NotReady, then back)' },
  seed: { kind: 'int', default: 1, min: 0, max: 0xffffffff, help: 'seed of the simulated fleet' },
  duration: { kind: 'duration', default: 0, min: 0, help: 'stop after this long (0 = until Ctrl-C)' },
  'until-converged': { kind: 'bool', default: false, help: 'exit 0 as soon as every desired volume is attached, 1 if --duration or --timeout passes first (smoke tests)' },
  timeout: { kind: 'duration', default: 0, min: 0, help: 'with --until-converged: exit 1 if not converged by then (0 = no limit)' },
  'progress-interval': { kind: 'duration', default: 3000, min: 100, help: 'progress line period when stdout is not a TTY' },
  'log-file': { kind: 'string', default: '', help: "file the JSON logs are appended to (default: fleet-attach-demo-<pid>.log in the temp folder); '-': stdout, between the progress lines" },
} as const;

export async function demoCommand(argv: string[]): Promise<number> {
  const { flags, positional, help } = parseFlags(DEMO_FLAGS, argv);
  if (help) {
    console.log(`usage: fleet-attach demo [flags]\n\n${flagHelp(DEMO_FLAGS)}`);
    return 0;
  }
  if (positional.length) throw fleetError('FA_ERR_FLAG_UNKNOWN', `unexpected argument: ${positional[0]}`);
  const options = controllerOptionsFromFlags(flags);
  applyHeapGrowth(flags['heap-growth']);
  if (flags.timeout > 0 && !flags['until-converged']) throw fleetError('FA_ERR_FLAG_INVALID', '--timeout applies to --until-converged only (use --duration to stop a run)');
  // Before the fleet is built (seconds at the default size): a --listen or token mistake now.
  requireTokenOffLoopback(parseListen(flags.listen).host, options.httpToken);
  await probeListen(flags.listen);
  const logFile = logToFile(flags['log-file']);
  const t0 = performance.now();
  if (logFile) console.log(`fleet-attach demo: logs (JSON) in ${logFile}; warnings and errors also shown here`);
  console.log(`fleet-attach demo: building a simulated fleet of ${flags.nodes} nodes × ${flags['pods-per-node']} pods …`);
  const sim = await startSimulator({
    fleet: {
      seed: flags.seed, nodes: flags.nodes, podsPerNode: flags['pods-per-node'], rwxFraction: flags['rwx-fraction'],
      attacher: true, kubelet: true, churn: flags.churn, nodeFailureRate: flags['node-failure-rate'], outOfServiceFraction: 0.2,
    },
  });
  console.log(`simulator: ${sim.url} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  let running;
  try {
    running = await startControllerWithApi({ ...options, kubeconfig: { yaml: sim.kubeconfig }, listen: flags.listen });
  } catch (err) {
    await sim.stop();
    throw err;
  }
  console.log(`dashboard: ${running.url}/\ninspection API: ${running.url}\n  try: ${running.url}/api/v1/summary  ${running.url}/api/v1/nodes?limit=5  ${running.url}/metrics  ${running.url}/openapi.json`);
  const progress = createProgress({ ctl: running.ctl, intervalMs: flags['progress-interval'], tty: Boolean(process.stdout.isTTY), startedAt: t0 });
  const stopReasons: Array<Promise<string>> = [untilSignal().then((s) => `signal ${s}`)];
  if (flags.duration > 0) stopReasons.push(new Promise((r) => setTimeout(() => r('duration reached'), flags.duration).unref()));
  stopReasons.push(progress.converged().then(() => {
    console.log(`converged in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    if (flags['until-converged']) return 'converged';
    return new Promise<string>(() => {});
  }));
  if (flags['until-converged'] && flags.timeout > 0) stopReasons.push(new Promise((r) => setTimeout(() => r('timeout'), flags.timeout).unref()));
  let failed = false;
  stopReasons.push(running.ctl.mustRestart().then((why) => ((failed = true), why)));
  const reason = await Promise.race(stopReasons);
  progress.stop();
  console.log(`stopping: ${reason}`);
  await running.stop();
  await sim.stop();
  if (logFile) console.log(`logs: ${logFile}`);
  // --until-converged promises convergence: any other end of the run is a failure, but a signal.
  const short = flags['until-converged'] && (reason === 'timeout' || reason === 'duration reached' || reason === 'signal stdout closed');
  return short || failed ? 1 : 0;
}

/** Sends the logs to the --log-file (or the default one); undefined for `-` (stdout). */
function logToFile(flag: string): string | undefined {
  if (flag === '-') return undefined;
  const path = resolve(flag || join(tmpdir(), `fleet-attach-demo-${process.pid}.log`));
  try {
    sendLogsToFile(path, { echoWarnings: true });
  } catch (err) {
    throw fleetError('FA_ERR_FLAG_INVALID', `--log-file ${path}: cannot open: ${(err as Error).message}`);
  }
  return path;
}
