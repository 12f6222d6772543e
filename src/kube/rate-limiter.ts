/**
 * A client-side token bucket, like client-go's (`--kube-api-qps`, `--kube-api-burst`).
 *
 * Tokens refill continuously at `qps` up to `burst`. Each `acquire` reserves the next token at
 * call time, so waiters are served in call order (FIFO) and a burst of callers is spread evenly
 * at 1/qps. `qps <= 0` disables limiting. The time spent waiting is reported for metrics.
 */
export interface RateLimiter {
  /**
   * Resolves when the caller may send one request, with the milliseconds it waited (0 when a
   * token was available). Rejects only if `signal` aborts first; the reserved token is then lost.
   */
  acquire(signal?: AbortSignal): Promise<number>;
  /**
   * Rejects every acquire still waiting for its token with `reason` (their tokens are lost);
   * returns how many. For a client that stops sending: its queued calls end now, not one per
   * 1/qps (96 queued at 20 qps held a stop up for ~5 s).
   */
  cancelWaiting(reason: unknown): number;
  /** Totals since creation: requests that had to wait, and the milliseconds waited. */
  stats(): { acquired: number; throttled: number; waitedMs: number };
}

export interface RateLimiterOptions {
  /** Sustained requests per second; <= 0 disables limiting. kube-controller-manager: 20. */
  qps: number;
  /** Bucket size (requests allowed at once). kube-controller-manager: 30. */
  burst: number;
  /** Called with each non-zero wait, in ms (e.g. a histogram). */
  onWait?: (ms: number) => void;
  /** Clock in ms (tests). */
  now?: () => number;
}

export const DEFAULT_QPS = 20;
export const DEFAULT_BURST = 30;

export function createRateLimiter(opts: RateLimiterOptions): RateLimiter {
  if (!Number.isFinite(opts.qps)) throw new RangeError('qps must be a finite number');
  if (opts.qps > 0 && !(Number.isInteger(opts.burst) && opts.burst >= 1)) throw new RangeError('burst must be an integer >= 1');
  return new TokenBucket(opts);
}

class TokenBucket implements RateLimiter {
  private readonly qps: number;
  private readonly burst: number;
  private readonly now: () => number;
  private readonly onWait: ((ms: number) => void) | undefined;
  private tokens: number;
  private last: number;
  private acquired = 0;
  private throttled = 0;
  private waitedMs = 0;
  /** The rejecters of the acquires waiting for their token. */
  private readonly waiting = new Set<(reason: unknown) => void>();

  constructor(opts: RateLimiterOptions) {
    this.qps = opts.qps;
    this.burst = opts.burst;
    this.now = opts.now ?? (() => performance.now());
    this.onWait = opts.onWait;
    this.tokens = opts.burst;
    this.last = this.now();
  }

  acquire(signal?: AbortSignal): Promise<number> {
    this.acquired++;
    if (this.qps <= 0) return Promise.resolve(0);
    if (signal?.aborted) return Promise.reject(signal.reason);
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    if (this.tokens >= 0) return Promise.resolve(0);
    const wait = (-this.tokens * 1000) / this.qps;
    this.throttled++;
    this.waitedMs += wait;
    this.onWait?.(wait);
    return new Promise<number>((resolve, reject) => {
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        this.waiting.delete(cancel);
        resolve(wait);
      }, Math.ceil(wait));
      const cancel = (reason: unknown) => {
        clearTimeout(t);
        signal?.removeEventListener('abort', onAbort);
        this.waiting.delete(cancel);
        reject(reason);
      };
      const onAbort = () => cancel(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.add(cancel);
    });
  }

  cancelWaiting(reason: unknown): number {
    const n = this.waiting.size;
    for (const cancel of [...this.waiting]) cancel(reason);
    return n;
  }

  stats(): { acquired: number; throttled: number; waitedMs: number } {
    return { acquired: this.acquired, throttled: this.throttled, waitedMs: this.waitedMs };
  }
}
