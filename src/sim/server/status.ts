/**
 * Kubernetes `Status` responses: every error the simulated API server returns is a
 * metav1.Status with `code` and `reason`, built here and only here. Handlers throw ApiError
 * (or a store's StoreError); the router turns either into a response.
 */
import type { ServerResponse } from 'node:http';
import { StoreError } from '../store/index.js';

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'UnsupportedMediaType'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'InternalError'
  | 'Timeout'
  | 'ServiceUnavailable';

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (msg: string) => new ApiError(400, 'BadRequest', msg);
export const notFound = (msg = 'the server could not find the requested resource') => new ApiError(404, 'NotFound', msg);
export const methodNotAllowed = (msg = 'the server does not allow this method on the requested resource') => new ApiError(405, 'MethodNotAllowed', msg);
export const gone = (msg: string) => new ApiError(410, 'Gone', msg);
export const expired = (msg: string) => new ApiError(410, 'Expired', msg);
export const invalid = (msg: string) => new ApiError(422, 'Invalid', msg);

/** A metav1.Status object for an error. */
export function statusObject(code: number, reason: StatusReason | string, message: string, details?: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

/** Maps anything thrown by a handler to a Status object. Unknown errors are InternalError. */
export function toStatus(err: unknown): Record<string, unknown> {
  if (err instanceof ApiError) return statusObject(err.code, err.reason, err.message, err.details);
  if (err instanceof StoreError) return statusObject(err.code, err.reason, err.message, err.details);
  return statusObject(500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`);
}

/** True for errors a client caused (4xx), which are not worth logging. */
export function isClientError(err: unknown): boolean {
  return (err instanceof ApiError || err instanceof StoreError) && err.code < 500;
}

export function sendJson(res: ServerResponse, code: number, body: string | Buffer, extraHeaders?: Record<string, string>): void {
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...extraHeaders });
  res.end(body);
}

export function sendStatus(res: ServerResponse, err: unknown): void {
  const status = toStatus(err);
  const extra: Record<string, string> = {};
  if (status.code === 401) extra['WWW-Authenticate'] = 'Bearer realm="fleet-attach-sim"';
  sendJson(res, status.code as number, JSON.stringify(status), extra);
}
