import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { buildServer } from '../../src/http/server.js';
import { createSessionTable, cookieValue } from '../../src/http/session-table.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import { createFakeInspectionView } from './fake-inspection-view.js';

const TOKEN = 's3cret-token-value';

function server(opts: { listenHost?: string; httpToken?: string } = {}) {
  const state = createWorldState();
  return buildServer({
    state, view: createFakeInspectionView({ state }), metrics: createControllerMetrics({ processMetrics: false }),
    listenHost: opts.listenHost ?? '0.0.0.0', httpToken: 'httpToken' in opts ? opts.httpToken : TOKEN,
  });
}

function login(app: ReturnType<typeof server>, token: string) {
  return app.inject({ method: 'POST', url: '/api/v1/session', payload: { token } });
}

/** The `name=value` part of a Set-Cookie header. */
function cookieOf(setCookie: unknown): string {
  return String(setCookie).split(';')[0]!;
}

describe('dashboard session', () => {
  it('exchanges the token for an HttpOnly, SameSite=Strict, Path=/ session cookie', async () => {
    const app = server();
    const r = await login(app, TOKEN);
    assert.equal(r.statusCode, 200);
    assert.deepEqual(r.json(), { tokenRequired: true, authenticated: true });
    const set = String(r.headers['set-cookie']);
    const attrs = set.split(';').map((a) => a.trim());
    assert.match(attrs[0]!, /^fa_session=[A-Za-z0-9_-]{43}$/);
    assert.ok(attrs.includes('HttpOnly'), set);
    assert.ok(attrs.includes('SameSite=Strict'), set);
    assert.ok(attrs.includes('Path=/'), set);
    assert.ok(attrs.includes(`Max-Age=${12 * 3600}`), set);
    assert.ok(!set.includes(TOKEN));
    assert.equal(r.headers['cache-control'], 'no-store');
    // Each login gets its own random id.
    assert.notEqual(cookieOf((await login(app, TOKEN)).headers['set-cookie']), attrs[0]);
    await app.close();
  });

  it('a wrong token gets 401 JSON {code, message} and no cookie', async () => {
    const app = server();
    for (const token of ['wrong', `${TOKEN}x`, TOKEN.slice(1)]) {
      const r = await login(app, token);
      assert.equal(r.statusCode, 401, token);
      assert.deepEqual(Object.keys(r.json()).sort(), ['code', 'message']);
      assert.equal(r.json().code, 'FA_ERR_HTTP_UNAUTHORIZED');
      assert.equal(r.headers['set-cookie'], undefined);
      assert.ok(!r.body.includes(TOKEN));
    }
    assert.equal((await app.inject({ method: 'POST', url: '/api/v1/session', payload: {} })).statusCode, 400);
    await app.close();
  });

  it('the API accepts the cookie as it accepts the bearer token, and refuses without either', async () => {
    const app = server();
    const cookie = cookieOf((await login(app, TOKEN)).headers['set-cookie']);
    for (const url of ['/api/v1/summary', '/api/v1/nodes', '/api/v1/conflicts', '/metrics']) {
      assert.equal((await app.inject({ url, headers: { cookie } })).statusCode, 200, url);
      assert.equal((await app.inject({ url, headers: { cookie: `other=1; ${cookie}` } })).statusCode, 200, url);
      assert.equal((await app.inject({ url, headers: { authorization: `Bearer ${TOKEN}` } })).statusCode, 200, url);
      const none = await app.inject({ url });
      assert.equal(none.statusCode, 401, url);
      assert.equal(none.json().code, 'FA_ERR_HTTP_UNAUTHORIZED');
      assert.equal((await app.inject({ url, headers: { cookie: 'fa_session=forged' } })).statusCode, 401, url);
    }
    const s = await app.inject({ url: '/api/v1/session', headers: { cookie } });
    assert.deepEqual(s.json(), { tokenRequired: true, authenticated: true });
    assert.deepEqual((await app.inject({ url: '/api/v1/session' })).json(), { tokenRequired: true, authenticated: false });
    await app.close();
  });

  it('logout ends the session and clears the cookie', async () => {
    const app = server();
    const cookie = cookieOf((await login(app, TOKEN)).headers['set-cookie']);
    const other = cookieOf((await login(app, TOKEN)).headers['set-cookie']);
    const out = await app.inject({ method: 'DELETE', url: '/api/v1/session', headers: { cookie } });
    assert.equal(out.statusCode, 200);
    assert.match(String(out.headers['set-cookie']), /^fa_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0/);
    assert.equal((await app.inject({ url: '/api/v1/summary', headers: { cookie } })).statusCode, 401);
    // Another browser's session is untouched.
    assert.equal((await app.inject({ url: '/api/v1/summary', headers: { cookie: other } })).statusCode, 200);
    await app.close();
  });

  it('without a token (loopback) there is nothing to log in to', async () => {
    const app = server({ listenHost: '127.0.0.1', httpToken: undefined });
    assert.deepEqual((await app.inject({ url: '/api/v1/session' })).json(), { tokenRequired: false, authenticated: true });
    const r = await login(app, 'anything');
    assert.deepEqual(r.json(), { tokenRequired: false, authenticated: true });
    assert.equal(r.headers['set-cookie'], undefined);
    await app.close();
  });
});

describe('session table', () => {
  it('expires sessions and stays bounded, dropping the oldest', () => {
    let now = 1_000;
    const t = createSessionTable({ ttlMs: 60_000, max: 3, now: () => now });
    const a = t.create().id;
    const b = t.create().id;
    assert.ok(t.valid(a) && t.valid(b));
    now += 60_000;
    assert.ok(!t.valid(a), 'expired');
    const ids = [t.create().id, t.create().id, t.create().id, t.create().id];
    assert.equal(t.size(), 3);
    assert.ok(!t.valid(ids[0]), 'oldest dropped');
    assert.ok(ids.slice(1).every((id) => t.valid(id)));
    assert.ok(!t.valid(undefined) && !t.valid('') && !t.valid('x'.repeat(500)));
  });

  it('reads one cookie out of a Cookie header', () => {
    assert.equal(cookieValue('a=1; fa_session=xyz; b=2', 'fa_session'), 'xyz');
    assert.equal(cookieValue('fa_sessionx=1', 'fa_session'), undefined);
    assert.equal(cookieValue(undefined, 'fa_session'), undefined);
  });
});
