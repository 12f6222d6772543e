/**
 * Entry point of the `fleet-attach` command: dispatches to a subcommand and maps flag and
 * configuration errors to exit code 2 with a message naming the problem.
 *
 *   fleet-attach sim   [flags]   the simulated fleet (Kubernetes-compatible API server + actors)
 *   fleet-attach run   [flags]   the attach/detach controller against a cluster (--kubeconfig)
 *   fleet-attach demo  [flags]   sim + run + inspection API in one process tree (`npm start`)
 */
import { isFleetError } from '../errors/index.js';
import { watchProcessStdout } from '../log/stdout-closed.js';

type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  sim: { summary: 'run the simulated fleet', load: async () => (await import('../sim/command.js')).simCommand },
  run: { summary: 'run the attach/detach controller', load: async () => (await import('./run-command.js')).runCommand },
  demo: { summary: 'run simulator, controller and inspection API together', load: async () => (await import('./demo-command.js')).demoCommand },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(6)} ${c.summary}`);
  return `usage: fleet-attach <command> [flags]\n\ncommands:\n${lines.join('\n')}\n\n'fleet-attach <command> --help' lists a command's flags.`;
}

/** Runs the command line; resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  watchProcessStdout();
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name ? 0 : 2;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    console.error(`fleet-attach: unknown command "${name}"\n${usage()}`);
    return 2;
  }
  try {
    return await (await cmd.load())(rest);
  } catch (err) {
    if (isFleetError(err) && (err.code.startsWith('FA_ERR_FLAG') || err.code === 'FA_ERR_KUBECONFIG_INVALID')) {
      console.error(`fleet-attach ${name}: ${err.message}`);
      return 2;
    }
    throw err;
  }
}
