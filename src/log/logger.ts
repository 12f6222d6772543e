/**
 * The root pino logger and per-component children. Logs go to stdout synchronously (no
 * transport thread: on 2 cores a transport competes with the plan workers). `LOG_LEVEL`
 * sets the level (default info; tests set `silent` unless debugging).
 */
import { pino, type Logger } from 'pino';

export type { Logger };

let root: Logger | undefined;

export function rootLogger(): Logger {
  root ??= pino({
    level: process.env.LOG_LEVEL ?? (process.env.NODE_TEST_CONTEXT ? 'silent' : 'info'),
    base: { pid: process.pid },
    redact: { paths: ['token', '*.token', 'authorization', '*.authorization', 'headers.authorization', '*.rawPacket'], censor: '[redacted]' },
  });
  return root;
}

/** A child logger tagged with `component`. */
export function logger(component: string): Logger {
  return rootLogger().child({ component });
}
