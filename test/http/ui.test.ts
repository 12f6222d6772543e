import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createWorldState } from '../../src/cache/world-state.js';
import { CONTENT_SECURITY_POLICY } from '../../src/http/routes/ui.js';
import { buildServer } from '../../src/http/server.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import { createFakeInspectionView } from './fake-inspection-view.js';

const TOKEN = 's3cret-token-value';
const JS = `console.log(${JSON.stringify('x'.repeat(4000))});\n`;

function withUi(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'fa-ui-'));
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  const state = createWorldState();
  const app = buildServer({
    state, view: createFakeInspectionView({ state }), metrics: createControllerMetrics({ processMetrics: false }),
    listenHost: '0.0.0.0', httpToken: TOKEN, uiDir: dir,
  });
  return { app, close: async () => { await app.close(); rmSync(dir, { recursive: true, force: true }); } };
}

const SHELL = '<!doctype html><link rel="icon" href="data:,"><script type="module" src="/ui/app.js"></script>';

describe('dashboard shell and assets', () => {
  it('serve without credentials, with their content type, the CSP and nosniff', async () => {
    const { app, close } = withUi({ 'index.html': SHELL, 'app.js': JS, 'app.css': 'body{}', 'app.js.map': '{}' });
    const cases: Array<[string, string, string]> = [
      ['/', 'text/html; charset=utf-8', SHELL],
      ['/ui/index.html', 'text/html; charset=utf-8', SHELL],
      ['/ui/app.js', 'text/javascript; charset=utf-8', JS],
      ['/ui/app.css', 'text/css; charset=utf-8', 'body{}'],
      ['/ui/app.js.map', 'application/json; charset=utf-8', '{}'],
    ];
    for (const [url, type, body] of cases) {
      const r = await app.inject({ url });
      assert.equal(r.statusCode, 200, url);
      assert.equal(r.headers['content-type'], type, url);
      assert.equal(r.body, body, url);
      assert.equal(r.headers['content-security-policy'], CONTENT_SECURITY_POLICY, url);
      assert.equal(r.headers['x-content-type-options'], 'nosniff', url);
      assert.match(String(r.headers.etag), /^"[A-Za-z0-9_-]+"$/, url);
      assert.equal(r.headers['cache-control'], 'no-cache', url);
    }
    assert.equal(CONTENT_SECURITY_POLICY, "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
    // The API behind the page still needs credentials.
    assert.equal((await app.inject({ url: '/api/v1/summary' })).statusCode, 401);
    await close();
  });

  it('revalidates by ETag and sends gzip to browsers that accept it', async () => {
    const { app, close } = withUi({ 'index.html': SHELL, 'app.js': JS });
    const first = await app.inject({ url: '/ui/app.js' });
    const again = await app.inject({ url: '/ui/app.js', headers: { 'if-none-match': String(first.headers.etag) } });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    const gz = await app.inject({ url: '/ui/app.js', headers: { 'accept-encoding': 'gzip, deflate, br' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gz.headers.vary, 'accept-encoding');
    assert.ok(gz.rawPayload.length < JS.length / 4);
    assert.equal(gunzipSync(gz.rawPayload).toString(), JS);
    await close();
  });

  it('serves only the files of the folder, by name', async () => {
    const { app, close } = withUi({ 'index.html': SHELL, 'app.js': JS });
    for (const url of ['/ui/missing.js', '/ui/..%2Fpackage.json', '/ui/%2E%2E%2Fetc%2Fpasswd', '/ui/.hidden.js', '/ui/app.ts']) {
      const r = await app.inject({ url });
      assert.equal(r.statusCode, 404, url);
      assert.equal(r.json().code, 'FA_ERR_HTTP_NOT_FOUND', url);
      assert.equal(r.headers['content-security-policy'], CONTENT_SECURITY_POLICY, url);
    }
    await close();
  });

  it('without a token, still answer loopback Host headers only (DNS rebinding)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fa-ui-'));
    writeFileSync(join(dir, 'index.html'), SHELL);
    const state = createWorldState();
    const app = buildServer({
      state, view: createFakeInspectionView({ state }), metrics: createControllerMetrics({ processMetrics: false }),
      listenHost: '127.0.0.1', uiDir: dir,
    });
    assert.equal((await app.inject({ url: '/', headers: { host: '127.0.0.1:8080' } })).statusCode, 200);
    const foreign = await app.inject({ url: '/', headers: { host: 'attacker.example:8080' } });
    assert.equal(foreign.statusCode, 403);
    assert.equal(foreign.json().code, 'FA_ERR_HTTP_FORBIDDEN_HOST');
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('says how to build the assets when build/ui is missing', async () => {
    const state = createWorldState();
    const app = buildServer({
      state, view: createFakeInspectionView({ state }), metrics: createControllerMetrics({ processMetrics: false }),
      listenHost: '127.0.0.1', uiDir: join(tmpdir(), 'fa-ui-does-not-exist'),
    });
    const r = await app.inject({ url: '/' });
    assert.equal(r.statusCode, 503);
    assert.equal(r.json().code, 'FA_ERR_HTTP_UI_NOT_BUILT');
    assert.match(r.json().message, /npm run build:ui/);
    await app.close();
  });

  it('the built shell loads only same-origin assets and nothing inline', async () => {
    const { readFileSync } = await import('node:fs');
    const html = readFileSync(new URL('../../ui/index.html', import.meta.url), 'utf8');
    assert.match(html, /<link rel="icon" href="data:,">/);
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'inline script');
    assert.doesNotMatch(html, /<style|\sstyle=/, 'inline style');
    for (const m of html.matchAll(/(?:src|href)="([^"]+)"/g)) assert.match(m[1]!, /^(\/ui\/|data:,$)/, m[1]);
  });
});
