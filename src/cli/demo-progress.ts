/**
 * The demo's progress display: initial sync, convergence, attached/desired, pending operations,
 * conflicts, loop p50/p99 and watch events/s. Rewrites one line in place on a TTY, prints one
 * line per interval otherwise (logs, CI).
 */
import { endStatusLine, showStatusLine } from '../log/status-line.js';
import type { Controller } from '../manager/controller.js';

export interface Progress {
  /** Resolves the first time every desired pair is attached (and there is at least one, or the fleet is empty and synced). */
  converged(): Promise<void>;
  stop(): void;
}

/**
 * Every wanted volume attached at this moment (detaches may still be pending: under churn the
 * volumes of deleted pods always are, and they do not keep a pod waiting).
 */
function isConverged(ctl: Controller): boolean {
  const c = ctl.state.counts();
  return c.desiredAttached === c.desiredPairs && ctl.reconciler.passes() > 1;
}

export function createProgress(o: { ctl: Controller; intervalMs: number; tty: boolean; startedAt: number }): Progress {
  const { ctl } = o;
  let resolveConverged!: () => void;
  const converged = new Promise<void>((r) => (resolveConverged = r));
  let done = false;
  let lastEvents = 0;
  let lastAt = performance.now();
  const sample = () => {
    const events = ctl.reflectors.reduce((n, r) => n + r.stats().events + r.stats().objects, 0);
    const now = performance.now();
    const rate = ((events - lastEvents) * 1000) / Math.max(1, now - lastAt);
    lastEvents = events;
    lastAt = now;
    const ready = ctl.ready();
    const c = ctl.state.counts();
    const desired = c.desiredPairs;
    const attached = c.desiredAttached;
    // Rounded down: 100.0% only when every wanted volume is attached.
    const pct = desired === 0 ? (ready.ready ? 100 : 0) : Math.floor((1000 * attached) / desired) / 10;
    const secs = ((now - o.startedAt) / 1000).toFixed(0);
    const line = ready.ready
      ? `[${secs}s] converged ${pct.toFixed(1)}%  attached/desired ${attached}/${desired}  pending ${c.pendingOperations}  backoff ${c.backoffOperations}  conflicts ${c.conflicts}  loop p50 ${ctl.reconciler.passTime.percentile(0.5).toFixed(1)}ms p99 ${ctl.reconciler.passTime.percentile(0.99).toFixed(1)}ms  watch ${rate.toFixed(0)} ev/s`
      : `[${secs}s] initial sync: ${ready.reason ?? 'starting'}`;
    if (o.tty) showStatusLine(line);
    else console.log(line);
    if (!done && ready.ready && isConverged(ctl)) {
      done = true;
      endStatusLine();
      resolveConverged();
    }
  };
  const timer = setInterval(sample, o.tty ? 500 : o.intervalMs);
  // Convergence is checked more often than lines are printed.
  const check = setInterval(() => {
    if (!done && ctl.ready().ready && isConverged(ctl)) sample();
  }, 250);
  return {
    converged: () => converged,
    stop() {
      clearInterval(timer);
      clearInterval(check);
      endStatusLine();
    },
  };
}
