import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createWorldState } from '../../src/cache/world-state.js';
import { isLoopbackHost } from '../../src/http/auth-hook.js';
import { buildServer } from '../../src/http/server.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import { createFakeInspectionView } from './fake-inspection-view.js';
import { createFleet } from './fleet-fixture.js';

const TOKEN = 's3cret-token-value';
const PROTECTED = ['/api/v1/summary', '/api/v1/nodes', '/api/v1/operations', '/metrics', '/openapi.json'];

describe('authentication', () => {
  it('refuses to build off loopback without --http-token', () => {
    const state = createWorldState();
    for (const host of ['0.0.0.0', '::', '10.1.2.3', 'controller.example']) {
      assert.throws(
        () => buildServer({ state, view: createFakeInspectionView({ state }), metrics: createControllerMetrics({ processMetrics: false }), listenHost: host }),
        (e: Error & { code?: string }) => e.code === 'FA_ERR_FLAG_INVALID' && e.message.includes('--http-token'),
        host,
      );
    }
  });

  it('serves loopback without a token', async () => {
    const f = createFleet({ listenHost: '127.0.0.1' });
    for (const url of PROTECTED) assert.equal((await f.get(url)).status, 200, url);
    await f.close();
  });

  it('off loopback refuses unauthenticated requests with 401 JSON and keeps the probes open', async () => {
    const f = createFleet({ listenHost: '0.0.0.0', httpToken: TOKEN });
    for (const url of PROTECTED) {
      const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong' }, { authorization: `Basic ${TOKEN}` }, { authorization: `Bearer ${TOKEN}x` }];
      for (const headers of attempts) {
        const r = await f.get(url, headers);
        assert.equal(r.status, 401, `${url} ${JSON.stringify(headers)}`);
        assert.deepEqual(Object.keys(r.json).sort(), ['code', 'message']);
        assert.equal(r.json.code, 'FA_ERR_HTTP_UNAUTHORIZED');
        assert.equal(r.headers['www-authenticate'], 'Bearer realm="fleet-attach"');
        assert.ok(!r.body.includes(TOKEN));
      }
      assert.equal((await f.get(url, { authorization: `Bearer ${TOKEN}` })).status, 200, url);
    }
    // Unknown paths are refused before routing, so they reveal nothing either.
    assert.equal((await f.get('/api/v1/nodes/x')).status, 401);
    assert.equal((await f.get('/healthz')).status, 200);
    f.view.setReadiness({ ready: false, role: 'standby', reason: 'not leader yet' });
    assert.equal((await f.get('/readyz')).status, 503);
    await f.close();
  });

  it('a configured token is required on loopback too', async () => {
    const f = createFleet({ listenHost: '127.0.0.1', httpToken: TOKEN });
    assert.equal((await f.get('/api/v1/summary')).status, 401);
    assert.equal((await f.get('/api/v1/summary', { authorization: `bearer ${TOKEN}` })).status, 200);
    await f.close();
  });

  it('never logs the authorization header', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
    const state = createWorldState();
    const app = buildServer({
      state, view: createFakeInspectionView({ state }), metrics: createControllerMetrics({ processMetrics: false }),
      listenHost: '0.0.0.0', httpToken: TOKEN, logger: pino({ level: 'trace' }, sink),
    });
    app.get('/api/v1/boom', (request) => {
      request.log.error({ req: { headers: request.headers }, headers: request.headers }, 'debug dump');
      throw new Error('boom');
    });
    const r = await app.inject({ url: '/api/v1/boom', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(r.statusCode, 500);
    assert.deepEqual(r.json(), { code: 'FA_ERR_INTERNAL', message: 'internal error' });
    assert.ok(lines.length > 0);
    assert.ok(!lines.join('').includes(TOKEN), lines.join(''));
    await app.close();
  });

  it('recognises loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.9.9.9', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost']) assert.ok(isLoopbackHost(h), h);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '::ffff:10.0.0.1', '128.0.0.1', 'localhost.example.com']) assert.ok(!isLoopbackHost(h), h);
  });
});
