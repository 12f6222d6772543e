/**
 * The root pino logger and per-component children. Logs go to stdout synchronously (no
 * transport thread: on 2 cores a transport competes with the plan workers), except while the
 * pipe is full, when they wait in memory (lines still waiting when the process exits are lost). `LOG_LEVEL` sets the level (default info; tests set `silent`
 * unless debugging). A closed stdout (EPIPE) ends logging and is reported (stdout-closed.ts).
 */
import { pino, type Logger } from 'pino';
import { aroundStatusLine } from './status-line.js';
import { markStdoutClosed } from './stdout-closed.js';

export type { Logger };

let root: Logger | undefined;

export function rootLogger(): Logger {
  if (root) return root;
  // Written at once while the reader keeps up; when the pipe is full (EAGAIN: a stalled log
  // collector) the line waits in memory for the next write instead of the thread sleeping until
  // the reader drains it (sonic-boom's default), which could outlast a leader's renew deadline.
  // Past 16 MB waiting, lines are dropped.
  const out = pino.destination({ dest: 1, sync: true, maxLength: 16 << 20, retryEAGAIN: () => false });
  const write = out.write.bind(out);
  out.write = (line: string) => aroundStatusLine(() => write(line));
  let failed = false;
  out.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EAGAIN' || err.code === 'EBUSY') return; // kept, written with the next line
    // Nowhere left to log to: lines are dropped from now on.
    out.write = () => true;
    if (err.code === 'EPIPE') markStdoutClosed();
    else if (!failed) process.stderr.write(`fleet-attach: logging stopped: ${err.message}\n`);
    failed = true;
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
