/**
 * The hot calls' HTTP/1.1 transport (undici's pool): how a call settles when it waits for a
 * connection, times out, is aborted, or is answered with an error, and that a call given up while
 * queued is never sent.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createH1Pool, sendH1 } from '../../src/kube/h1-transport.js';
import { KubeHttpError } from '../../src/kube/raw-request.js';

describe('sendH1', () => {
  let server: http.Server;
  let origin: string;
  const seen: string[] = [];
  const held: http.ServerResponse[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => {
        if (req.url === '/hold') return void held.push(res);
        if (req.url === '/busy') {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
          return void res.end(JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' }));
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ path: req.url, method: req.method }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('parses a 2xx body, drains one the caller ignores, and turns a 429 into a kube error with Retry-After', async () => {
    const pool = createH1Pool(origin, {}, 2);
    try {
      const parsed = await sendH1(pool, { method: 'POST', path: '/a', body: '{}', response: 'json' }, '/a', {});
      assert.deepEqual(parsed, { status: 200, body: { path: '/a', method: 'POST' } });
      const drained = await sendH1(pool, { method: 'DELETE', path: '/b', response: 'drain' }, '/b', {});
      assert.deepEqual(drained, { status: 200, body: undefined });
      await assert.rejects(sendH1(pool, { method: 'PATCH', path: '/busy', body: '{}', response: 'drain' }, '/busy', {}), (err: unknown) => {
        assert.ok(err instanceof KubeHttpError);
        assert.equal(err.statusCode, 429);
        assert.equal(err.reason, 'TooManyRequests');
        assert.equal(err.retryAfterMs, 3000);
        return true;
      });
    } finally {
      await pool.destroy();
    }
  });

  it('times out a call queued behind a held one, and never sends it once the connection frees', async () => {
    const pool = createH1Pool(origin, {}, 1);
    try {
      const first = sendH1(pool, { method: 'GET', path: '/hold', response: 'json', timeoutMs: 400 }, '/hold', {});
      const queued = sendH1(pool, { method: 'GET', path: '/queued', response: 'json', timeoutMs: 100 }, '/queued', {});
      await assert.rejects(queued, { name: 'TimeoutError' });
      await assert.rejects(first, { name: 'TimeoutError' });
      // The held call's connection was closed on its timeout; the pool then serves the next call.
      assert.deepEqual(await sendH1(pool, { method: 'GET', path: '/after', response: 'json' }, '/after', {}), { status: 200, body: { path: '/after', method: 'GET' } });
      assert.ok(!seen.includes('GET /queued'), `the timed-out queued call was never sent: ${seen.join(', ')}`);
    } finally {
      await pool.destroy();
    }
  });

  it('rejects a call in flight and one queued when the pool is destroyed (kube-config close)', async () => {
    const pool = createH1Pool(origin, {}, 1);
    const sent = sendH1(pool, { method: 'GET', path: '/hold', response: 'json' }, '/hold', {});
    const queued = sendH1(pool, { method: 'GET', path: '/queued-then-closed', response: 'json' }, '/queued-then-closed', {});
    const rejected = [assert.rejects(sent, { name: 'ClientDestroyedError' }), assert.rejects(queued, { name: 'ClientDestroyedError' })];
    await new Promise((r) => setTimeout(r, 50));
    await pool.destroy();
    await Promise.all(rejected);
    assert.ok(!seen.includes('GET /queued-then-closed'));
  });

  it('rejects at once with the signal\'s reason, before or after sending', async () => {
    const pool = createH1Pool(origin, {}, 1);
    try {
      const early = new AbortController();
      early.abort(new Error('stopped before'));
      await assert.rejects(sendH1(pool, { method: 'GET', path: '/x', response: 'json', signal: early.signal }, '/x', {}), /stopped before/);
      const late = new AbortController();
      const call = sendH1(pool, { method: 'GET', path: '/hold', response: 'json', signal: late.signal }, '/hold', {});
      setTimeout(() => late.abort(new Error('stopped while waiting')), 50);
      await assert.rejects(call, /stopped while waiting/);
    } finally {
      await pool.destroy();
    }
  });
});
