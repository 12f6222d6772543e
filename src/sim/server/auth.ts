/**
 * Bearer-token authentication, as kube-apiserver's static token file does it: every request
 * outside the public paths must carry `Authorization: Bearer <token>`.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from './status.js';

/** A random token (hex, 32 bytes of entropy). */
export function randomToken(): string {
  return randomBytes(32).toString('hex');
}

export function createTokenCheck(token: string): (headers: IncomingHttpHeaders) => void {
  const expected = Buffer.from(`Bearer ${token}`);
  return (headers) => {
    const got = Buffer.from(headers.authorization ?? '');
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
  };
}
