/**
 * The root pino logger and per-component children. Logs go to stdout synchronously (no
 * transport thread: on 2 cores a transport competes with the plan workers), except while the
 * pipe is full, when they wait in memory (lines still waiting when the process exits are lost). `LOG_LEVEL` sets the level (default info; tests set `silent`
 * unless debugging). A closed stdout (EPIPE) ends logging and is reported (stdout-closed.ts).
 *
 * {@link sendLogsToFile} (the demo, whose terminal is for a person) moves every line to a file
 * instead, from any moment: loggers made at import time follow. Worker threads started after it
 * log there too ($FLEET_ATTACH_LOG_FILE, which they inherit).
 */
import { mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { pino, type Logger } from 'pino';
import { aroundStatusLine } from './status-line.js';
import { markStdoutClosed } from './stdout-closed.js';

export type { Logger };

/** The log file of this process and of the worker threads it starts ({@link sendLogsToFile}). */
export const LOG_FILE_ENV = 'FLEET_ATTACH_LOG_FILE';

let root: Logger | undefined;
/** Where lines go instead of stdout once {@link sendLogsToFile} was called. */
let fileSink: ((line: string) => boolean) | undefined;

export function rootLogger(): Logger {
  if (root) return root;
  // Written at once while the reader keeps up; when the pipe is full (EAGAIN: a stalled log
  // collector) the line waits in memory for the next write instead of the thread sleeping until
  // the reader drains it (sonic-boom's default), which could outlast a leader's renew deadline.
  // Past 16 MB waiting, lines are dropped.
  const out = pino.destination({ dest: 1, sync: true, maxLength: 16 << 20, retryEAGAIN: () => false });
  const write = out.write.bind(out);
  out.write = (line: string) => (fileSink ? fileSink(line) : aroundStatusLine(() => write(line)));
  let failed = false;
  out.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EAGAIN' || err.code === 'EBUSY') return; // kept, written with the next line
    // Nowhere left to log to: lines are dropped from now on.
    out.write = () => true;
    if (err.code === 'EPIPE') markStdoutClosed();
    else if (!failed) process.stderr.write(`fleet-attach: logging stopped: ${err.message}\n`);
    failed = true;
  });
  // A worker thread of a process that logs to a file: the same file.
  const inherited = process.env[LOG_FILE_ENV];
  if (!isMainThread && inherited && !fileSink) sendLogsToFile(inherited);
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

export interface LogFileOptions {
  /**
   * Also show warnings and errors on stdout, one readable line each (`12:00:01 WARN component:
   * message`, kept above a status line), at most 5 per 10 s (the file has them all).
   */
  echoWarnings?: boolean;
}

/**
 * Sends the JSON log lines to `path` (appended; its folder made if missing) instead of stdout,
 * from now on. Throws when the file cannot be opened. Worker threads started later follow.
 */
export function sendLogsToFile(path: string, options: LogFileOptions = {}): void {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, 'a');
  const file = pino.destination({ dest: fd, sync: true });
  let failed = false;
  file.on('error', (err: Error) => {
    if (!failed) process.stderr.write(`fleet-attach: logging to ${path} stopped: ${err.message}\n`);
    failed = true;
  });
  const echo = options.echoWarnings && isMainThread ? warningEcho() : undefined;
  fileSink = (line: string) => {
    if (!failed) file.write(line);
    echo?.(line);
    return true;
  };
  // The fd stays open for the life of the process (sync writes: nothing to flush at exit).
  process.env[LOG_FILE_ENV] = path;
}

/** pino's numeric levels: 40 warn, 50 error, 60 fatal. */
const LEVEL_NAMES: Record<number, string> = { 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const ECHO_WINDOW_MS = 10_000;
const ECHO_PER_WINDOW = 5;

function warningEcho(): (line: string) => void {
  let windowStart = 0;
  let shownInWindow = 0;
  let held = 0;
  const print = (text: string) => aroundStatusLine(() => process.stdout.write(`${text}\n`));
  return (line: string) => {
    // pino writes the level first: {"level":40,...
    const level = Number(line.slice(9, 11));
    if (!(level >= 40) || !line.startsWith('{"level":')) return;
    const now = Date.now();
    if (now - windowStart >= ECHO_WINDOW_MS) {
      if (held > 0) print(`… ${held} more warnings and errors in the log file`);
      windowStart = now;
      shownInWindow = 0;
      held = 0;
    }
    if (shownInWindow >= ECHO_PER_WINDOW) {
      held++;
      return;
    }
    shownInWindow++;
    print(readable(line, level));
  };
}

/** `12:00:01 WARN component: message (error message)` from a pino JSON line. */
export function readable(line: string, level: number): string {
  let o: { time?: number; component?: string; msg?: string; err?: { message?: string } };
  try {
    o = JSON.parse(line);
  } catch {
    return line.trimEnd();
  }
  const time = new Date(o.time ?? Date.now()).toTimeString().slice(0, 8);
  const err = o.err?.message ? ` (${o.err.message})` : '';
  return `${time} ${LEVEL_NAMES[level] ?? 'WARN'} ${o.component ?? 'fleet-attach'}: ${o.msg ?? ''}${err}`;
}
