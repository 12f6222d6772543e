import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import net from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createWorldState } from '../../src/cache/world-state.js';
import { isLoopbackHost } from '../../src/http/auth-hook.js';
import { buildServer, listenServer } from '../../src/http/server.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import { createFakeInspectionView } from './fake-inspection-view.js';
import { createFleet } from './fleet-fixture.js';
import { isFleetError } from '../../src/errors/index.js';
import { startControllerWithApi } from '../../src/manager/run-controller.js';

const TOKEN = 's3cret-token-value';
const PROTECTED = ['/api/v1/summary', '/api/v1/nodes', '/api/v1/operations', '/metrics', '/openapi.json'];

/** A server off loopback with the token, logging everything into `lines`. */
function tracedServer() {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
  const state = createWorldState();
  const app = buildServer({
    state, view: createFakeInspectionView({ state }), metrics: createControllerMetrics({ processMetrics: false }),
    listenHost: '0.0.0.0', httpToken: TOKEN, logger: pino({ level: 'trace' }, sink),
  });
  return { lines, app };
}

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
    const { lines, app } = tracedServer();
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

  it('never logs the bytes of a request the HTTP parser refused (they hold the Authorization header)', async () => {
    const { lines, app } = tracedServer();
    const url = await listenServer(app, '127.0.0.1:0');
    await new Promise<void>((resolve) => {
      const s = net.connect(Number(new URL(url).port), '127.0.0.1', () => s.write(`GET /api/v1/summary HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nBad Header\r\n\r\n`));
      s.on('data', () => undefined);
      s.on('close', () => resolve());
      s.on('error', () => resolve());
    });
    await app.close();
    const refused = lines.find((l) => l.includes('rawPacket'));
    assert.ok(refused !== undefined, 'the refused request was logged');
    assert.equal(JSON.parse(refused).err.rawPacket, '[redacted]');
  });

  it('without a token, serves loopback Host headers only (no DNS rebinding); probes and Host-less requests stay open', async () => {
    const state = createWorldState();
    const app = buildServer({ state, view: createFakeInspectionView({ state }), metrics: createControllerMetrics({ processMetrics: false }), listenHost: '127.0.0.1' });
    const get = async (url: string, host?: string) => (await app.inject({ url, headers: host === undefined ? {} : { host } })).statusCode;
    for (const host of ['localhost', 'localhost:8080', '127.0.0.1:8080', '127.3.4.5', '[::1]:8080', 'LOCALHOST:1']) assert.equal(await get('/api/v1/summary', host), 200, host);
    for (const host of ['rebind.attacker.example', 'rebind.attacker.example:8080', '10.0.0.1:8080', 'localhost.example.com', '[::2]:8080']) {
      const r = await app.inject({ url: '/api/v1/summary', headers: { host } });
      assert.equal(r.statusCode, 403, host);
      assert.equal(r.json().code, 'FA_ERR_HTTP_FORBIDDEN_HOST');
    }
    assert.equal(await get('/metrics', 'rebind.attacker.example'), 403);
    assert.equal(await get('/healthz', 'rebind.attacker.example'), 200);
    assert.equal(await get('/readyz?verbose', 'rebind.attacker.example'), 200);
    await app.close();
  });

  it('a controller refused for lack of a token off loopback is refused before it starts (no kubeconfig read)', async () => {
    await assert.rejects(
      startControllerWithApi({ kubeconfig: { path: '/nonexistent/kubeconfig' }, listen: '0.0.0.0:0' }),
      (err: unknown) => isFleetError(err) && err.code === 'FA_ERR_FLAG_INVALID' && /--http-token/.test(err.message),
    );
  });

  it('recognises loopback hosts', () => {
    for (const h of ['127.0.0.1', '127.9.9.9', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost']) assert.ok(isLoopbackHost(h), h);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', '::ffff:10.0.0.1', '128.0.0.1', 'localhost.example.com']) assert.ok(!isLoopbackHost(h), h);
  });
});
