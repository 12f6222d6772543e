/**
 * One HTTP/2 connection to the API server for the controller's hot calls, as client-go keeps one
 * for all of its requests. Many calls share one TLS connection and the frames of the calls sent
 * in one turn of the event loop leave in one socket write: against HTTP/1.1 keep-alive (a
 * socket, a TLS record and a write per call, and TLS handshakes whenever the pool grows) the
 * client and the server each spend about half the CPU per small call (bench/api-writes.bench.ts).
 *
 * The connection is opened on first use and again after it closes (GOAWAY, error, idle close
 * by the server). A server that does not offer h2 by ALPN is remembered as HTTP/1.1-only: the
 * caller then uses its HTTP/1.1 path for good. A stream aborted by its caller (timeout) has
 * the connection checked with a PING: one that does not answer within {@link PING_TIMEOUT_MS}
 * is dropped, so calls do not keep queueing on a dead socket.
 */
import http2 from 'node:http2';
import { installStreamTables, type StreamTable } from './h2-stream-table.js';
import type { SecureClientSessionOptions } from 'node:http2';

const PING_TIMEOUT_MS = 5_000;
/**
 * Connection and TLS handshake, as client-go bounds its TLS handshake (10 s): a peer that takes
 * the TCP connection and never answers must not hold every caller waiting for the session.
 */
export const H2_CONNECT_TIMEOUT_MS = 10_000;
/**
 * Receive windows as client-go's HTTP/2 transport sets them (4 MiB per stream, 1 GiB per
 * connection). HTTP/2's default, 64 KiB for the whole connection, holds the server's answers
 * back behind this process's WINDOW_UPDATEs as soon as a few dozen calls are in flight.
 */
const STREAM_WINDOW = 4 << 20;
const CONNECTION_WINDOW = 1 << 30;

export interface H2Connection {
  /** The live session, a new one, or undefined when the server speaks only HTTP/1.1. Rejects when the connection fails. */
  session(): Promise<http2.ClientHttp2Session | undefined>;
  /** The open session, if there is one now (no connect). */
  ready(): http2.ClientHttp2Session | undefined;
  /** Checks the session after a caller gave up on a stream (see the file comment). */
  suspect(session: http2.ClientHttp2Session): void;
  /** Closes the session (streams in flight are cut); a later call opens a new one. */
  close(): void;
}

export interface H2ConnectionDeps {
  /** `https://host:port` of the API server. */
  authority: string;
  /** TLS material and checks (ca, cert, key, servername, rejectUnauthorized…) as client-node gives them. */
  tls: SecureClientSessionOptions;
  /** Keep the session's streams in a {@link StreamTable} (h2-stream-table.ts; default true; false only to measure it). */
  streamTable?: boolean;
}

export function createH2Connection(deps: H2ConnectionDeps): H2Connection {
  return new Connection(deps.authority, deps.tls, deps.streamTable ?? true);
}

class Connection implements H2Connection {
  private current: http2.ClientHttp2Session | undefined;
  private connecting: Promise<http2.ClientHttp2Session | undefined> | undefined;
  private h1Only = false;
  private pinging = false;

  constructor(
    private readonly authority: string,
    private readonly tls: SecureClientSessionOptions,
    private readonly streamTable: boolean,
  ) {}

  ready(): http2.ClientHttp2Session | undefined {
    const s = this.current;
    return s && !s.closed && !s.destroyed ? s : undefined;
  }

  session(): Promise<http2.ClientHttp2Session | undefined> {
    const s = this.ready();
    if (s) return Promise.resolve(s);
    if (this.h1Only) return Promise.resolve(undefined);
    return (this.connecting ??= this.connect().finally(() => (this.connecting = undefined)));
  }

  suspect(session: http2.ClientHttp2Session): void {
    if (this.pinging || session !== this.current || session.destroyed) return;
    this.pinging = true;
    const timer = setTimeout(() => session.destroy(), PING_TIMEOUT_MS);
    const answered = session.ping((err) => {
      this.pinging = false;
      clearTimeout(timer);
      if (err) session.destroy();
    });
    if (!answered) {
      this.pinging = false;
      clearTimeout(timer);
    }
  }

  close(): void {
    this.current?.destroy();
    this.current = undefined;
  }

  private connect(): Promise<http2.ClientHttp2Session | undefined> {
    return new Promise((resolve, reject) => {
      const s = http2.connect(this.authority, { ...this.tls, settings: { initialWindowSize: STREAM_WINDOW } });
      const timer = setTimeout(() => {
        onConnectError(Object.assign(new Error(`HTTP/2 connection to ${this.authority} not established within ${H2_CONNECT_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' }));
      }, H2_CONNECT_TIMEOUT_MS);
      timer.unref();
      if (this.streamTable) installStreamTables(s);
      const forget = () => {
        if (this.current === s) this.current = undefined;
      };
      s.once('connect', () => {
        clearTimeout(timer);
        s.off('error', onConnectError);
        if (s.alpnProtocol !== 'h2') {
          this.h1Only = true;
          s.destroy();
          return resolve(undefined);
        }
        s.setLocalWindowSize(CONNECTION_WINDOW);
        // Errors after this reach the streams in flight; the session is only forgotten.
        s.on('error', forget);
        s.once('goaway', forget);
        s.once('close', forget);
        // Idle sessions do not keep the process alive; requests in flight have their own timers.
        s.unref();
        this.current = s;
        resolve(s);
      });
      const onConnectError = (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        s.destroy();
        if (err.code === 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL') {
          this.h1Only = true;
          return resolve(undefined);
        }
        reject(err);
      };
      s.once('error', onConnectError);
    });
  }
}
