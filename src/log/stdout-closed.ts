/**
 * Whether the process's stdout has gone away (EPIPE: the reader of a pipe exited, as in
 * `fleet-attach demo | head`). Logs and progress both go to stdout; once it is closed neither can
 * be written, and the commands stop as they do on SIGTERM instead of crashing on the write error
 * or, worse, spinning: pino's buffered destination retried a broken pipe forever at exit.
 */
let closed = false;
const waiters: Array<() => void> = [];

export function markStdoutClosed(): void {
  if (closed) return;
  closed = true;
  for (const w of waiters.splice(0)) w();
}

/** Resolves once stdout is closed (never, while it is open). */
export function stdoutClosed(): Promise<void> {
  return closed ? Promise.resolve() : new Promise((r) => waiters.push(r));
}

/** Installs the EPIPE handler on `process.stdout` (the CLI does, once). */
export function watchProcessStdout(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') markStdoutClosed();
    else throw err;
  });
}
