/**
 * Kubernetes API errors: one shape for failures from the generated client (ApiException), from
 * raw requests and from the network, and the predicates callers use to recognise expected ones.
 *
 * Every error the kube layer raises is `FA_ERR_KUBE_API` with `details: KubeErrorDetails`;
 * `code` is the HTTP status, or 0 when no response arrived (network error, timeout, abort).
 */
import { ApiException } from '@kubernetes/client-node';
import { fleetError, isFleetError, type FleetError } from '../errors/index.js';

export interface KubeErrorDetails {
  verb: string;
  resource: string;
  name?: string;
  /** HTTP status; 0 = no response. */
  code: number;
  /** `Status.reason` from the response body when present (AlreadyExists, Conflict, NotFound, Expired…). */
  reason?: string;
  /** `Retry-After` in milliseconds when the server sent one. */
  retryAfterMs?: number;
  /** `Status.message` from the response body when present: what client-go's StatusError says. */
  statusMessage?: string;
}

/** HTTP status of any error the client layers produce (0 when there was no response). */
export function statusCodeOf(err: unknown): number {
  if (isFleetError(err, 'FA_ERR_KUBE_API')) return Number(err.details?.code ?? 0);
  if (err instanceof ApiException) return err.code;
  if (typeof err === 'object' && err !== null) {
    const e = err as { statusCode?: unknown; code?: unknown };
    if (typeof e.statusCode === 'number') return e.statusCode;
    // Only an HTTP status: a DOMException's `code` is a legacy number too (a timeout's is 23).
    if (typeof e.code === 'number' && !(err instanceof DOMException)) return e.code;
  }
  return 0;
}

/**
 * A non-2xx response to a raw request (raw-request.ts, raw-write.ts); `statusCode` is what
 * {@link statusCodeOf} reads, and {@link toKubeError} carries `reason` and `retryAfterMs` over
 * exactly as it does for the generated client's ApiException.
 */
export class KubeHttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly reason: string | undefined,
    message: string,
    /** `Retry-After` in ms when the server sent one (429, 503). */
    readonly retryAfterMs?: number,
    /** `Status.message` from the body, when there was one. */
    readonly statusMessage?: string,
  ) {
    super(message);
    this.name = 'KubeHttpError';
  }
}

export function kubeErrorDetails(err: unknown): KubeErrorDetails | undefined {
  return isFleetError(err, 'FA_ERR_KUBE_API') ? (err.details as unknown as KubeErrorDetails) : undefined;
}

export const isNotFound = (err: unknown): boolean => statusCodeOf(err) === 404;
/** 409: AlreadyExists on create, Conflict on a stale resourceVersion. */
export const isConflict = (err: unknown): boolean => statusCodeOf(err) === 409;
export const isAlreadyExists = (err: unknown): boolean => isConflict(err) && kubeErrorDetails(err)?.reason === 'AlreadyExists';
export const isGone = (err: unknown): boolean => statusCodeOf(err) === 410;
/** 422: Invalid, and a JSON Patch operation that does not apply (a failed `test`). */
export const isInvalid = (err: unknown): boolean => statusCodeOf(err) === 422;
export const isTooManyRequests = (err: unknown): boolean => statusCodeOf(err) === 429;

/** Parses a `Retry-After` header (seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** Reads `reason` and `message` out of a Status body (a string or an object); tolerant of junk. */
export function parseStatusBody(body: unknown): { reason?: string; message?: string } {
  let v: unknown = body;
  if (typeof body === 'string') {
    try {
      v = JSON.parse(body);
    } catch {
      return body.length > 0 ? { message: body.slice(0, 300) } : {};
    }
  }
  if (typeof v !== 'object' || v === null) return {};
  const s = v as { reason?: unknown; message?: unknown };
  return {
    ...(typeof s.reason === 'string' ? { reason: s.reason } : {}),
    ...(typeof s.message === 'string' ? { message: s.message } : {}),
  };
}

/** Wraps any failure of one API call as FA_ERR_KUBE_API with {@link KubeErrorDetails}. */
export function toKubeError(err: unknown, what: { verb: string; resource: string; name?: string }): FleetError {
  if (isFleetError(err, 'FA_ERR_KUBE_API')) return err;
  const details: KubeErrorDetails = { ...what, code: statusCodeOf(err) };
  let message: string;
  if (err instanceof ApiException) {
    const status = parseStatusBody(err.body);
    if (status.reason) details.reason = status.reason;
    const ra = parseRetryAfter(headerOf(err.headers, 'retry-after'));
    if (ra !== undefined) details.retryAfterMs = ra;
    if (status.message !== undefined) details.statusMessage = status.message;
    message = status.message ?? `HTTP ${err.code}`;
  } else if (err instanceof KubeHttpError) {
    if (err.reason) details.reason = err.reason;
    if (err.retryAfterMs !== undefined) details.retryAfterMs = err.retryAfterMs;
    if (err.statusMessage !== undefined) details.statusMessage = err.statusMessage;
    message = err.statusMessage ?? `HTTP ${err.statusCode}`;
  } else {
    message = err instanceof Error ? err.message : String(err);
  }
  const target = what.name ? `${what.resource}/${what.name}` : what.resource;
  return fleetError('FA_ERR_KUBE_API', `${what.verb} ${target}: ${message}`, {
    cause: err,
    details: details as unknown as Record<string, unknown>,
  });
}

function headerOf(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}
