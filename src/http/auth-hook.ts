/**
 * Bearer-token authentication of the inspection API. Off loopback, everything but the probes
 * (/healthz, /readyz) and the dashboard's shell, assets and login (/, /ui/*, /api/v1/session:
 * they hold no fleet data) requires `Authorization: Bearer <--http-token>` or a valid dashboard
 * session cookie (session-table.ts), and the server refuses to be built without a token. On
 * loopback no token is needed unless one is configured, in which case it is required too (a
 * configured token is never ignored).
 *
 * The token is compared in constant time (SHA-256 digests, so lengths do not leak either) and
 * never logged or echoed.
 *
 * Without a token (loopback only), a request whose Host header names anything but a loopback
 * address is refused: a web page the operator visits could otherwise reach the API through DNS
 * rebinding (its own name resolved to 127.0.0.1) and read node, volume and pod names.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fleetError } from '../errors/index.js';
import { cookieValue, SESSION_COOKIE, type SessionTable } from './session-table.js';

/** Paths reachable without a token or a Host check: liveness and readiness probes. */
const OPEN_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

/** Paths reachable without credentials (the Host check still applies): the dashboard shell, its assets and its login. */
function isPublicDashboardPath(path: string): boolean {
  return path === '/' || path === '/api/v1/session' || path.startsWith('/ui/');
}

/** What the session route needs from the authentication installed on the app. */
export interface Authenticator {
  /** False without a configured token (loopback only): nothing to log in to. */
  readonly tokenRequired: boolean;
  /** Compares `given` with the token in constant time; false when no token is configured. */
  tokenMatches(given: string): boolean;
  readonly sessions: SessionTable;
}

/** 127.0.0.0/8, ::1, ::ffff:127.x, `localhost` (with or without IPv6 brackets). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) !== 6) return false;
  // The URL parser writes IPv6 in canonical form: ::1, and ::ffff:7fxx:xxxx for 127.0.0.0/8.
  const canonical = new URL(`http://[${h}]/`).hostname;
  return canonical === '[::1]' || canonical.startsWith('[::ffff:7f');
}

/** Throws FA_ERR_FLAG_INVALID when `listenHost` is not loopback and no token is given. */
export function requireTokenOffLoopback(listenHost: string, httpToken: string | undefined): void {
  if ((httpToken === undefined || httpToken === '') && !isLoopbackHost(listenHost)) {
    throw fleetError('FA_ERR_FLAG_INVALID', `--http-token is required when --listen is not a loopback address (host ${listenHost})`);
  }
}

/** Installs the check; throws as {@link requireTokenOffLoopback} does. */
export function installAuth(app: FastifyInstance, opts: { listenHost: string; httpToken?: string; sessions: SessionTable }): Authenticator {
  requireTokenOffLoopback(opts.listenHost, opts.httpToken);
  const token = opts.httpToken === '' ? undefined : opts.httpToken;
  const { sessions } = opts;
  if (token === undefined) {
    app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
      const host = request.headers.host;
      // No Host (HTTP/1.0, a probe): not a browser, so not a rebinding.
      if (host === undefined || OPEN_PATHS.has(pathOf(request.url)) || isLoopbackHost(hostOf(host))) return done();
      done(fleetError('FA_ERR_HTTP_FORBIDDEN_HOST', 'without --http-token only loopback Host headers are served (localhost, 127.0.0.0/8, [::1])'));
    });
    return { tokenRequired: false, tokenMatches: () => false, sessions };
  }
  const expected = digest(token);
  const tokenMatches = (given: string) => timingSafeEqual(digest(given), expected);
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const path = pathOf(request.url);
    if (OPEN_PATHS.has(path) || isPublicDashboardPath(path)) return done();
    const given = bearer(request.headers.authorization);
    if (given !== undefined && tokenMatches(given)) return done();
    if (sessions.valid(cookieValue(request.headers.cookie, SESSION_COOKIE))) return done();
    reply.header('www-authenticate', 'Bearer realm="fleet-attach"');
    done(fleetError('FA_ERR_HTTP_UNAUTHORIZED', 'missing or invalid bearer token or session'));
  });
  return { tokenRequired: true, tokenMatches, sessions };
}

/** The host of a Host header, without its port (`[::1]:8080` → `[::1]`). */
function hostOf(header: string): string {
  const m = /^(\[[^\]]*\]|[^:]*)(?::\d*)?$/.exec(header);
  return m === null ? header : m[1]!;
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

function bearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^Bearer +(\S+) *$/i.exec(header);
  return m === null ? undefined : m[1];
}

function digest(s: string): Buffer {
  return hash('sha256', s, 'buffer');
}
