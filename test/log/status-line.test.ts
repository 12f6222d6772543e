/** The demo's terminal status line stays below the log lines: each log line clears it and draws it again after. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { aroundStatusLine, endStatusLine, showStatusLine } from '../../src/log/status-line.js';

test('a log line written while a status line is shown goes above it, never onto its end', () => {
  const writes: string[] = [];
  const original = process.stdout.write;
  process.stdout.write = ((chunk: string) => (writes.push(String(chunk)), true)) as typeof process.stdout.write;
  try {
    const log = (text: string) => aroundStatusLine(() => process.stdout.write(`${text}\n`));
    log('before');
    showStatusLine('[1s] 50%');
    log('warn A');
    showStatusLine('[2s] 90%');
    endStatusLine();
    log('after');
  } finally {
    process.stdout.write = original;
  }
  assert.equal(writes.join(''), 'before\n\r\x1b[K[1s] 50%\r\x1b[Kwarn A\n[1s] 50%\r\x1b[K[2s] 90%\nafter\n');
});
