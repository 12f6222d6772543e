import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { createWorldState } from '../../src/cache/world-state.js';
import { buildServer, listenServer, parseListen } from '../../src/http/server.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import { createFakeInspectionView } from './fake-inspection-view.js';
import { createFleet } from './fleet-fixture.js';

describe('health routes', () => {
  it('/healthz answers ok', async () => {
    const f = createFleet();
    const r = await f.get('/healthz');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { status: 'ok' });
    await f.close();
  });

  it('/readyz says the role when ready, and 503 with the reason when not', async () => {
    const f = createFleet();
    f.view.setReadiness({ ready: true, role: 'leader' });
    assert.deepEqual((await f.get('/readyz')).json, { ready: true, role: 'leader' });

    f.view.setReadiness({ ready: false, role: 'standby', reason: 'waiting for the pods watch to sync' });
    const r = await f.get('/readyz');
    assert.equal(r.status, 503);
    assert.deepEqual(r.json, { code: 'FA_ERR_HTTP_NOT_READY', message: 'waiting for the pods watch to sync', role: 'standby' });
    await f.close();
  });

  it('unknown routes are 404 {code, message}', async () => {
    const f = createFleet();
    const r = await f.get('/api/v2/nope');
    assert.equal(r.status, 404);
    assert.equal(r.json.code, 'FA_ERR_HTTP_NOT_FOUND');
    assert.match(r.json.message, /\/api\/v2\/nope/);
    await f.close();
  });
});

describe('listenServer', () => {
  it('listens on 127.0.0.1:0, logs the bound URL and serves', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
    const state = createWorldState();
    const app = buildServer({
      state, view: createFakeInspectionView({ state }), metrics: createControllerMetrics({ processMetrics: false }),
      listenHost: '127.0.0.1', logger: pino({ level: 'info' }, sink),
    });
    try {
      const url = await listenServer(app, '127.0.0.1:0');
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.ok(lines.some((l) => l.includes(`listening on ${url}`)), lines.join(''));
      const res = await fetch(`${url}/healthz`);
      assert.equal(res.status, 200);
    } finally {
      await app.close();
    }
  });

  it('parses host:port and rejects the rest naming --listen', () => {
    assert.deepEqual(parseListen('127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
    assert.deepEqual(parseListen('[::1]:0'), { host: '::1', port: 0 });
    assert.deepEqual(parseListen('localhost:9'), { host: 'localhost', port: 9 });
    for (const bad of ['8080', '127.0.0.1', '127.0.0.1:99999', '::1:80', 'a:b']) {
      assert.throws(() => parseListen(bad), (e: Error & { code?: string }) => e.code === 'FA_ERR_FLAG_INVALID' && /--listen/.test(e.message), bad);
    }
  });
});
