/**
 * PendingTable: the operations in flight, by numeric key. Records are kept (inactive) after
 * their operation ends and reused when the key starts again, and swept only when inactive
 * ones outnumber active ones: a Map that shrinks and grows around a handful of entries
 * reallocates on every start/complete pair (measured: 100-300 ns vs 50 ns).
 */
import type { OperationKind, PendingOperation } from './world-state.js';

interface PendingRecord {
  volume: number;
  node: number;
  op: OperationKind;
  volumeWide: boolean;
  startedAt: number;
  active: boolean;
}

const SWEEP_FLOOR = 1024;

export class PendingTable {
  private readonly records = new Map<number, PendingRecord>();
  private active = 0;

  get size(): number {
    return this.active;
  }

  /** The active record of `key`, or undefined. */
  get(key: number): PendingOperation | undefined {
    const r = this.records.get(key);
    return r !== undefined && r.active ? r : undefined;
  }

  start(key: number, volume: number, node: number, op: OperationKind, volumeWide: boolean, startedAt: number): void {
    let r = this.records.get(key);
    if (r === undefined) {
      r = { volume, node, op, volumeWide, startedAt, active: true };
      this.records.set(key, r);
    } else {
      r.volume = volume;
      r.node = node;
      r.op = op;
      r.volumeWide = volumeWide;
      r.startedAt = startedAt;
      r.active = true;
    }
    this.active++;
  }

  /** Ends the active operation of `key` (no-op if none). */
  end(key: number): void {
    const r = this.records.get(key);
    if (r === undefined || !r.active) return;
    r.active = false;
    this.active--;
    const inactive = this.records.size - this.active;
    if (inactive > SWEEP_FLOOR && inactive > 2 * this.active) {
      for (const [k, rec] of this.records) if (!rec.active) this.records.delete(k);
    }
  }

  list(): PendingOperation[] {
    const out: PendingOperation[] = [];
    for (const r of this.records.values()) {
      if (r.active) out.push({ volume: r.volume, node: r.node, op: r.op, volumeWide: r.volumeWide, startedAt: r.startedAt });
    }
    return out;
  }
}
