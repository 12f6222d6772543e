/**
 * The populator's passes over every pod (the start-up fill, C9, C10) visit up to a million
 * items, and one item's failure must not end the pass (loops never throw). A failure that is
 * systematic (a bug, a state the code did not foresee) would fail every item alike, so the
 * first is logged in full and the rest only counted, in one line when the pass ends.
 */
import type { Logger } from '../log/logger.js';

export interface ItemGuard {
  /** The pass's work on one item, made safe: a throw is logged or counted, never propagated. */
  wrap<T>(work: (item: T) => void, describe: (item: T) => Record<string, unknown>): (item: T) => void;
  /** Logs how many items failed after the first (nothing when at most one did); returns the count. */
  finish(): number;
}

export function guardItems(log: Logger, pass: string): ItemGuard {
  let failed = 0;
  return {
    wrap: (work, describe) => (item) => {
      try {
        work(item);
      } catch (err) {
        if (failed++ === 0) log.error({ err, ...describe(item) }, `${pass}: item skipped`);
      }
    },
    finish() {
      if (failed > 1) log.error({ skipped: failed }, `${pass}: items skipped`);
      return failed;
    },
  };
}
