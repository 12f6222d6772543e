/**
 * Authentication as kube-apiserver does it with a static token file and its x509 authenticator:
 * every request outside the public paths must carry `Authorization: Bearer <token>` or come
 * over a TLS connection whose client certificate the simulator's CA signed (the listener asks
 * for one when it has a CA to check it with, and notes each connection's: http-listener.ts).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import { ApiError } from './status.js';

/** A random token (hex, 32 bytes of entropy). */
export function randomToken(): string {
  return randomBytes(32).toString('hex');
}

/** Set on a TLS socket whose client presented a certificate the listener's CA verified. */
const CLIENT_VERIFIED = Symbol('fleet-attach.clientCertificateVerified');

/**
 * Called by the listener once per TLS connection. `authorized` alone is not proof: Node also
 * sets it for a resumed TLS 1.3 session that carries no certificate (its PSK looks like
 * resumption), so the certificate itself must be there too; a resumed session that had one
 * keeps it, with the verification result it had.
 */
export function noteClientCertificate(socket: TLSSocket): void {
  if (!socket.authorized) return;
  const cert = socket.getPeerCertificate();
  if (cert && cert.subject !== undefined) (socket as unknown as Record<symbol, boolean>)[CLIENT_VERIFIED] = true;
}

export interface RequestAuth {
  /** A verified client certificate, or the bearer token. */
  authenticated(req: IncomingMessage): boolean;
  /** Throws 401 Unauthorized unless {@link authenticated}. */
  check(req: IncomingMessage): void;
  /** The connection presented a client certificate the CA signed. */
  byCertificate(req: IncomingMessage): boolean;
}

export function createRequestAuth(token: string): RequestAuth {
  const expected = Buffer.from(`Bearer ${token}`);
  const byToken = (req: IncomingMessage): boolean => {
    const got = Buffer.from(req.headers.authorization ?? '');
    return got.length === expected.length && timingSafeEqual(got, expected);
  };
  const byCertificate = (req: IncomingMessage): boolean => {
    try {
      // An HTTP/2 request's own `socket` is a proxy made per stream; its session's socket is a
      // proxy that reads through to the TLS socket (and throws once the session is gone).
      const stream = (req as unknown as Partial<Http2ServerRequest>).stream;
      const socket = stream ? stream.session?.socket : req.socket;
      return (socket as unknown as Record<symbol, boolean> | undefined)?.[CLIENT_VERIFIED] === true;
    } catch {
      return false;
    }
  };
  const authenticated = (req: IncomingMessage) => byCertificate(req) || byToken(req);
  return {
    authenticated,
    byCertificate,
    check(req) {
      if (!authenticated(req)) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
    },
  };
}
