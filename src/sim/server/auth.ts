/**
 * Authentication as kube-apiserver does it with a static token file and its x509 authenticator:
 * every request outside the public paths must carry `Authorization: Bearer <token>` or come
 * over a TLS connection whose client certificate the simulator's CA signed (the listener asks
 * for one when it has a CA to check it with, and notes each connection's: http-listener.ts).
 *
 * The user a request acts as: the name given to its token (the simulator's own token is
 * {@link DEFAULT_USER}), or its certificate's common name, as kube-apiserver names the user.
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

/** The user of the simulator's own token and client certificate. */
export const DEFAULT_USER = 'fleet-attach';

/** A further user of the simulator: requests with `Authorization: Bearer <token>` act as `name`. */
export interface SimUser {
  name: string;
  token: string;
}

/** Set on a TLS socket whose client presented a certificate the listener's CA verified: its common name. */
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
  if (cert && cert.subject !== undefined) {
    const cn = cert.subject.CN;
    (socket as unknown as Record<symbol, string>)[CLIENT_VERIFIED] = typeof cn === 'string' && cn !== '' ? cn : DEFAULT_USER;
  }
}

export interface RequestAuth {
  /** A verified client certificate, or the bearer token. */
  authenticated(req: IncomingMessage): boolean;
  /** Throws 401 Unauthorized unless {@link authenticated}. */
  check(req: IncomingMessage): void;
  /** The connection presented a client certificate the CA signed. */
  byCertificate(req: IncomingMessage): boolean;
  /** The user the request acts as; throws 401 Unauthorized when it is not authenticated. */
  user(req: IncomingMessage): string;
}

export function createRequestAuth(token: string, users: readonly SimUser[] = []): RequestAuth {
  const tokens = [{ name: DEFAULT_USER, expected: Buffer.from(`Bearer ${token}`) }, ...users.map((u) => ({ name: u.name, expected: Buffer.from(`Bearer ${u.token}`) }))];
  const tokenUser = (req: IncomingMessage): string | undefined => {
    const header = req.headers.authorization;
    if (header === undefined) return undefined;
    const got = Buffer.from(header);
    for (const t of tokens) if (got.length === t.expected.length && timingSafeEqual(got, t.expected)) return t.name;
    return undefined;
  };
  const certificateUser = (req: IncomingMessage): string | undefined => {
    try {
      // An HTTP/2 request's own `socket` is a proxy made per stream; its session's socket is a
      // proxy that reads through to the TLS socket (and throws once the session is gone).
      const stream = (req as unknown as Partial<Http2ServerRequest>).stream;
      const socket = stream ? stream.session?.socket : req.socket;
      const cn = (socket as unknown as Record<symbol, string | undefined> | undefined)?.[CLIENT_VERIFIED];
      return typeof cn === 'string' ? cn : undefined;
    } catch {
      return undefined;
    }
  };
  const userOf = (req: IncomingMessage) => certificateUser(req) ?? tokenUser(req);
  const unauthorized = () => new ApiError(401, 'Unauthorized', 'Unauthorized');
  return {
    authenticated: (req) => userOf(req) !== undefined,
    byCertificate: (req) => certificateUser(req) !== undefined,
    check(req) {
      if (userOf(req) === undefined) throw unauthorized();
    },
    user(req) {
      const u = userOf(req);
      if (u === undefined) throw unauthorized();
      return u;
    },
  };
}
