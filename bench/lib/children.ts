/**
 * Child processes of a bench, and the guarantee that none outlives it: every child gets an IPC
 * channel (a child preloading exit-with-parent.js, or listening for `disconnect`, stops when
 * the bench dies, even by SIGKILL), and on any exit of the bench (normal, signal, uncaught
 * error) the children still running are killed.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';

export interface Child {
  readonly process: ChildProcess;
  readonly pid: number;
  /** The last ~256 KiB of stdout + stderr. */
  output(): string;
  /** Calls `fn` with each complete output line. Returns the unsubscribe function. */
  onLine(fn: (line: string) => void): () => void;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves on exit. */
  stop(graceMs?: number): Promise<number | null>;
}

const TAIL = 256 * 1024;
const live = new Set<ChildProcess>();
let hooked = false;

function killAll(): void {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      console.error(`\n${sig}: stopping children`);
      killAll();
      process.exit(130);
    });
  }
  process.on('uncaughtException', (err) => {
    console.error(err);
    killAll();
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    console.error(err);
    killAll();
    process.exit(1);
  });
}

function track(cp: ChildProcess): Child {
  hookExit();
  live.add(cp);
  let tail = '';
  const listeners = new Set<(line: string) => void>();
  let partial = '';
  const onData = (d: Buffer) => {
    const s = d.toString('utf8');
    tail = (tail + s).slice(-TAIL);
    if (listeners.size === 0) return;
    const text = partial + s;
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) for (const fn of listeners) fn(l);
  };
  cp.stdout?.on('data', onData);
  cp.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => cp.on('exit', (code) => {
    live.delete(cp);
    resolve(code);
  }));
  return {
    process: cp,
    pid: cp.pid ?? -1,
    output: () => tail,
    onLine(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    exited,
    async stop(graceMs = 20_000) {
      if (cp.exitCode === null && cp.signalCode === null) cp.kill('SIGTERM');
      const t = setTimeout(() => cp.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** The young-generation size of the simulator's processes and of the demo's (npm start). */
export const SEMI_SPACE_FLAG = '--max-semi-space-size=64';
/** The controller's young-generation size in its shipped command line (deploy/Dockerfile). */
export const CONTROLLER_SEMI_SPACE_FLAG = '--max-semi-space-size=32';

/** Spawns `node [nodeArgs] script [args]` with an IPC channel. */
export function spawnNode(nodeArgs: string[], script: string, args: string[], env: NodeJS.ProcessEnv = {}): Child {
  const cp = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  return track(cp);
}

/** Forks a TypeScript module (through tsx) with an IPC channel. */
export function forkTs(module: string, nodeArgs: string[], env: NodeJS.ProcessEnv = {}): Child {
  const cp = fork(module, [], {
    execArgv: [...nodeArgs, '--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  return track(cp);
}

/** Resolves with the first IPC message satisfying `pred`; rejects if the child exits first or after `timeoutMs`. */
export function nextMessage<T>(child: Child, pred: (m: T) => boolean, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = () => {
      child.process.off('message', on);
      clearTimeout(timer);
    };
    const on = (m: unknown) => {
      if (pred(m as T)) {
        done();
        resolve(m as T);
      }
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no matching message within ${timeoutMs} ms`));
    }, timeoutMs);
    child.process.on('message', on);
    void child.exited.then((code) => {
      done();
      reject(new Error(`child exited (${code}) before the expected message:\n${child.output().slice(-3000)}`));
    });
  });
}

/** A bench's entry point in the parent: an error is printed and fails the process once it ends. */
export function runMain(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}

/** A bench child's role: an error is printed and ends the child at once, so its parent sees the exit. */
export function runChild(role: () => Promise<void>): void {
  role().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
