/**
 * Jittered exponential backoff for reconnect loops: each `next()` returns a delay drawn from
 * [0.5·d, 1.5·d) and doubles d up to `maxMs`; `reset()` goes back to `initialMs` (after a healthy
 * event). The jitter keeps many watches that broke together from reconnecting together.
 */
export interface Backoff {
  next(): number;
  reset(): void;
}

export function createBackoff(opts: { initialMs: number; maxMs: number; random?: () => number }): Backoff {
  if (!(opts.initialMs > 0) || !(opts.maxMs >= opts.initialMs)) throw new RangeError('backoff needs 0 < initialMs <= maxMs');
  const random = opts.random ?? Math.random;
  let d = opts.initialMs;
  return {
    next() {
      const delay = Math.min(opts.maxMs, d * (0.5 + random()));
      d = Math.min(opts.maxMs, d * 2);
      return delay;
    },
    reset() {
      d = opts.initialMs;
    },
  };
}
