/**
 * A status line at the bottom of a terminal (the demo's live progress): rewritten in place, and
 * kept below the log lines that share stdout with it. Each log line clears it first and draws it
 * again after, so a line is never appended to the end of the status.
 */
let shown: string | undefined;

/** Draws `text` in place of the current status line. */
export function showStatusLine(text: string): void {
  process.stdout.write(`\r\x1b[K${text}`);
  shown = text;
}

/** Leaves the status line as it is and moves below it (no-op when none is shown). */
export function endStatusLine(): void {
  if (shown === undefined) return;
  process.stdout.write('\n');
  shown = undefined;
}

/** Runs a log line's write with the status line cleared around it. */
export function aroundStatusLine<T>(write: () => T): T {
  if (shown === undefined) return write();
  process.stdout.write('\r\x1b[K');
  try {
    return write();
  } finally {
    process.stdout.write(shown);
  }
}
