/**
 * The root pino logger and per-component children. Logs go to stdout synchronously (no
 * transport thread: on 2 cores a transport competes with the plan workers; nothing buffered,
 * so nothing to flush at exit). `LOG_LEVEL` sets the level (default info; tests set `silent`
 * unless debugging). A closed stdout (EPIPE) ends logging and is reported (stdout-closed.ts).
 */
import { pino, type Logger } from 'pino';
import { aroundStatusLine } from './status-line.js';
import { markStdoutClosed } from './stdout-closed.js';

export type { Logger };

let root: Logger | undefined;

export function rootLogger(): Logger {
  if (root) return root;
  const out = pino.destination({ dest: 1, sync: true });
  const write = out.write.bind(out);
  out.write = (line: string) => aroundStatusLine(() => write(line));
  out.on('error', (err: NodeJS.ErrnoException) => {
    // Nowhere left to log to, whatever the error: lines are dropped from now on.
    out.write = () => true;
    if (err.code === 'EPIPE') markStdoutClosed();
  });
  root = pino(
    {
      level: process.env.LOG_LEVEL ?? (process.env.NODE_TEST_CONTEXT ? 'silent' : 'info'),
      base: { pid: process.pid },
      redact: { paths: ['token', '*.token', 'authorization', '*.authorization', 'headers.authorization', '*.rawPacket'], censor: '[redacted]' },
    },
    out,
  );
  return root;
}

/** A child logger tagged with `component`. */
export function logger(component: string): Logger {
  return rootLogger().child({ component });
}
