/**
 * Runs one call, on the generated client or raw (raw-write.ts), the way every KubeApiClient call
 * runs: a slot of the in-flight bound and a rate-limiter token (unless exempt), then a
 * per-attempt timeout that starts only once the request can be sent, 429 retries after
 * `Retry-After`, a report per attempt, and failures normalised to FA_ERR_KUBE_API (kube-errors.ts).
 */
import { Observable, type ConfigurationOptions, type HttpInfo, type ObservableMiddleware } from '@kubernetes/client-node';
import { kubeErrorDetails, statusCodeOf, toKubeError } from './kube-errors.js';
import type { InFlightLimiter, RequestPriority } from './in-flight-limiter.js';
import type { RateLimiter } from './rate-limiter.js';
import { report, type RequestHook } from './request-hook.js';
import { sleep } from './sleep.js';
import { fleetError } from '../errors/index.js';

export interface What {
  verb: string;
  resource: string;
  name?: string;
}

export interface RequestRunnerOptions {
  limiter: RateLimiter;
  /** Bounds limited calls on the wire (see in-flight-limiter.ts); unbounded when absent. */
  inFlight?: InFlightLimiter;
  onRequest?: RequestHook;
  /** Per-attempt timeout (default 30 s). */
  requestTimeoutMs?: number;
  /** 429 retries per call (default 5) and the cap on one Retry-After wait (default 10 s; 1 s when absent). */
  maxRetries?: number;
  maxRetryAfterMs?: number;
  /**
   * Asked for each limited call before its token and again after it, so after any wait in the
   * queue (the send itself may still wait on credentials or a connection, holding its slot);
   * false refuses the call with FA_ERR_NOT_LEADER. The controller answers with its leadership
   * and whether it is stopping: a replica that stepped down sends none of the writes it queued while
   * it led, which a successor could otherwise race (client-go's ReleaseOnCancel contract).
   */
  maySend?: () => boolean;
}

export interface RunOptions {
  signal?: AbortSignal | undefined;
  /** false skips the rate limiter and the in-flight bound (lease calls). */
  limited?: boolean;
  /** The in-flight lane (default `normal`). */
  priority?: RequestPriority;
}

/** What a raw send resolves: the HTTP status (reported) and the data the call resolves. */
export interface RawSent<R> {
  status: number;
  data: R;
}

/**
 * One attempt of a raw call: the sender itself fails it after `timeoutMs` (counted from the
 * send) and when the caller's `signal` aborts, so the common call (no caller signal) needs no
 * AbortController, no listener and no signal handed to Node per attempt.
 */
export interface RawAttempt {
  timeoutMs: number;
  signal: AbortSignal | undefined;
}

export interface RequestRunner {
  /** Sends via `send` (which must pass the given options to the generated API) and resolves the response data. */
  run<R>(what: What, send: (o: ConfigurationOptions) => Promise<HttpInfo<R>>, opts?: RunOptions): Promise<R>;
  /**
   * The same for a raw call: `send` must end the request and the read of its body when the
   * attempt's timeout passes or its signal aborts (see {@link RawAttempt}), and reject on a
   * non-2xx status with an error {@link toKubeError} understands.
   */
  runRaw<R>(what: What, send: (attempt: RawAttempt) => Promise<RawSent<R>>, opts?: RunOptions): Promise<R>;
}

export function createRequestRunner(o: RequestRunnerOptions): RequestRunner {
  return {
    run: (what, send, opts) =>
      runAttempts(
        o,
        what,
        async (attempt) => {
          // The generated client has no timeout of its own: one signal carries both bounds.
          const bound = attemptSignal(attempt.timeoutMs, attempt.signal);
          try {
            const info = await send(withSignal(bound.signal));
            return { status: info.httpStatusCode, data: info.data };
          } finally {
            bound.done();
          }
        },
        opts,
      ),
    runRaw: (what, send, opts) => runAttempts(o, what, send, opts),
  };
}

/** The one path both kinds of call take: slot, token, timed attempt, report, 429 retry. */
async function runAttempts<R>(
  o: RequestRunnerOptions,
  what: What,
  send: (attempt: RawAttempt) => Promise<RawSent<R>>,
  { signal, limited = true, priority = 'normal' }: RunOptions = {},
): Promise<R> {
  const maxRetries = o.maxRetries ?? 5;
  for (let attempt = 0; ; attempt++) {
    const queued = performance.now();
    // The slot is taken first so that the lanes, not the bucket's FIFO, order the sends.
    const release = limited && o.inFlight ? await o.inFlight.acquire(priority, signal) : undefined;
    try {
      // Asked before the token (a refused call spends none) and again after its wait.
      if (limited) {
        refuseUnlessMaySend(o, what);
        await o.limiter.acquire(signal);
        refuseUnlessMaySend(o, what);
      }
    } catch (err) {
      release?.();
      throw err;
    }
    const t0 = performance.now();
    const queuedMs = limited ? t0 - queued : undefined;
    try {
      const sent = await send({ timeoutMs: o.requestTimeoutMs ?? 30_000, signal });
      release?.();
      report(o.onRequest, { verb: what.verb, resource: what.resource, code: sent.status, durationMs: performance.now() - t0, queuedMs });
      return sent.data;
    } catch (raw) {
      const err = toKubeError(raw, what);
      const code = statusCodeOf(err);
      report(o.onRequest, { verb: what.verb, resource: what.resource, code, durationMs: performance.now() - t0, queuedMs });
      release?.();
      // As client-go's: a 429 is retried, and so is a 5xx that says when (Retry-After).
      const retryAfterMs = kubeErrorDetails(err)?.retryAfterMs;
      const retriable = code === 429 || (code >= 500 && code <= 599 && retryAfterMs !== undefined);
      if (!retriable || attempt >= maxRetries || signal?.aborted) throw err;
      if (!(await sleep(Math.min(o.maxRetryAfterMs ?? 10_000, retryAfterMs ?? 1000), signal))) throw signal?.reason;
    }
  }
}

function refuseUnlessMaySend(o: RequestRunnerOptions, what: What): void {
  if (o.maySend && !o.maySend()) {
    throw fleetError('FA_ERR_NOT_LEADER', `${what.verb} ${what.resource}${what.name ? ` ${what.name}` : ''} not sent: the controller is stopping or does not lead`);
  }
}

/**
 * One attempt's signal: aborted by `timeoutMs` or by the caller's `signal`. `done` clears the
 * timer and unhooks the caller's signal; call it once the attempt settled. A controller and a
 * cleared timer rather than `AbortSignal.timeout` + `AbortSignal.any`: those register every
 * signal with a FinalizationRegistry and weak references, per request, which the garbage
 * collector then processes (seen in allocation samples of a controller under churn).
 */
function attemptSignal(timeoutMs: number, signal: AbortSignal | undefined): { signal: AbortSignal; done(): void } {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), timeoutMs);
  const onAbort = () => ac.abort(signal?.reason);
  if (signal?.aborted) ac.abort(signal.reason);
  else signal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: ac.signal,
    done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** Per-call options whose middleware puts `signal` on the request (the generated client has no timeout of its own). */
function withSignal(signal: AbortSignal): ConfigurationOptions {
  const mw: ObservableMiddleware = {
    pre: (ctx) => {
      ctx.setSignal(signal);
      return new Observable(Promise.resolve(ctx));
    },
    post: (rsp) => new Observable(Promise.resolve(rsp)),
  };
  return { middleware: [mw], middlewareMergeStrategy: 'append' };
}
