/**
 * The per-item error policy of the populator's passes over every pod: one item's throw does not
 * end the pass, the first is logged in full, the rest are counted in one line at the end.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { guardItems } from '../../src/populator/item-guard.js';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  return { lines, log: pino({ level: 'info' }, sink) };
}

describe('guardItems', () => {
  it('runs every item past failures, logs the first failure in full and then a count', () => {
    const { lines, log } = capture();
    const guard = guardItems(log, 'C10 pass');
    const done: number[] = [];
    const run = guard.wrap((n: number) => {
      if (n % 3 === 0) throw new Error(`bad ${n}`);
      done.push(n);
    }, (n) => ({ item: n }));
    for (let n = 1; n <= 10; n++) run(n);
    assert.deepEqual(done, [1, 2, 4, 5, 7, 8, 10]);
    assert.equal(guard.finish(), 3);
    assert.equal(lines.length, 2, JSON.stringify(lines));
    assert.equal(lines[0]!.msg, 'C10 pass: item skipped');
    assert.equal(lines[0]!.item, 3);
    assert.match(String((lines[0]!.err as { message: string }).message), /bad 3/);
    assert.equal(lines[1]!.msg, 'C10 pass: items skipped');
    assert.equal(lines[1]!.skipped, 3);
  });

  it('one failure is one line; none is none; wrapped works share one count', () => {
    const { lines, log } = capture();
    const guard = guardItems(log, 'C9 pass');
    const a = guard.wrap((s: string) => {
      if (s === 'x') throw new Error('x');
    }, (s) => ({ s }));
    const b = guard.wrap((_n: number) => undefined, () => ({}));
    a('ok');
    b(1);
    assert.equal(lines.length, 0);
    a('x');
    assert.equal(guard.finish(), 1);
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.msg, 'C9 pass: item skipped');
  });
});
