/**
 * The HTTP(S) server under both the simulated API server and the fault front: TLS when given
 * the material (plain HTTP otherwise; the cipher suite by the server's preference), keep-alive longer than clients' idle timeouts, no
 * request timeout (watches stay open for as long as the client wants), and a bare 400 for a
 * request that does not parse. Errors a request handler throws are answered here.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { DEFAULT_CIPHERS } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
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

export function createHttpServer(tls: TlsMaterial | undefined, handler: (req: IncomingMessage, res: ServerResponse) => void): http.Server {
  const server = tls ? https.createServer({ cert: tls.cert, key: tls.key, ciphers: SERVER_CIPHERS, honorCipherOrder: true }, handler) : http.createServer(handler);
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 0;
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
  });
  return server;
}

/** Listens on host:port (port 0 picks a free port); resolves to the bound address. */
export function listen(server: http.Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
