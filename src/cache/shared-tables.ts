/**
 * SharedTables: the packed tables in one shared `WebAssembly.Memory`, laid out back to back
 * after the header (assembly/abi.ts), and the typed-array views the main thread uses on them.
 *
 * Growth: a table grows by 1.5x (rounded to CAPACITY_ALIGN). All tables keep their order, so a
 * relayout only moves tables upwards: the memory grows first, then tables are moved from the
 * last to the first (memmove) and their new tails zeroed, then the header is rewritten and
 * the views rebuilt. Worker threads hold no views; the kernel reads the header on every call.
 * Callers must not hold a view across any call that can grow a table.
 */
import {
  ABI_MAGIC, CAPACITY_ALIGN, HEADER_ADDR, HEADER_SIZE, H_LAYOUT_GENERATION, H_MAGIC, H_NODE_CAPACITY,
  H_NODE_FLAGS, H_PAIR_CAPACITY, H_PAIR_FLAGS, H_PAIR_RECORDS, H_VOLUME_CAPACITY, H_VOLUME_WORDS,
  MEMORY_INITIAL_PAGES, MEMORY_MAXIMUM_PAGES, PAIR_RECORD_SIZE, VOLUME_WORD_SIZE, VW_FLAGS_BYTE, VW_HEAD_MASK,
  VW_HEAD_NIL,
} from '../kernel/abi.js';
import { fleetError } from '../errors/index.js';

const PAGE = 65536;

/** Pair record fields as Uint32Array word offsets (record = PAIR_RECORD_WORDS words). */
export const PAIR_RECORD_WORDS = PAIR_RECORD_SIZE / 4;

export interface Capacities {
  nodes: number;
  volumes: number;
  pairs: number;
  scratchBytes: number;
}

interface Table {
  name: string;
  /** Bytes per slot. */
  width: number;
  kind: 'nodes' | 'volumes' | 'pairs' | 'scratch';
}

// Order matters: the header points at the first four kernel tables by name.
const TABLES: Table[] = [
  { name: 'nodeFlags', width: 1, kind: 'nodes' },
  { name: 'nodeHead', width: 4, kind: 'nodes' },
  { name: 'volumeWords', width: VOLUME_WORD_SIZE, kind: 'volumes' },
  { name: 'pairFlags', width: 2, kind: 'pairs' },
  { name: 'pairRecords', width: PAIR_RECORD_SIZE, kind: 'pairs' },
  { name: 'scratch', width: 1, kind: 'scratch' },
];

const align = (n: number, a: number) => Math.ceil(n / a) * a;
/** A table capacity for at least `n` slots (CAPACITY_ALIGN multiple, never 0). */
export const alignCapacity = (n: number) => Math.max(CAPACITY_ALIGN, align(n, CAPACITY_ALIGN));

export class SharedTables {
  readonly memory: WebAssembly.Memory;
  caps: Capacities;
  offsets: Record<string, number> = {};
  nodeFlags!: Uint8Array;
  nodeHead!: Uint32Array;
  /** Volume words (head | flags << 24); use vflags/setVflags and vhead/setVhead. */
  private volumeWords!: Uint32Array;
  private volumeBytes!: Uint8Array;
  pairFlags!: Uint16Array;
  pairRecords!: Uint32Array;
  bytes!: Uint8Array;
  private generation = 0;

  constructor(initial: Partial<Capacities>) {
    this.caps = {
      nodes: alignCapacity(initial.nodes ?? 1024),
      volumes: alignCapacity(initial.volumes ?? 1024),
      pairs: alignCapacity(initial.pairs ?? 4096),
      scratchBytes: align(initial.scratchBytes ?? 65536, 16),
    };
    const end = this.computeOffsets(this.caps).end;
    const pages = Math.max(MEMORY_INITIAL_PAGES, Math.ceil(end / PAGE));
    if (pages > MEMORY_MAXIMUM_PAGES) throw fleetError('FA_ERR_STATE_CAPACITY', `initial capacities need ${pages} pages`);
    this.memory = new WebAssembly.Memory({ initial: pages, maximum: MEMORY_MAXIMUM_PAGES, shared: true });
    this.offsets = this.computeOffsets(this.caps).offsets;
    this.rebuildViews();
    this.writeHeader();
  }

  /** Flags of a volume (VF_*); undefined for an id outside the table. */
  vflags(volume: number): number {
    return this.volumeBytes[volume * VOLUME_WORD_SIZE + VW_FLAGS_BYTE];
  }

  setVflags(volume: number, flags: number): void {
    this.volumeBytes[volume * VOLUME_WORD_SIZE + VW_FLAGS_BYTE] = flags;
  }

  /** First pair slot of a volume's list, or VW_HEAD_NIL (pair-links END). */
  vhead(volume: number): number {
    return this.volumeWords[volume] & VW_HEAD_MASK;
  }

  /** `slot` is a pair slot or VW_HEAD_NIL. */
  setVhead(volume: number, slot: number): void {
    this.volumeWords[volume] = (this.volumeWords[volume] & ~VW_HEAD_MASK) | slot;
  }

  /** Makes room for slot index `slot` of `kind` (no-op if it fits): the table grows to
   * `capacity` slots if given, else by 1.5x, and always to more than `slot`. */
  ensure(kind: 'nodes' | 'volumes' | 'pairs', slot: number, capacity?: number): void {
    if (slot < this.caps[kind]) return;
    if (kind === 'pairs' && slot >= VW_HEAD_NIL) throw fleetError('FA_ERR_STATE_CAPACITY', `more than ${VW_HEAD_NIL} pairs`);
    const want = capacity ?? Math.floor(this.caps[kind] * 1.5);
    this.relayout({ ...this.caps, [kind]: alignCapacity(Math.max(slot + 1, want)) });
  }

  /** Makes the scratch region at least `bytes` long; its contents are not preserved. */
  ensureScratch(bytes: number): void {
    if (bytes <= this.caps.scratchBytes) return;
    this.relayout({ ...this.caps, scratchBytes: align(Math.max(bytes, this.caps.scratchBytes * 1.5), 16) });
  }

  /** Total bytes of the memory, and of the tables in use (header and scratch excluded). */
  sizes(): { memoryBytes: number; tableBytes: number } {
    return { memoryBytes: this.memory.buffer.byteLength, tableBytes: this.offsets.scratch - this.offsets.nodeFlags };
  }

  tableBytes(name: string): number {
    const t = TABLES.find((x) => x.name === name);
    if (!t || t.kind === 'scratch') return this.caps.scratchBytes;
    return t.width * this.caps[t.kind];
  }

  private computeOffsets(caps: Capacities): { offsets: Record<string, number>; end: number } {
    const offsets: Record<string, number> = {};
    let at = HEADER_ADDR + HEADER_SIZE;
    for (const t of TABLES) {
      at = align(at, 16);
      offsets[t.name] = at;
      at += t.kind === 'scratch' ? caps.scratchBytes : t.width * caps[t.kind];
    }
    return { offsets, end: at };
  }

  private relayout(caps: Capacities): void {
    const { offsets, end } = this.computeOffsets(caps);
    const needPages = Math.ceil(end / PAGE);
    const havePages = this.memory.buffer.byteLength / PAGE;
    if (needPages > MEMORY_MAXIMUM_PAGES) {
      throw fleetError('FA_ERR_STATE_CAPACITY', `tables need ${needPages} pages, the memory maximum is ${MEMORY_MAXIMUM_PAGES}`);
    }
    if (needPages > havePages) this.memory.grow(needPages - havePages);
    const bytes = new Uint8Array(this.memory.buffer);
    // Move from the last table down: each table only moves up, never over one not yet moved.
    for (let i = TABLES.length - 1; i >= 0; i--) {
      const t = TABLES[i];
      if (t.kind === 'scratch') continue;
      const oldLen = t.width * this.caps[t.kind];
      const newLen = t.width * caps[t.kind];
      const from = this.offsets[t.name];
      const to = offsets[t.name];
      if (to !== from) bytes.copyWithin(to, from, from + oldLen);
      bytes.fill(0, to + oldLen, to + newLen);
    }
    this.caps = caps;
    this.offsets = offsets;
    this.rebuildViews();
    this.writeHeader();
  }

  private rebuildViews(): void {
    const buf = this.memory.buffer;
    const o = this.offsets;
    const c = this.caps;
    this.bytes = new Uint8Array(buf);
    this.nodeFlags = new Uint8Array(buf, o.nodeFlags, c.nodes);
    this.nodeHead = new Uint32Array(buf, o.nodeHead, c.nodes);
    this.volumeWords = new Uint32Array(buf, o.volumeWords, c.volumes);
    this.volumeBytes = new Uint8Array(buf, o.volumeWords, c.volumes * VOLUME_WORD_SIZE);
    this.pairFlags = new Uint16Array(buf, o.pairFlags, c.pairs);
    this.pairRecords = new Uint32Array(buf, o.pairRecords, c.pairs * PAIR_RECORD_WORDS);
  }

  private writeHeader(): void {
    const h = new DataView(this.memory.buffer, HEADER_ADDR, HEADER_SIZE);
    const o = this.offsets;
    h.setUint32(H_PAIR_FLAGS, o.pairFlags, true);
    h.setUint32(H_PAIR_RECORDS, o.pairRecords, true);
    h.setUint32(H_NODE_FLAGS, o.nodeFlags, true);
    h.setUint32(H_VOLUME_WORDS, o.volumeWords, true);
    h.setUint32(H_PAIR_CAPACITY, this.caps.pairs, true);
    h.setUint32(H_NODE_CAPACITY, this.caps.nodes, true);
    h.setUint32(H_VOLUME_CAPACITY, this.caps.volumes, true);
    h.setUint32(H_LAYOUT_GENERATION, ++this.generation, true);
    h.setUint32(H_MAGIC, ABI_MAGIC, true);
  }
}
