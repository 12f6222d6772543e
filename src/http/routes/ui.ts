/**
 * The dashboard's page shell (`GET /`) and its bundled assets (`GET /ui/<file>`), read from
 * build/ui (scripts/build-ui.js). They hold no fleet data, so the auth hook serves them without
 * credentials; the data comes from the API, which needs them.
 *
 * Every answer carries the Content-Security-Policy below (no inline script or style, nothing
 * from another origin: the page cannot load a CDN even by mistake) and `nosniff`. Files are
 * served from an in-memory copy keyed by the names build/ui holds — a request names a file,
 * never a path — and revalidated by ETag (`no-cache`), so a rebuilt bundle is picked up at the
 * next load without a restart (the copy is refreshed when the file's mtime changes). A gzip copy
 * made once per file is sent to browsers that accept it: the first load's budget is counted on
 * the wire.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { fleetError } from '../../errors/index.js';

export const CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
  + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  map: 'application/json; charset=utf-8',
};

/** build/ui of the checkout or the installed package (src/http/routes and dist/http/routes alike). */
export const DEFAULT_UI_DIR = new URL('../../../build/ui/', import.meta.url).pathname;

export interface UiRouteDeps {
  /** Directory of index.html, app.js, app.css; default {@link DEFAULT_UI_DIR}. */
  readonly uiDir?: string;
}

interface Asset { body: Buffer; gzip: Buffer | undefined; etag: string; type: string; mtimeMs: number }

export const uiRoutes: FastifyPluginCallback<UiRouteDeps> = (app, deps, done) => {
  const dir = deps.uiDir ?? DEFAULT_UI_DIR;
  const cache = new Map<string, Asset>();

  /** The asset `name` (a bare file name in `dir`), or undefined when there is none. */
  function load(name: string): Asset | undefined {
    const type = CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)];
    if (type === undefined || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) return undefined;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (cause) {
      throw fleetError('FA_ERR_HTTP_UI_NOT_BUILT', `cannot read ${dir} (run npm run build:ui)`, { cause });
    }
    if (!names.includes(name)) return undefined;
    const path = dir + (dir.endsWith('/') ? '' : '/') + name;
    const mtimeMs = statSync(path).mtimeMs;
    const cached = cache.get(name);
    if (cached !== undefined && cached.mtimeMs === mtimeMs) return cached;
    const body = readFileSync(path);
    const gzip = body.length > 1024 ? gzipSync(body, { level: 9 }) : undefined;
    const asset = { body, gzip, type, mtimeMs, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    cache.set(name, asset);
    return asset;
  }

  function send(request: FastifyRequest, reply: FastifyReply, name: string): FastifyReply {
    const asset = load(name);
    if (asset === undefined) {
      if (name === 'index.html') throw fleetError('FA_ERR_HTTP_UI_NOT_BUILT', `${dir}index.html missing (run npm run build:ui)`);
      throw fleetError('FA_ERR_HTTP_NOT_FOUND', `no dashboard asset ${name}`);
    }
    reply.header('etag', asset.etag).header('cache-control', 'no-cache').header('vary', 'accept-encoding');
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    reply.type(asset.type);
    if (asset.gzip !== undefined && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
      return reply.header('content-encoding', 'gzip').send(asset.gzip);
    }
    return reply.send(asset.body);
  }

  app.addHook('onSend', (_request, reply, payload, next) => {
    reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    next(null, payload);
  });
  const config = { openapi: false };
  app.get('/', { config }, (request, reply) => send(request, reply, 'index.html'));
  app.get<{ Params: { file: string } }>('/ui/:file', { config }, (request, reply) => send(request, reply, request.params.file));
  done();
};
