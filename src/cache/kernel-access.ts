/**
 * The narrow door between the world state (src/cache) and the plan kernel host (src/kernel):
 * the shared memory, and the two calls that bracket a plan. Nothing else should use it.
 */

/** What a plan needs to know about the state, fixed for the duration of one plan. */
export interface PlanFrame {
  /** `now` in ms since the state's time base (u32), as the kernel compares timers. */
  readonly nowRel: number;
  /** Pair slots to scan: [0, pairEnd), a multiple of 8. */
  readonly pairEnd: number;
  /** Node slots to scan: [0, nodeEnd), a multiple of 16. */
  readonly nodeEnd: number;
  /** Address and size of the scratch region (shard descriptors and outputs). */
  readonly scratch: number;
  readonly scratchBytes: number;
}

export interface TableRange {
  readonly name: string;
  readonly addr: number;
  readonly bytes: number;
}

export interface KernelAccess {
  readonly memory: WebAssembly.Memory;
  /**
   * Starts a plan at host time `now` (ms, floored): expires backoff windows (`now - lastError >
   * duration`), rebases the timer clock if needed, makes the scratch region at least
   * `scratchBytes` long (this may grow the memory and move every table), then sets `planning`.
   * Throws FA_ERR_KERNEL if a plan is already running.
   */
  beginPlan(now: number, scratchBytes: number): PlanFrame;
  /**
   * Ends the plan: clears `planning`, runs `act` (the caller's actions on the plan, which may
   * mutate the state directly), then the callbacks queued by `whenIdle` meanwhile, even if `act`
   * threw. So what was queued during the plan lands after the actions, never between the plan
   * and the actions it decided.
   */
  endPlan(act?: () => void): void;
  /** The live extent of every packed table (for the bandwidth floor in bench/). */
  tableRanges(): TableRange[];
}
