/**
 * `fleet-attach run`: the attach/detach controller against the cluster named by --kubeconfig
 * ($KUBECONFIG, or in-cluster), with the inspection API and /metrics on --listen.
 */
import { flagHelp, parseFlags } from './flags.js';
import { CONTROLLER_FLAGS, controllerOptionsFromFlags, UNSAFE_SHARD_GUARDS_ENV, unsafeShardGuardsFromEnv } from './controller-flags.js';
import { fleetError } from '../errors/index.js';
import { startControllerWithApi, untilSignal } from '../manager/run-controller.js';
import { applyHeapGrowth } from './heap-growth.js';

export async function runCommand(argv: string[]): Promise<number> {
  const { flags, positional, help } = parseFlags(CONTROLLER_FLAGS, argv);
  if (help) {
    console.log(`usage: fleet-attach run [flags]\n\n${flagHelp(CONTROLLER_FLAGS)}`);
    return 0;
  }
  if (positional.length) throw fleetError('FA_ERR_FLAG_UNKNOWN', `unexpected argument: ${positional[0]}`);
  const options = controllerOptionsFromFlags(flags);
  applyHeapGrowth(flags['heap-growth']);
  // Tests only (the chaos bench's mutation runs); the controller logs the switched-off guards.
  const guardsOff = unsafeShardGuardsFromEnv(process.env[UNSAFE_SHARD_GUARDS_ENV], options.sharding);
  const running = await startControllerWithApi({ ...options, ...(guardsOff ? { unsafeShardGuardsOff: guardsOff } : {}), kubeconfig: flags.kubeconfig ? { path: flags.kubeconfig } : {}, listen: flags.listen });
  // Upstream exits when it loses its lease; a supervisor restarts it as a fresh standby (also
  // after a failed start-up).
  const restart = running.ctl.mustRestart().then((reason) => ({ reason }));
  const why = await Promise.race([untilSignal(), restart]);
  await running.stop();
  if (typeof why === 'object') {
    console.error(`fleet-attach run: ${why.reason}; exiting so that a fresh replica can start`);
    return 1;
  }
  return 0;
}
