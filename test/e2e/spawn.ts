/** Helpers to run the package's bin as a user would, and stop it cleanly. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

export const BIN = new URL('../../bin/fleet-attach.js', import.meta.url).pathname;

/** The bin runs dist/: build it (no-op when fresh). */
export function ensureBuilt(): void {
  execFileSync(process.execPath, [new URL('../../scripts/ensure-build.js', import.meta.url).pathname], { stdio: 'inherit' });
}

export interface Spawned {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

export function spawnBin(args: string[], env: NodeJS.ProcessEnv = {}): Spawned {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    output: () => out,
    exited,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

export async function waitForFile(path: string, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${path}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
