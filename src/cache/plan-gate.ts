/**
 * PlanGate: the "no mutation while a plan runs" rule. It owns the `planning` flag, queues the
 * work `whenIdle` defers, and builds the KernelAccess through which the planner starts and
 * ends plans.
 */
import { fleetError } from '../errors/index.js';
import { logger } from '../log/logger.js';
import type { KernelAccess } from './kernel-access.js';
import type { OperationTable } from './operation-table.js';
import type { PlanClock } from './plan-clock.js';

const log = logger('world-state');

export class PlanGate {
  planning = false;
  /** Deferred work from `head` on (a head index: a queue of a million entries drains in O(n)). */
  private queue: Array<(() => void) | undefined> = [];
  private head = 0;

  assertIdle(): void {
    if (this.planning) throw fleetError('FA_ERR_KERNEL', 'world state mutated while a plan runs (use whenIdle)');
  }

  whenIdle(fn: () => void): void {
    if (!this.planning) fn();
    else this.queue.push(fn);
  }

  access(memory: WebAssembly.Memory, clock: PlanClock, ops: OperationTable): KernelAccess {
    return {
      memory,
      beginPlan: (now, scratchBytes) => {
        if (this.planning) throw fleetError('FA_ERR_KERNEL', 'a plan is already running');
        const frame = clock.begin(now, scratchBytes, ops);
        this.planning = true;
        return frame;
      },
      endPlan: (act) => {
        this.planning = false;
        try {
          act?.();
        } finally {
          this.drain();
        }
      },
      tableRanges: () => clock.tableRanges(),
    };
  }

  /** Deferred work runs in order; one that starts another plan stops the drain. */
  private drain(): void {
    while (this.head < this.queue.length && !this.planning) {
      const fn = this.queue[this.head] as () => void;
      this.queue[this.head++] = undefined;
      try {
        fn();
      } catch (err) {
        log.error({ err }, 'deferred world-state mutation failed');
      }
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
  }
}
