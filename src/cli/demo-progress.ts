/**
 * The demo's progress display: initial sync, convergence, attached/desired, pending operations,
 * conflicts, loop p50/p99 and watch events/s. Rewrites one line in place on a TTY, prints one
 * line per interval otherwise (logs, CI).
 */
import type { Controller } from '../manager/controller.js';

export interface Progress {
  /** Resolves the first time every desired pair is attached (and there is at least one, or the fleet is empty and synced). */
  converged(): Promise<void>;
  stop(): void;
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
    const attached = Math.min(c.attached, desired);
    const pct = desired === 0 ? (ready.ready ? 100 : 0) : (100 * attached) / desired;
    const secs = ((now - o.startedAt) / 1000).toFixed(0);
    const line = ready.ready
      ? `[${secs}s] converged ${pct.toFixed(1)}%  attached/desired ${attached}/${desired}  pending ${c.pendingOperations}  backoff ${c.backoffOperations}  conflicts ${c.conflicts}  loop p50 ${ctl.reconciler.passTime.percentile(0.5).toFixed(1)}ms p99 ${ctl.reconciler.passTime.percentile(0.99).toFixed(1)}ms  watch ${rate.toFixed(0)} ev/s`
      : `[${secs}s] initial sync: ${ready.reason ?? 'starting'}`;
    if (o.tty) process.stdout.write(`\r\x1b[K${line}`);
    else console.log(line);
    if (!done && ready.ready && desired === c.attached && c.pendingOperations === 0 && ctl.reconciler.passes() > 1) {
      done = true;
      if (o.tty) process.stdout.write('\n');
      resolveConverged();
    }
  };
  const timer = setInterval(sample, o.tty ? 500 : o.intervalMs);
  // Convergence is checked more often than lines are printed.
  const check = setInterval(() => {
    const c = ctl.state.counts();
    if (!done && ctl.ready().ready && c.desiredPairs === c.attached && c.pendingOperations === 0 && ctl.reconciler.passes() > 1) sample();
  }, 250);
  return {
    converged: () => converged,
    stop() {
      clearInterval(timer);
      clearInterval(check);
      if (o.tty) process.stdout.write('\n');
    },
  };
}
