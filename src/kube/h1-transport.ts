/**
 * The hot calls over HTTP/1.1 on undici's connection pool: raw-write.ts sends them here when
 * HTTP/2 is switched off (`--kube-api-http2=false`) or the server does not offer it, and no proxy
 * is configured.
 *
 * Why undici and not Node's `https.request`: side by side, Node's HTTP/1.1 client cost 2.5–3× the
 * client CPU per small call (ClientRequest, IncomingMessage and the agent's bookkeeping, against
 * undici's parser and one handler object here). What HTTP/1.1 trades against HTTP/2: Node 20's
 * HTTP/2 makes every received header value outside HPACK's static table an old-space external
 * string that only a full collection frees, one by one, on both sides of the connection, while
 * HTTP/1.1 costs both sides a TLS record and a socket write per call. HTTP/2 stays the default
 * (docs/performance.md, API writes).
 *
 * Contract: one pool per cluster and TLS material (kube-config.ts caches it); a call is sent with
 * `dispatch` and settled exactly once: by its response, its error, its `timeoutMs` (the request is
 * aborted, the connection closed by undici) or its signal. A call still queued in the pool when it
 * times out is aborted as soon as it is given a connection.
 */
import { Pool, type Dispatcher } from 'undici';
import { httpError } from './raw-request.js';
import type { RawCall, RawResult } from './raw-write.js';

/** TLS material as `applyToHTTPSOptions` fills it (ca, cert, key, ...), passed to `tls.connect`. */
export type TlsMaterial = Record<string, unknown>;

/** A keep-alive pool of `connections` HTTP/1.1 connections to `origin` (scheme, host, port). */
export function createH1Pool(origin: string, tls: TlsMaterial, connections: number): Dispatcher {
  // The server may close an idle connection first: a call that meets a socket the server has
  // just closed fails with undici's SocketError, and the caller's backoff retries it.
  return new Pool(origin, { connections, pipelining: 1, connect: { ...tls }, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 });
}

/** The error a call past its `timeoutMs` rejects with (as an aborted fetch's). */
function timeoutError(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

/** The handle undici gives a dispatched request, through which it is aborted. */
type Controller = Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestStart']>>[0];

/**
 * Sends `call` to `path` (the server's prefix included) with `headers` (client-node's
 * authentication headers and the call's own). Settles as raw-write's `sendRaw` does.
 */
export function sendH1(pool: Dispatcher, call: RawCall, path: string, headers: Record<string, string | string[]>): Promise<RawResult> {
  return new Promise<RawResult>((resolve, reject) => {
    let settled = false;
    let controller: Controller | undefined;
    let status = 0;
    let retryAfter: string | null = null;
    let chunks: Buffer[] | undefined;
    const finish = () => {
      settled = true;
      if (timer) clearTimeout(timer);
      call.signal?.removeEventListener('abort', onAbort);
    };
    const fail = (err: unknown) => {
      if (settled) return;
      finish();
      controller?.abort(err instanceof Error ? err : new Error(String(err)));
      reject(err);
    };
    const onAbort = () => fail(call.signal?.reason ?? new DOMException('This operation was aborted', 'AbortError'));
    const timer = call.timeoutMs === undefined ? undefined : setTimeout(() => fail(timeoutError()), call.timeoutMs);
    if (call.signal) {
      if (call.signal.aborted) return onAbort();
      call.signal.addEventListener('abort', onAbort, { once: true });
    }
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        // Timed out or aborted while queued for a connection: never sent.
        if (settled) c.abort(timeoutError());
      },
      onResponseStart(_c, statusCode, h) {
        status = statusCode;
        const ok = status >= 200 && status <= 299;
        if (!ok) {
          const ra = h['retry-after'];
          retryAfter = typeof ra === 'string' ? ra : null;
        }
        // A drained 2xx body is read and dropped (the connection goes back to the pool only at
        // its end); everything else is kept to parse or to quote in the error.
        if (!ok || call.response === 'json') chunks = [];
      },
      onResponseData(_c, chunk) {
        chunks?.push(chunk);
      },
      onResponseEnd() {
        if (settled) return;
        const ok = status >= 200 && status <= 299;
        try {
          if (ok && call.response === 'drain') {
            finish();
            return resolve({ status, body: undefined });
          }
          const text = chunks!.length === 1 ? chunks![0].toString('utf8') : Buffer.concat(chunks!).toString('utf8');
          if (!ok) throw httpError(call.method, call.path, status, retryAfter, text);
          const body = JSON.parse(text) as unknown;
          finish();
          resolve({ status, body });
        } catch (err) {
          fail(err);
        }
      },
      onResponseError(_c, err) {
        fail(err);
      },
    };
    try {
      pool.dispatch({ method: call.method, path, headers, body: call.body ?? null }, handler);
    } catch (err) {
      fail(err);
    }
  });
}
