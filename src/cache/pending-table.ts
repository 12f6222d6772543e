/**
 * PendingTable: the operations in flight, by numeric key (a pair slot or a volume-wide key,
 * see OperationTable). An open-addressing hash table over typed arrays (linear probing with
 * backward-shift deletion, so no tombstones; load at most 1/2): a start/complete pair costs a
 * few probes in a table as small as the number of operations in flight, and allocates nothing. A JS Map that
 * grows and shrinks around a handful of entries reallocates on almost every start/complete
 * (measured: 100-300 ns per pair against 50 ns).
 */
import type { OperationKind, PendingOperation } from './world-state.js';

const EMPTY = -1;

export class PendingTable {
  private keys = new Int32Array(64).fill(EMPTY);
  private volumes = new Int32Array(64);
  private nodes = new Int32Array(64);
  private ops = new Uint8Array(64);
  private wide = new Uint8Array(64);
  private started = new Float64Array(64);
  private live = 0;

  get size(): number {
    return this.live;
  }

  /** The operation pending on `key`, or undefined. */
  get(key: number): PendingOperation | undefined {
    const i = this.find(key);
    return i < 0 ? undefined : this.record(i);
  }

  /** Whether `key` is pending with operation `op`. */
  has(key: number, op: OperationKind): boolean {
    const i = this.find(key);
    return i >= 0 && this.ops[i] === (op === 'detach' ? 1 : 0);
  }

  /** Records a new operation on `key`, which must not be pending. */
  start(key: number, volume: number, node: number, op: OperationKind, volumeWide: boolean, startedAt: number): void {
    if ((this.live + 1) * 2 > this.keys.length) this.grow();
    const mask = this.keys.length - 1;
    let i = hash(key) & mask;
    while (this.keys[i] !== EMPTY) i = (i + 1) & mask;
    this.keys[i] = key;
    this.volumes[i] = volume;
    this.nodes[i] = node;
    this.ops[i] = op === 'detach' ? 1 : 0;
    this.wide[i] = volumeWide ? 1 : 0;
    this.started[i] = startedAt;
    this.live++;
  }

  /** Ends the operation on `key` if it is pending with operation `op`; false (no-op) otherwise. */
  end(key: number, op: OperationKind): boolean {
    let hole = this.find(key);
    if (hole < 0 || this.ops[hole] !== (op === 'detach' ? 1 : 0)) return false;
    this.live--;
    // Backward shift: pull later entries of the probe run into the hole when their home slot
    // is not between the hole and themselves, so that every lookup still finds them.
    const mask = this.keys.length - 1;
    for (let j = (hole + 1) & mask; this.keys[j] !== EMPTY; j = (j + 1) & mask) {
      const home = hash(this.keys[j]) & mask;
      if (((j - home) & mask) < ((j - hole) & mask)) continue;
      this.move(j, hole);
      hole = j;
    }
    this.keys[hole] = EMPTY;
    return true;
  }

  list(): PendingOperation[] {
    const out: PendingOperation[] = [];
    for (let i = 0; i < this.keys.length; i++) if (this.keys[i] >= 0) out.push(this.record(i));
    return out;
  }

  private find(key: number): number {
    const mask = this.keys.length - 1;
    for (let i = hash(key) & mask; ; i = (i + 1) & mask) {
      const k = this.keys[i];
      if (k === key) return i;
      if (k === EMPTY) return -1;
    }
  }

  private record(i: number): PendingOperation {
    return {
      volume: this.volumes[i],
      node: this.nodes[i],
      op: this.ops[i] === 1 ? 'detach' : 'attach',
      volumeWide: this.wide[i] === 1,
      startedAt: this.started[i],
    };
  }

  private move(from: number, to: number): void {
    this.keys[to] = this.keys[from];
    this.volumes[to] = this.volumes[from];
    this.nodes[to] = this.nodes[from];
    this.ops[to] = this.ops[from];
    this.wide[to] = this.wide[from];
    this.started[to] = this.started[from];
  }

  private grow(): void {
    const capacity = this.keys.length * 2;
    const old = { keys: this.keys, volumes: this.volumes, nodes: this.nodes, ops: this.ops, wide: this.wide, started: this.started };
    this.keys = new Int32Array(capacity).fill(EMPTY);
    this.volumes = new Int32Array(capacity);
    this.nodes = new Int32Array(capacity);
    this.ops = new Uint8Array(capacity);
    this.wide = new Uint8Array(capacity);
    this.started = new Float64Array(capacity);
    this.live = 0;
    for (let i = 0; i < old.keys.length; i++) {
      if (old.keys[i] < 0) continue;
      this.start(old.keys[i], old.volumes[i], old.nodes[i], old.ops[i] === 1 ? 'detach' : 'attach', old.wide[i] === 1, old.started[i]);
    }
  }
}

/** Fibonacci hashing: consecutive keys spread over the table. */
function hash(key: number): number {
  return Math.imul(key, 0x9e3779b1) >>> 7;
}
