/**
 * Raw single-object calls for the controller's hot path (VolumeAttachment create and delete,
 * the live Node read, the Node status merge patch), bypassing the generated client.
 *
 * Per call the generated client serialises the body through `ObjectSerializer`, parses MIME
 * types, runs its middleware observables and deserialises the response into class instances
 * we project and drop; at fleet scale that is a measurable share of the controller's CPU.
 * client-node still does kubeconfig, authentication and TLS: `kc.applyToHTTPSOptions` (reused
 * for a second, `kc.hotRequestOptions`) gives the headers (bearer token, impersonation), basic
 * auth, the TLS material and the shared keep-alive agent. The request does not go through
 * node-fetch: its Request, Headers and body-stream objects cost ~1/3 of the client CPU of a
 * small call (bench/api-writes.bench.ts). A response is parsed once with JSON.parse, or not at
 * all when the caller ignores it.
 *
 * With `--kube-api-http2` and where the server offers it, the call goes over the cluster's one
 * HTTP/2 connection (h2-session.ts), as client-go's calls do; otherwise over HTTP/1.1 on undici's
 * connection pool (h1-transport.ts), or on the shared keep-alive agent behind a proxy.
 *
 * A response body is always read to its end, even when dropped: the keep-alive connection is
 * free for the next call only then.
 */
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type { H2Connection } from './h2-session.js';
import type { FleetKubeConfig } from './kube-config.js';
import { withLightAsyncBind } from './light-async-bind.js';
import { sendH1 } from './h1-transport.js';
import { httpError, ignoreLateError, readBody } from './raw-request.js';

const http2Constants = http2.constants;

export interface RawCall {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path from the server root, already escaped (see {@link pathSegment}). */
  path: string;
  /** Serialised request body; none when absent. */
  body?: string;
  /** Content-Type of `body` (default application/json). */
  contentType?: string;
  /** `json`: parse a 2xx body (resolved as `body`); `drain`: read and drop it (`body` undefined). */
  response: 'json' | 'drain';
  /** Aborts the request and the read of its body. */
  signal?: AbortSignal;
  /** Fails the call (request and body read) this many ms after it is sent; none when absent. */
  timeoutMs?: number;
}

/**
 * `call` with one attempt's timeout and signal, field by field: one hidden class for every call,
 * which `{ ...call, timeoutMs, signal }` would not give on Node 20 ({@link h2RequestOptions}).
 */
export function attemptCall(call: Omit<RawCall, 'signal' | 'timeoutMs'>, timeoutMs: number, signal: AbortSignal | undefined): RawCall {
  // Every field named: a field added to RawCall and not copied here fails to compile.
  const out: { [K in keyof Required<RawCall>]: RawCall[K] } = { method: call.method, path: call.path, body: call.body, contentType: call.contentType, response: call.response, signal, timeoutMs };
  return out;
}

/** The error a call past its `timeoutMs` rejects with (as an aborted fetch's). */
function timeoutError(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

/** `p`, or a TimeoutError after `ms` (no timer without `ms`). */
function withTimeout<T>(p: Promise<T>, ms: number | undefined): Promise<T> {
  if (ms === undefined) return p;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timeoutError()), ms);
    p.then((v) => {
      clearTimeout(timer);
      resolve(v);
    }, (err: unknown) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

export interface RawResult {
  status: number;
  body: unknown;
}

/** The parts of a server URL a request needs, parsed once per server string. */
interface Target {
  server: string;
  secure: boolean;
  hostname: string;
  port: string;
  /** The server URL's own path prefix (e.g. behind a proxy), without a trailing slash. */
  prefix: string;
}
let lastTarget: Target | undefined;

function targetOf(server: string): Target {
  if (lastTarget?.server === server) return lastTarget;
  const u = new URL(server);
  lastTarget = { server, secure: u.protocol === 'https:', hostname: u.hostname.replace(/^\[|\]$/g, ''), port: u.port, prefix: u.pathname.replace(/\/+$/, '') };
  return lastTarget;
}

/**
 * Sends one call. Rejects with {@link KubeHttpError} (status, Status reason and message,
 * Retry-After) on a non-2xx status, with the socket's error on a network failure, an AbortError
 * on abort, and with a SyntaxError when a 2xx `json` body does not parse.
 */
export async function sendRaw(kc: FleetKubeConfig, call: RawCall): Promise<RawResult> {
  const opts = await kc.hotRequestOptions();
  const t = targetOf(kc.server());
  const conn = kc.hotH2Connection();
  const ready = conn?.ready();
  if (conn && ready) return sendH2(conn, ready, call, t.prefix + call.path, opts);
  // No open session: the call's own timeout covers the wait for one too (a connect can take up
  // to H2_CONNECT_TIMEOUT_MS), and what it leaves is the request's.
  const t0 = performance.now();
  const session = conn && (await withTimeout(conn.session(), call.timeoutMs));
  if (conn && call.timeoutMs !== undefined) call = { ...call, timeoutMs: Math.max(1, call.timeoutMs - (performance.now() - t0)) };
  if (conn && session) return sendH2(conn, session, call, t.prefix + call.path, opts);
  const pool = kc.hotH1Pool();
  if (pool) return sendH1(pool, call, t.prefix + call.path, h1Headers(call, opts));
  const headers: http.OutgoingHttpHeaders = { ...(opts.headers as http.OutgoingHttpHeaders | undefined), Accept: 'application/json' };
  if (call.body !== undefined) {
    headers['Content-Type'] = call.contentType ?? 'application/json';
    headers['Content-Length'] = Buffer.byteLength(call.body);
  }
  opts.method = call.method;
  opts.hostname = t.hostname;
  if (t.port) opts.port = t.port;
  opts.path = t.prefix + call.path;
  opts.headers = headers;
  if (call.signal) opts.signal = call.signal;
  return new Promise<RawResult>((resolve, reject) => {
    // One timer per call, cleared when it settles; the socket is destroyed on expiry (the agent
    // replaces it), so a late response cannot be taken for the next call's.
    const timer = call.timeoutMs === undefined ? undefined : setTimeout(() => req.destroy(timeoutError()), call.timeoutMs);
    const done = (fn: () => void) => {
      if (timer) clearTimeout(timer);
      fn();
    };
    const fail = (err: unknown) => done(() => reject(err));
    const req = (t.secure ? https : http).request(opts, (res) => {
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status <= 299;
      res.once('error', fail);
      if (ok && call.response === 'drain') {
        res.once('end', () => done(() => resolve({ status, body: undefined })));
        res.resume();
        return;
      }
      readBody(res, undefined).then((text) => {
        const retryAfter = res.headers['retry-after'];
        if (!ok) throw httpError(call.method, call.path, status, typeof retryAfter === 'string' ? retryAfter : null, text);
        const body = JSON.parse(text) as unknown;
        done(() => resolve({ status, body }));
      }).catch(fail);
    });
    req.once('error', fail);
    req.end(call.body);
  });
}

/** A raw call's request headers; a repeated header is a list. */
type CallHeaders = Record<string, string | string[]>;

/** The headers of `call` over HTTP/1.1 on undici's pool, which manages the connection itself and refuses a request that sets its headers. */
function h1Headers(call: RawCall, opts: https.RequestOptions): CallHeaders {
  return addCallHeaders({ accept: 'application/json' }, call, opts, CONNECTION_HEADERS);
}

/**
 * Adds to `headers` what every raw call carries: client-node's headers (authentication,
 * impersonation) except those in `skip`, basic auth, and the body's type. A repeated header
 * stays a list (one field per value, as Impersonate-Group needs), never a joined string.
 */
function addCallHeaders(headers: CallHeaders, call: RawCall, opts: https.RequestOptions, skip: ReadonlySet<string>): CallHeaders {
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    const name = k.toLowerCase();
    if (v !== undefined && !skip.has(name)) headers[name] = Array.isArray(v) ? v.map(String) : String(v);
  }
  if (typeof opts.auth === 'string') headers.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  if (call.body !== undefined) headers['content-type'] = call.contentType ?? 'application/json';
  return headers;
}

/** Connection-specific headers: the transport's own business on HTTP/1.1, forbidden on HTTP/2. */
const CONNECTION_HEADERS: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);
/** Headers HTTP/2 forbids (connection-specific) or carries as a pseudo-header (host). */
const H1_ONLY_HEADERS: ReadonlySet<string> = new Set([...CONNECTION_HEADERS, 'host']);
/** `request()` errors after which the session takes no more streams. */
const SESSION_SPENT = new Set(['ERR_HTTP2_OUT_OF_STREAMS', 'ERR_HTTP2_GOAWAY_SESSION', 'ERR_HTTP2_INVALID_SESSION']);

/**
 * The options of one `session.request()`: every field Node reads, in one object literal.
 * - The stream priority Node fills in when absent (RFC 9113's default weight 16, no parent) is
 *   given up front: filling it into Node's own copy of the options cost Node 20 about a sixth of
 *   a request's client CPU in a loopback microbenchmark (20k POSTs, 64 at a time, one process per
 *   variant, alternated four times: median 41 vs 50 µs per request). It changes nothing on the wire.
 * - A whole literal, never `{ ...defaults, endStream, signal }`. On Node 20 (V8 11.3) every
 *   property added to an object made by a spread gets a fresh hidden class (a V8 map) that is
 *   never shared, and Node's `request()` copies the options by a spread and adds each priority
 *   field that is absent. At thousands of requests a second that made ~510k maps in a
 *   minute-long 10k-node run (`--log-maps`), old-space garbage that only a full collection
 *   frees: in one run, clearing them took 119 ms of a 276 ms final pause (`--trace-gc-nvp`). Literals,
 *   `Object.assign({}, …)` and `{ k, ...x }` (properties before the spread) share their classes.
 *   The call itself is built the same way ({@link attemptCall}).
 */
export function h2RequestOptions(endStream: boolean, signal: AbortSignal | undefined) {
  return { weight: http2Constants.NGHTTP2_DEFAULT_WEIGHT, parent: 0, exclusive: false, silent: false, endStream, signal };
}

/** `call` as one stream of `session`, with the headers and basic auth client-node put in `opts`. */
function sendH2(conn: H2Connection, session: http2.ClientHttp2Session, call: RawCall, path: string, opts: https.RequestOptions): Promise<RawResult> {
  // No Accept and no Content-Length: without Accept kube-apiserver answers JSON, and the end of
  // the stream delimits an HTTP/2 body. Every header value that is not in HPACK's static table
  // becomes a V8 external string on the receiving Node 20 HTTP/2 server, which its full
  // collections clear one by one: in the simulator that clearing was 87% of a 230 ms pause.
  const headers = addCallHeaders({ ':method': call.method, ':path': path }, call, opts, H1_ONLY_HEADERS);
  return new Promise<RawResult>((resolve, reject) => {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = withLightAsyncBind(() => session.request(headers, h2RequestOptions(call.body === undefined, call.signal)));
    } catch (err) {
      // A session that can take no more streams (closing, or out of stream ids) is not reused.
      if (SESSION_SPENT.has((err as NodeJS.ErrnoException).code ?? '')) session.destroy();
      return reject(err);
    }
    let settled = false;
    let timedOut = false;
    // One timer per call (no AbortController): on expiry the stream is cancelled alone and the
    // connection, which may be dead rather than slow, is checked (conn.suspect).
    const timer = call.timeoutMs === undefined ? undefined : setTimeout(() => {
      timedOut = true;
      fail(timeoutError());
      stream.close(http2Constants.NGHTTP2_CANCEL);
    }, call.timeoutMs);
    // Node 20 keeps a finished stream reachable until the next full collection, so whatever our
    // listeners hold (the call, its body, the parsed answer) would be copied by every scavenge
    // until then. Settling takes them off; the shared no-op stays for a late 'error'.
    const detach = () => {
      stream.removeListener('error', fail);
      stream.removeListener('close', onClose);
      stream.removeListener('response', onResponse);
      stream.removeListener('end', onDrained);
      if (stream.listenerCount('error') === 0) stream.on('error', ignoreLateError);
    };
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      detach();
      if (timedOut || call.signal?.aborted) conn.suspect(session);
      reject(err);
    };
    const succeed = (r: RawResult) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      detach();
      resolve(r);
    };
    // A stream that ended normally closes before the body's promise settles: only a close
    // without the end of the response is a failure.
    const onClose = () => {
      if (!stream.readableEnded) fail(new Error(`HTTP/2 stream closed before the response ended (code ${stream.rstCode ?? 0})`));
    };
    let drainedStatus = 0;
    const onDrained = () => succeed({ status: drainedStatus, body: undefined });
    const onResponse = (h: http2.IncomingHttpHeaders & http2.IncomingHttpStatusHeader) => {
      const status = Number(h[':status']);
      const ok = status >= 200 && status <= 299;
      if (ok && call.response === 'drain') {
        drainedStatus = status;
        stream.once('end', onDrained);
        stream.resume();
        return;
      }
      readBody(stream, undefined).then((text) => {
        const retryAfter = h['retry-after'];
        if (!ok) throw httpError(call.method, call.path, status, typeof retryAfter === 'string' ? retryAfter : null, text);
        succeed({ status, body: JSON.parse(text) as unknown });
      }).catch(fail);
    };
    stream.once('error', fail);
    stream.once('close', onClose);
    stream.once('response', onResponse);
    if (call.body !== undefined) stream.end(call.body);
  });
}

/** One path segment, escaped as the generated client escapes names. */
export function pathSegment(s: string): string {
  return encodeURIComponent(s);
}
