/**
 * The HTTP(S) server under both the simulated API server and the fault front: TLS when given
 * the material, HTTP/2 or HTTP/1.1 by ALPN (plain HTTP/1.1 otherwise; the cipher suite by the
 * server's preference), keep-alive longer than clients' idle timeouts, no
 * request timeout (watches stay open for as long as the client wants), and a bare 400 for a
 * request that does not parse. Errors a request handler throws are answered here.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import http2 from 'node:http2';
import type { Duplex } from 'node:stream';
import { DEFAULT_CIPHERS, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { installStreamTables } from '../../kube/h2-stream-table.js';
import { noteClientCertificate } from './auth.js';
import { isClientError, sendStatus } from './status.js';
import type { TlsMaterial } from './tls.js';

/**
 * A request listener running `serve`: what it throws is answered as a Status (or, once the
 * response has begun, cuts the connection), and logged unless the client caused it.
 */
export function answeringErrors(serve: (req: IncomingMessage, res: ServerResponse) => Promise<void>, log: Logger, what: string) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    serve(req, res).catch((err: unknown) => {
      if (!isClientError(err)) log.error({ err, method: req.method, url: req.url }, what);
      if (res.headersSent) res.destroy();
      else sendStatus(res, err);
    });
  };
}

/** The path and the query of a request URL. */
export function splitUrl(url = '/'): { path: string; query: string } {
  const qi = url.indexOf('?');
  return qi < 0 ? { path: url, query: '' } : { path: url.slice(0, qi), query: url.slice(qi + 1) };
}

/**
 * Node's default suites with TLS_AES_128_GCM_SHA256 first, chosen by the server's order: what
 * kube-apiserver (Go's TLS 1.3 server on AES hardware) negotiates, and about a third less CPU
 * per byte than the AES-256 a Node client would otherwise pick; a paged LIST is mostly TLS.
 */
const SERVER_CIPHERS = ['TLS_AES_128_GCM_SHA256', ...DEFAULT_CIPHERS.split(':').filter((c) => c !== 'TLS_AES_128_GCM_SHA256')].join(':');

/** HTTP/2 receive windows: 1 MiB per stream (Go's server default), 16 MiB per connection. */
const H2_STREAM_WINDOW = 1 << 20;
const H2_CONNECTION_WINDOW = 16 << 20;

export interface HttpListener {
  /** Listens on host:port (port 0 picks a free port); resolves to the bound address. */
  listen(host: string, port: number): Promise<AddressInfo>;
  /** Stops listening and cuts every connection, in-flight requests and open streams included. */
  close(): Promise<void>;
}

/**
 * With TLS, HTTP/2 and HTTP/1.1 on one port, chosen by ALPN as kube-apiserver offers them
 * (client-go and kubectl speak HTTP/2; client-node's fetch and watches HTTP/1.1). HTTP/2
 * requests reach `handler` through Node's compatibility API, so handlers use only what both
 * response kinds have: no connection-specific headers (chunked framing is Node's default for
 * an HTTP/1.1 body without a length) and {@link responseGone} rather than `res.destroyed`.
 */
export function createHttpListener(tls: TlsMaterial | undefined, handler: (req: IncomingMessage, res: ServerResponse) => void): HttpListener {
  const serve = handler as unknown as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;
  const server: http.Server | http2.Http2SecureServer = tls
    ? http2.createSecureServer({
      cert: tls.cert, key: tls.key, ciphers: SERVER_CIPHERS, honorCipherOrder: true, allowHTTP1: true, settings: { initialWindowSize: H2_STREAM_WINDOW },
      // A client certificate is asked for, never required: without one (or with one the CA did
      // not sign) the request must carry the bearer token (auth.ts).
      ...(tls.client ? { requestCert: true, rejectUnauthorized: false, ca: tls.ca } : {}),
    }, serve)
    : http.createServer(handler);
  const h1 = server as http.Server;
  h1.keepAliveTimeout = 65_000;
  h1.requestTimeout = 0;
  server.on('clientError', (_err: Error, socket: Duplex) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
  });
  // Request bodies are small, but many share the connection: its window as large as Go's server
  // allows. Finished streams should die young (src/kube/h2-stream-table.ts).
  if (tls) {
    server.on('session', (session: http2.ServerHttp2Session) => {
      session.setLocalWindowSize(H2_CONNECTION_WINDOW);
      installStreamTables(session);
    });
  }
  const sockets = new Set<Duplex>();
  server.on(tls ? 'secureConnection' : 'connection', (socket: Duplex) => {
    if (tls?.client) noteClientCertificate(socket as TLSSocket);
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    listen: (host, port) => new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve(server.address() as AddressInfo);
      });
    }),
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }),
  };
}

/** The response's stream or socket is gone (an HTTP/2 response has no `destroyed` of its own). */
export function responseGone(res: ServerResponse): boolean {
  return res.destroyed || (res as unknown as { stream?: { destroyed: boolean } }).stream?.destroyed === true;
}
