import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attemptCall, h2RequestOptions } from '../../src/kube/raw-write.js';
import { haveSameHiddenClass, warmPair } from '../support/hidden-class.js';

// A spread made per request would give every request's objects hidden classes of their own
// (raw-write.ts, h2RequestOptions): each test fails with `{ ...x, k }` in the builder.

test('the HTTP/2 request options of every request share one hidden class', () => {
  const signal = new AbortController().signal;
  const [a, b] = warmPair((i) => h2RequestOptions(i % 2 === 0, i % 3 === 0 ? signal : undefined));
  assert.ok(haveSameHiddenClass(a, b));
  assert.deepEqual(Object.keys(b), ['weight', 'parent', 'exclusive', 'silent', 'endStream', 'signal']);
});

test('an attempt of every call, with or without body and signal, shares one hidden class', () => {
  const signal = new AbortController().signal;
  const [a, b] = warmPair((i) => attemptCall(
    i % 2 === 0
      ? { method: 'POST', path: `/apis/storage.k8s.io/v1/volumeattachments`, body: `{"n":${i}}`, response: 'json' }
      : { method: 'GET', path: `/api/v1/nodes/node-${i}`, response: 'json' },
    30_000,
    i % 3 === 0 ? signal : undefined,
  ));
  assert.ok(haveSameHiddenClass(a, b));
  assert.equal(b.timeoutMs, 30_000);
  assert.equal(b.path, '/api/v1/nodes/node-2999');
  assert.equal(b.body, undefined);
  assert.equal(a.body, '{"n":2998}');
});
