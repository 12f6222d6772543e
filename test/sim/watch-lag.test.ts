/**
 * The lag of a watch stream on a controlled clock: the delay line against its model, and a
 * lagging WatchStream's frames, replay, end and backlog bound.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import fc from 'fast-check';
import { DelayLine, type LagClock } from '../../src/sim/server/delay-line.js';
import { WatchStream } from '../../src/sim/server/watch-stream.js';
import { RESOURCES } from '../../src/sim/store/resources.js';

interface FakeClock extends LagClock {
  advance(ms: number): void;
  pending(): number;
}

/** Timers fire in due order (then creation order) as `advance` passes their time, and at exactly it. */
function fakeClock(): FakeClock {
  let now = 0;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout(fn, ms) {
      timers.set(++seq, { at: now + ms, fn });
      return seq;
    },
    clearTimeout: (h) => void timers.delete(h as number),
    pending: () => timers.size,
    advance(ms) {
      const end = now + ms;
      for (;;) {
        let next: [number, { at: number; fn: () => void }] | undefined;
        for (const e of timers) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
        if (!next) break;
        timers.delete(next[0]);
        now = next[1].at;
        next[1].fn();
      }
      now = end;
    },
  };
}

test('a delay line releases every item in push order, each at max(its push time + lag, the release of the one before)', () => {
  const op = fc.oneof(fc.record({ push: fc.integer({ min: 0, max: 50 }) }), fc.record({ advance: fc.integer({ min: 0, max: 60 }) }));
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
      const clock = fakeClock();
      const released: Array<{ id: number; at: number }> = [];
      const line = new DelayLine<number>(clock, (id) => released.push({ id, at: clock.now() }));
      const due: number[] = [];
      for (const o of ops) {
        if ('push' in o) {
          due.push(Math.max(clock.now() + o.push, due.at(-1) ?? -Infinity));
          line.push(due.length - 1, o.push);
        } else {
          clock.advance(o.advance);
          const expected = due.map((at, id) => ({ id, at })).filter((e) => e.at <= clock.now());
          assert.deepEqual(released, expected);
          assert.equal(line.size, due.length - expected.length);
        }
      }
    }),
  );
});

test('clearing a delay line drops what waits and its timer', () => {
  const clock = fakeClock();
  const out: string[] = [];
  const line = new DelayLine<string>(clock, (x) => out.push(x));
  line.push('a', 10);
  line.push('b', 10);
  line.clear();
  assert.equal(clock.pending(), 0);
  clock.advance(100);
  assert.deepEqual(out, []);
  line.push('c', 5);
  clock.advance(5);
  assert.deepEqual(out, ['c']);
});

class FakeResponse extends EventEmitter {
  written = '';
  ended = false;
  writableLength = 0;
  writeHead() {
    return this;
  }
  flushHeaders() {}
  write(chunk: Buffer | string) {
    this.written += chunk.toString();
    return true;
  }
  end() {
    this.ended = true;
  }
  destroy() {
    this.ended = true;
  }
}

const nextTurn = () => new Promise((r) => setImmediate(r));

function lagged(lagMs: number, maxBacklogBytes = 1 << 20) {
  const clock = fakeClock();
  const res = new FakeResponse();
  let closed = 0;
  const stream = new WatchStream({ res: res as unknown as ServerResponse, info: RESOURCES.nodes, namespace: undefined, selector: undefined, bookmarks: true, maxBacklogBytes, onClose: () => closed++, lagMs, clock });
  /** The frames the response got, after the stream's end-of-turn flush. */
  const frames = async () => {
    await nextTurn();
    return res.written.split('\n').filter(Boolean);
  };
  return { clock, res, stream, frames, closed: () => closed };
}

test('a lagging stream writes its replay, frames and end each its lag after it was handed over, in order', async () => {
  const { clock, res, stream, frames, closed } = lagged(100);
  stream.begin(['r1', 'r2'].map((f) => `${f}\n`), 0);
  clock.advance(40);
  stream.send('e1\n');
  clock.advance(59);
  assert.deepEqual(await frames(), [], 'nothing before the lag has passed');
  clock.advance(1);
  assert.deepEqual(await frames(), ['r1', 'r2'], 'the replay, its lag after the watch began');
  stream.end();
  assert.equal(res.ended, false, 'the end waits behind the lagged frames');
  stream.send('ignored\n');
  clock.advance(39);
  assert.deepEqual(await frames(), ['r1', 'r2']);
  clock.advance(1);
  assert.deepEqual(await frames(), ['r1', 'r2', 'e1']);
  assert.equal(res.ended, false);
  clock.advance(60);
  assert.deepEqual(await frames(), ['r1', 'r2', 'e1'], 'nothing is accepted once ending');
  assert.equal(res.ended, true);
  assert.equal(closed(), 1);
});

test('lifting the lag delivers what waits at its due time, and later frames after it, then live', async () => {
  const { clock, stream, frames } = lagged(100);
  stream.begin([], 0);
  stream.send('e1\n');
  clock.advance(10);
  stream.setLag(0);
  stream.send('e2\n');
  assert.deepEqual(await frames(), [], 'a frame after the lift does not overtake the lagged one');
  clock.advance(89);
  assert.deepEqual(await frames(), []);
  clock.advance(1);
  assert.deepEqual(await frames(), ['e1', 'e2']);
  assert.equal(stream.lagged, 0);
  stream.send('e3\n');
  assert.equal(clock.pending(), 0, 'live: no timer for a frame');
  assert.deepEqual(await frames(), ['e1', 'e2', 'e3']);
});

test('a stream that starts lagging delays what it is handed from then on', async () => {
  const { clock, stream, frames } = lagged(0);
  stream.begin([], 0);
  stream.send('e1\n');
  assert.deepEqual(await frames(), ['e1']);
  stream.setLag(50);
  stream.send('e2\n');
  assert.deepEqual(await frames(), ['e1']);
  clock.advance(50);
  assert.deepEqual(await frames(), ['e1', 'e2']);
});

test('lagged frames count against the backlog bound: past it the stream is cut off', async () => {
  const { clock, res, stream, closed } = lagged(1000, 100);
  stream.begin([], 0);
  for (let i = 0; i < 9; i++) stream.send(`${'x'.repeat(9)}\n`);
  assert.equal(stream.cutOff, false);
  stream.send(`${'x'.repeat(9)}\n`);
  stream.send('y\n');
  assert.equal(stream.cutOff, true);
  assert.equal(res.ended, true);
  assert.equal(closed(), 1);
  assert.equal(clock.pending(), 0, 'the lag line is dropped with its timer');
  clock.advance(2000);
  await nextTurn();
  assert.equal(res.written, '', 'nothing lagged is written after the cut');
});

test('holding a lagging stream drops what waits; its end is then at once', async () => {
  const { clock, res, stream, frames } = lagged(100);
  stream.begin([], 0);
  stream.send('e1\n');
  stream.hold();
  assert.equal(stream.lagged, 0);
  clock.advance(200);
  assert.deepEqual(await frames(), []);
  stream.end();
  assert.equal(res.ended, true);
});
