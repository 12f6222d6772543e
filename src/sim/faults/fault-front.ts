/**
 * The fault front: an HTTP(S) server in front of the simulated API server (which then listens
 * on a loopback port) that injects the request faults of a {@link FaultInjector} and serves
 * the admin endpoint. It exists because some faults need the connection itself: cutting a
 * watch stream that is already open, answering a write with an error after it was committed,
 * and a 429 with a `Retry-After` header.
 *
 * Admin endpoint, `Authorization: Bearer <simulator token>` required:
 *   GET  /fleet-attach/faults   → {"spec": "<canonical spec>", "counts": {kind: n}}
 *   POST /fleet-attach/faults   body: a spec (text/plain) or {"spec": "..."} (application/json);
 *                               replaces the spec at once; 400 with a Status naming the bad item.
 *
 * Only resource requests from authenticated clients get faults (discovery, health and
 * unauthenticated requests pass through untouched); everything else is forwarded byte for byte.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { isFleetError } from '../../errors/index.js';
import { logger } from '../../log/logger.js';
import { createRequestAuth } from '../server/auth.js';
import { apiVerb } from '../server/api-verb.js';
import type { RequestFacts } from '../server/faults.js';
import { answeringErrors, createHttpListener, responseGone, splitUrl } from '../server/http-listener.js';
import { mediaType, readBody, readBytes } from '../server/request-body.js';
import { parseRoute } from '../server/route.js';
import { ApiError, badRequest, methodNotAllowed, sendJson, sendStatus, statusObject } from '../server/status.js';
import type { TlsMaterial } from '../server/tls.js';
import type { FaultInjector, RequestFault } from './fault-injector.js';
import { formatFaultSpec } from './fault-spec.js';

export const FAULTS_ADMIN_PATH = '/fleet-attach/faults';

export interface FaultFrontOptions {
  /** The API server requests are forwarded to (plain HTTP). */
  backend: { host: string; port: number };
  /** Serving certificate and key; undefined serves plain HTTP. */
  tls?: TlsMaterial;
  /** The simulator's bearer token (admin endpoint, and who gets faults). */
  token: string;
  injector: FaultInjector;
}

export interface FaultFront {
  /** Listens on host:port (0 picks a free port); resolves to the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** Watch streams open through the front. */
  openWatches(): number;
  /** Cuts every stream, closes every connection and stops listening. */
  close(): Promise<void>;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade'];
const MAX_ADMIN_BODY = 64 << 10;
const log = logger('sim-faults');

export function createFaultFront(opts: FaultFrontOptions): FaultFront {
  const { injector, backend } = opts;
  const auth = createRequestAuth(opts.token);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256 });
  const watches = new Set<() => void>();


  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const { path, query } = splitUrl(url);
    if (path === FAULTS_ADMIN_PATH) return admin(req, res);
    const route = parseRoute(path);
    const method = req.method ?? 'GET';
    const verb = route.kind === 'resource' ? apiVerb(method, route, new URLSearchParams(query)) : undefined;
    if (route.kind !== 'resource' || verb === undefined || !auth.authenticated(req)) return forward(req, res, false);
    const facts: RequestFacts = { method, path: url, verb, resource: route.info.name, namespace: route.namespace, name: route.name, subresource: route.subresource };
    const delay = injector.latencyMs();
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    const fault = injector.decide(facts);
    if (!fault) return forward(req, res, verb === 'watch');
    if (fault.kind === 'gone' && verb === 'watch') {
      req.resume();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return void res.end(`{"type":"ERROR","object":${JSON.stringify(statusObject(410, 'Expired', fault.error.message))}}\n`);
    }
    if (fault.afterServing) return forwardThenFail(req, res, fault);
    req.resume();
    sendFault(res, fault);
  }

  async function admin(req: IncomingMessage, res: ServerResponse): Promise<void> {
    auth.check(req);
    if (req.method === 'POST' || req.method === 'PUT') {
      const body = await readBody(req, MAX_ADMIN_BODY);
      let text = body;
      if (mediaType(req.headers['content-type']) === 'application/json') {
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          throw badRequest('the body must be {"spec": "<fault spec>"} or a spec as text/plain');
        }
        const spec = (parsed as { spec?: unknown } | null)?.spec;
        if (typeof spec !== 'string') throw badRequest('the body must be {"spec": "<fault spec>"}');
        text = spec;
      }
      try {
        injector.set(text);
      } catch (err) {
        if (isFleetError(err)) throw badRequest(err.message);
        throw err;
      }
      log.info({ spec: formatFaultSpec(injector.spec()) }, 'fault spec changed');
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw methodNotAllowed();
    }
    sendJson(res, 200, JSON.stringify({ spec: formatFaultSpec(injector.spec()), counts: injector.counts() }));
  }

  /**
   * Sends one request to the backend and calls `onResponse` with its answer. The body is read
   * first, so that a request that met a keep-alive socket the backend was just closing (reset
   * before any answer) can be sent again once. Failures after the client went away stay quiet.
   */
  async function toBackend(req: IncomingMessage, res: ServerResponse, onResponse: (ur: IncomingMessage) => void): Promise<void> {
    const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await readBytes(req);
    const headers: http.OutgoingHttpHeaders = {};
    // An HTTP/2 request's pseudo-headers (:method, :path, :authority) have no HTTP/1.1 form.
    for (const [k, v] of Object.entries(req.headers)) if (k[0] !== ':' && !HOP_BY_HOP.includes(k)) headers[k] = v;
    headers.host = `${backend.host}:${backend.port}`;
    // The backend knows only the token: a client the front authenticated by certificate is
    // vouched for with it, as kube-apiserver's front proxies vouch for theirs.
    if (auth.byCertificate(req)) headers.authorization = `Bearer ${opts.token}`;
    if (body) headers['content-length'] = body.length;
    let current: http.ClientRequest | undefined;
    let answered: IncomingMessage | undefined;
    res.on('close', () => {
      // A client that goes away ends the backend request too (a watch would otherwise live on).
      if (!answered?.complete) current?.destroy();
    });
    const send = (retry: boolean) => {
      const up = http.request({ host: backend.host, port: backend.port, method: req.method, path: req.url, headers, agent });
      current = up;
      up.on('response', (ur) => {
        answered = ur;
        onResponse(ur);
      });
      up.on('error', (err: NodeJS.ErrnoException) => {
        if (responseGone(res) || res.writableEnded) return;
        if (retry && up.reusedSocket && answered === undefined && err.code === 'ECONNRESET') return send(false);
        backendFailed(res, err);
      });
      up.end(body);
    };
    send(true);
  }

  async function forward(req: IncomingMessage, res: ServerResponse, watch: boolean): Promise<void> {
    await toBackend(req, res, (ur) => {
      const headers: http.OutgoingHttpHeaders = { ...ur.headers };
      for (const h of HOP_BY_HOP) delete headers[h];
      res.writeHead(ur.statusCode ?? 502, headers);
      ur.pipe(res);
      if (watch && ur.statusCode === 200) track(res, ur);
    });
  }

  /** Serves the request, discards the answer, then fails it. */
  async function forwardThenFail(req: IncomingMessage, res: ServerResponse, fault: RequestFault): Promise<void> {
    await toBackend(req, res, (ur) => {
      ur.resume();
      ur.on('end', () => sendFault(res, fault));
    });
  }

  /** Arms the drop of one watch stream, if the spec asks for drops. */
  function track(res: ServerResponse, ur: IncomingMessage): void {
    const drop = injector.watchDrop();
    const cut = () => {
      clearTimeout(timer);
      watches.delete(cut);
      ur.unpipe(res);
      ur.destroy();
      if (drop?.abrupt) res.destroy();
      else res.end();
    };
    const timer = drop
      ? setTimeout(() => {
          injector.count('drop-watch');
          cut();
        }, drop.afterMs)
      : undefined;
    watches.add(cut);
    res.on('close', () => {
      clearTimeout(timer);
      watches.delete(cut);
    });
  }

  const server = createHttpListener(opts.tls, answeringErrors(serve, log, 'fault front request failed'));

  return {
    async listen(host, port) {
      return (await server.listen(host, port)).port;
    },
    openWatches: () => watches.size,
    close() {
      for (const cut of [...watches]) cut();
      return server.close().then(() => agent.destroy());
    },
  };
}

function sendFault(res: ServerResponse, fault: RequestFault): void {
  const e = fault.error;
  const extra = fault.retryAfterSeconds !== undefined ? { 'Retry-After': String(fault.retryAfterSeconds) } : undefined;
  sendJson(res, e.code, JSON.stringify(statusObject(e.code, e.reason, e.message, e.details)), extra);
}

function backendFailed(res: ServerResponse, err: Error): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  log.warn({ err }, 'backend request failed');
  sendStatus(res, new ApiError(503, 'ServiceUnavailable', `the API server behind the fault front is unavailable: ${err.message}`));
}
