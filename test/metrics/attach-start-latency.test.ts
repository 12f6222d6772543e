import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAttachStartLatency } from '../../src/metrics/attach-start-latency.js';

function harness(maxPending?: number) {
  let t = 100;
  const observed: number[] = [];
  const latency = createAttachStartLatency({
    now: () => t,
    histogram: { observe: (v: number) => void observed.push(v) },
    ...(maxPending !== undefined ? { maxPending } : {}),
  });
  return { latency, observed, advance: (s: number) => void (t += s) };
}

test('a pair added then started is observed once, with the time between', () => {
  const h = harness();
  h.latency.observe({ kind: 'desired-added', volume: 'v1', node: 'n1', pod: 'ns/p' });
  h.advance(0.25);
  h.latency.observe({ kind: 'attach-started', volume: 'v1', node: 'n1' });
  h.latency.observe({ kind: 'attach-started', volume: 'v1', node: 'n1' });
  assert.deepEqual(h.observed, [0.25]);
  assert.equal(h.latency.pending, 0);
});

test('the same volume on another node is a pair of its own', () => {
  const h = harness();
  h.latency.observe({ kind: 'desired-added', volume: 'v1', node: 'n1' });
  h.advance(1);
  h.latency.observe({ kind: 'desired-added', volume: 'v1', node: 'n2' });
  h.advance(2);
  h.latency.observe({ kind: 'attach-started', volume: 'v1', node: 'n2' });
  h.latency.observe({ kind: 'attach-started', volume: 'v1', node: 'n1' });
  assert.deepEqual(h.observed, [2, 3]);
});

test('a pair removed or found attached before its attach starts is not observed', () => {
  const h = harness();
  h.latency.observe({ kind: 'desired-added', volume: 'v1', node: 'n1' });
  h.latency.observe({ kind: 'desired-removed', volume: 'v1', node: 'n1' });
  h.latency.observe({ kind: 'desired-added', volume: 'v2', node: 'n1' });
  h.latency.observe({ kind: 'attach-succeeded', volume: 'v2', node: 'n1' });
  h.advance(5);
  h.latency.observe({ kind: 'attach-started', volume: 'v1', node: 'n1' });
  h.latency.observe({ kind: 'attach-started', volume: 'v2', node: 'n1' });
  assert.deepEqual(h.observed, []);
  assert.equal(h.latency.pending, 0);
});

test('an attach started with no pair added before it (a retry, a cold start past the cap) is not observed', () => {
  const h = harness(2);
  for (const v of ['a', 'b', 'c']) h.latency.observe({ kind: 'desired-added', volume: v, node: 'n' });
  assert.equal(h.latency.pending, 2);
  h.advance(1);
  for (const v of ['a', 'b', 'c']) h.latency.observe({ kind: 'attach-started', volume: v, node: 'n' });
  assert.deepEqual(h.observed, [1, 1]);
  // Room again: the next pair is followed.
  h.latency.observe({ kind: 'desired-added', volume: 'd', node: 'n' });
  h.advance(0.5);
  h.latency.observe({ kind: 'attach-started', volume: 'd', node: 'n' });
  assert.deepEqual(h.observed, [1, 1, 0.5]);
});

test('an addition of a pair already waiting keeps its first time', () => {
  const h = harness();
  h.latency.observe({ kind: 'desired-added', volume: 'v', node: 'n' });
  h.advance(1);
  h.latency.observe({ kind: 'desired-added', volume: 'v', node: 'n' });
  h.advance(1);
  h.latency.observe({ kind: 'attach-started', volume: 'v', node: 'n' });
  assert.deepEqual(h.observed, [2]);
});

test('a pair held back by a multi-attach conflict is not observed: it waits for a detach elsewhere', () => {
  const h = harness();
  h.latency.observe({ kind: 'desired-added', volume: 'v', node: 'n2' });
  h.latency.observe({ kind: 'multi-attach-blocked', volume: 'v', node: 'n2', holders: ['n1'] });
  h.advance(3);
  h.latency.observe({ kind: 'attach-started', volume: 'v', node: 'n2' });
  assert.deepEqual(h.observed, []);
});
