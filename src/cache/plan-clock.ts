/**
 * PlanClock: the time base of the detach timers and the preparation of a plan frame.
 *
 * Timers are u32 milliseconds since a time base, so a pair record stays 20 bytes. The base is
 * chosen at the first plan so that `now` sits mid-range (2^31), and moved (every timer shifted,
 * clamped to [1, 2^32-1]) whenever `now` leaves [2^30, 2^32 - 2^30]: clamping only touches
 * timers more than 2^30 ms (12 days) away from now, which are expired for any sane
 * maxWaitForUnmount, so decisions are unchanged. Times are integer ms: `now` is floored.
 */
import { PF_TIMER_SET, PR_TIMER } from '../kernel/abi.js';
import type { PlanFrame, TableRange } from './kernel-access.js';
import type { OperationTable } from './operation-table.js';
import { PAIR_RECORD_WORDS } from './shared-tables.js';
import type { WorldCore } from './world-core.js';

const TIMER = PR_TIMER / 4;
const MID = 2 ** 31;
const LOW = 2 ** 30;
const HIGH = 2 ** 32 - 2 ** 30;

export class PlanClock {
  /** Host ms corresponding to timer value 0 (NaN before the first plan). */
  base = Number.NaN;

  constructor(private readonly core: WorldCore) {}

  begin(now: number, scratchBytes: number, ops: OperationTable): PlanFrame {
    const t = Math.floor(now);
    if (Number.isNaN(this.base)) this.base = t - MID;
    const rel = t - this.base;
    if (rel < LOW || rel > HIGH) this.rebase(t - MID);
    ops.expire(t);
    this.core.t.ensureScratch(scratchBytes);
    const o = this.core.t.offsets;
    return {
      nowRel: t - this.base,
      pairEnd: Math.ceil(this.core.pairHighWater / 8) * 8,
      nodeEnd: Math.ceil(this.core.nodes.highWater / 16) * 16,
      scratch: o.scratch,
      scratchBytes: this.core.t.caps.scratchBytes,
    };
  }

  timerOf(slot: number): number | null {
    const t = this.core.t;
    return t.pairFlags[slot] & PF_TIMER_SET ? this.base + t.pairRecords[slot * PAIR_RECORD_WORDS + TIMER] : null;
  }

  tableRanges(): TableRange[] {
    const t = this.core.t;
    const pairs = Math.ceil(this.core.pairHighWater / 8) * 8;
    const nodes = Math.ceil(this.core.nodes.highWater / 16) * 16;
    const volumes = Math.ceil(this.core.volumes.highWater / 16) * 16;
    const o = t.offsets;
    return [
      { name: 'nodeFlags', addr: o.nodeFlags, bytes: nodes },
      { name: 'nodeHead', addr: o.nodeHead, bytes: nodes * 4 },
      { name: 'volumeWords', addr: o.volumeWords, bytes: volumes * 4 },
      { name: 'pairFlags', addr: o.pairFlags, bytes: pairs * 2 },
      { name: 'pairRecords', addr: o.pairRecords, bytes: pairs * PAIR_RECORD_WORDS * 4 },
    ];
  }

  private rebase(newBase: number): void {
    const t = this.core.t;
    const shift = newBase - this.base;
    for (let p = 0; p < this.core.pairHighWater; p++) {
      if ((t.pairFlags[p] & PF_TIMER_SET) === 0) continue;
      const at = p * PAIR_RECORD_WORDS + TIMER;
      t.pairRecords[at] = Math.min(2 ** 32 - 1, Math.max(1, t.pairRecords[at] - shift));
    }
    this.base = newBase;
  }
}
