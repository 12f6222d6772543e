/**
 * Retries of one list page request. A page that fails with 429 (after its `Retry-After`, capped)
 * or a transient failure (5xx, connection reset or refused, timeout) is asked again a few times
 * with jittered exponential backoff before the failure ends the list; anything else (4xx, a 410
 * expired continue token, the caller's own abort) ends it at once.
 *
 * Single-object calls get their 429 retries from request-runner.ts; lists go through raw GETs
 * (raw-request.ts) and get them here, with transient failures added because one lost page would
 * otherwise throw away every page before it.
 */
import { createBackoff } from './backoff.js';
import { statusCodeOf } from './kube-errors.js';
import { sleep } from './sleep.js';

export interface ListRetryPolicy {
  /** Retries per page after the first attempt (default 4). */
  maxRetries?: number;
  /** Backoff between transient failures (default 200 ms doubling to 5 s, jittered). */
  initialMs?: number;
  maxMs?: number;
  /** Cap on one `Retry-After` wait (default 10 s); without the header a 429 waits 1 s. */
  maxRetryAfterMs?: number;
}

export interface RetryNotice {
  err: unknown;
  code: number;
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
}

/** HTTP statuses worth asking again: overload and server-side failures that may pass. */
const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);

/** True for failures another attempt may get past: 429, 500/502/503/504, or no response at all (code 0). */
export function isRetryableListError(err: unknown): boolean {
  const code = statusCodeOf(err);
  return code === 0 || RETRYABLE_STATUS.has(code);
}

/** `Retry-After` in ms carried by a raw-request or kube-layer error, if any. */
export function retryAfterOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const direct = (err as { retryAfterMs?: unknown }).retryAfterMs;
  if (typeof direct === 'number') return direct;
  const details = (err as { details?: { retryAfterMs?: unknown } }).details;
  return typeof details?.retryAfterMs === 'number' ? details.retryAfterMs : undefined;
}

/**
 * Runs `attempt` until it resolves, fails with a non-retryable error, runs out of retries, or
 * `signal` aborts (then the last error is thrown as is). `onRetry` is told before each wait.
 */
export async function withListRetries<T>(
  attempt: () => Promise<T>,
  o: { policy?: ListRetryPolicy; signal?: AbortSignal; onRetry?: (n: RetryNotice) => void } = {},
): Promise<T> {
  const p = o.policy ?? {};
  const maxRetries = p.maxRetries ?? 4;
  const backoff = createBackoff({ initialMs: p.initialMs ?? 200, maxMs: p.maxMs ?? 5000 });
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (o.signal?.aborted || n > maxRetries || !isRetryableListError(err)) throw err;
      const code = statusCodeOf(err);
      const delayMs = code === 429 ? Math.min(p.maxRetryAfterMs ?? 10_000, retryAfterOf(err) ?? 1000) : backoff.next();
      o.onRetry?.({ err, code, attempt: n, delayMs });
      if (!(await sleep(delayMs, o.signal))) throw err;
    }
  }
}
