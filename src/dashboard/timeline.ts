/**
 * Timeline: what the controller did to each volume and why, newest last, as told by the
 * reconciler, the executor and the populator through the ControllerObserver interface.
 *
 * Memory is bounded twice: at most `perVolume` entries per volume (the oldest go first) and at
 * most `maxEntries` in all (the globally oldest go first, whichever volume they belong to).
 *
 * Held off the JavaScript heap (a full timeline is `maxEntries` entries, which as objects would
 * be several hundred thousand for every major collection to mark): an entry lives in the
 * position of a global ring where it was inserted, its fields in typed arrays by position
 * (times as numbers, its kind and forced reason as small ints, its node and its text (pod name,
 * error, holders) as ids of a refcounted StringTable). A volume (an id of a second table) chains
 * its entries oldest first through the ring. The ring's next position holds the globally oldest
 * insertion: when that entry is still held (the per-volume cap may have dropped it) it is its
 * volume's oldest, and goes first. O(1) per event; O(entries of the volume) per read, which
 * decodes them (new objects the timeline does not keep).
 */
import type { ControllerEvent, ControllerObserver } from '../operations/controller-observer.js';
import { grownInt32 } from '../packed/byte-arena.js';
import { StringTable } from '../packed/string-table.js';

export type TimelineKind = ControllerEvent['kind'];

export interface TimelineEntry {
  /** Controller-clock ms. */
  readonly at: number;
  readonly kind: TimelineKind;
  readonly node: string;
  /** ns/name of the pod that joined, or the UID of the pod that left a pair. */
  readonly pod?: string;
  readonly forced?: 'timeout' | 'out-of-service';
  readonly error?: string;
  readonly retryAt?: number;
  readonly holders?: string[];
}

export interface Timeline extends ControllerObserver {
  /** The volume's entries, oldest first; empty for an unknown volume. */
  entries(volume: string): readonly TimelineEntry[];
  /** Entries held in all. */
  size(): number;
  /** Changes whenever an entry is added (the stream's `volume:<u>` topic compares it per volume). */
  version(volume: string): number;
}

export interface TimelineDeps {
  readonly now: () => number;
  /** Default {@link DEFAULT_MAX_ENTRIES}. */
  readonly maxEntries?: number;
  /** Default {@link DEFAULT_PER_VOLUME}. */
  readonly perVolume?: number;
}

export const DEFAULT_MAX_ENTRIES = 100_000;
export const DEFAULT_PER_VOLUME = 50;

export function createTimeline(deps: TimelineDeps): Timeline {
  return new RingTimeline(deps);
}

const KIND_CODE: Readonly<Record<TimelineKind, number>> = {
  'desired-added': 0, 'desired-removed': 1, 'attach-started': 2, 'detach-started': 3, 'attach-succeeded': 4,
  'detach-succeeded': 5, 'attach-failed': 6, 'detach-failed': 7, 'multi-attach-blocked': 8,
};
const KINDS = Object.keys(KIND_CODE) as TimelineKind[];
const FORCED = [undefined, 'timeout', 'out-of-service'] as const;
const NONE = -1;
/** Joins a multi-attach's holders (node names, which cannot hold it) into one string. */
const HOLDER_SEP = '\n';

class RingTimeline implements Timeline {
  private readonly max: number;
  private readonly perVolume: number;
  private readonly volumes = new StringTable();
  private readonly texts = new StringTable();
  // By volume id: its oldest and newest positions, its entry count, its version.
  private vHead = new Int32Array(16);
  private vTail = new Int32Array(16);
  private vCount = new Int32Array(16);
  private vVersion = new Float64Array(16);
  // By ring position (up to `max`, grown as first written): the entry's volume (NONE: no entry),
  // the next position of its volume, time, retry time (NaN: none), node, text (NONE: none), kind, forced reason.
  private pVolume = new Int32Array(0);
  private pNext = new Int32Array(0);
  private pAt = new Float64Array(0);
  private pRetryAt = new Float64Array(0);
  private pNode = new Int32Array(0);
  private pText = new Int32Array(0);
  private pKind = new Uint8Array(0);
  private pForced = new Uint8Array(0);
  private head = 0;
  private seq = 0;
  private total = 0;

  constructor(private readonly d: TimelineDeps) {
    this.max = Math.max(1, d.maxEntries ?? DEFAULT_MAX_ENTRIES);
    this.perVolume = Math.max(1, d.perVolume ?? DEFAULT_PER_VOLUME);
  }

  observe(e: ControllerEvent): void {
    const at = this.d.now();
    const seq = ++this.seq;
    const pos = this.head;
    if (pos >= this.pVolume.length) this.growRing();
    // The position about to be written holds the globally oldest insertion (dropped before the
    // volume is looked up: that may drop the volume's last entry, and its id).
    else if (this.pVolume[pos] !== NONE) this.dropOldest(this.pVolume[pos]);
    let v = this.volumes.find(e.volume);
    if (v < 0) {
      v = this.volumes.acquire(e.volume);
      if (v >= this.vHead.length) this.growVolumes(v);
      this.vHead[v] = NONE;
      this.vTail[v] = NONE;
      this.vCount[v] = 0;
    }
    this.write(pos, v, at, e);
    const tail = this.vTail[v];
    if (tail === NONE) this.vHead[v] = pos;
    else this.pNext[tail] = pos;
    this.vTail[v] = pos;
    this.vVersion[v] = seq;
    this.head = (pos + 1) % this.max;
    this.total++;
    if (++this.vCount[v] > this.perVolume) this.dropOldest(v);
  }

  entries(volume: string): readonly TimelineEntry[] {
    const v = this.volumes.find(volume);
    if (v < 0) return [];
    const out: TimelineEntry[] = [];
    for (let p = this.vHead[v]; p !== NONE; p = this.pNext[p]) out.push(this.read(p));
    return out;
  }

  size(): number {
    return this.total;
  }

  version(volume: string): number {
    const v = this.volumes.find(volume);
    return v < 0 ? 0 : this.vVersion[v];
  }

  private write(pos: number, v: number, at: number, e: ControllerEvent): void {
    let text = NONE;
    let forced = 0;
    let retryAt = NaN;
    switch (e.kind) {
      case 'desired-added':
      case 'desired-removed':
        if (e.pod !== undefined) text = this.texts.acquire(e.pod);
        break;
      case 'detach-started':
        forced = e.forced === undefined ? 0 : FORCED.indexOf(e.forced);
        break;
      case 'attach-failed':
      case 'detach-failed':
        text = this.texts.acquire(e.error);
        if (e.retryAt !== undefined) retryAt = e.retryAt;
        break;
      case 'multi-attach-blocked':
        if (e.holders.length > 0) text = this.texts.acquire(e.holders.join(HOLDER_SEP));
        break;
      default:
        break;
    }
    this.pVolume[pos] = v;
    this.pNext[pos] = NONE;
    this.pAt[pos] = at;
    this.pRetryAt[pos] = retryAt;
    this.pNode[pos] = this.texts.acquire(e.node);
    this.pText[pos] = text;
    this.pKind[pos] = KIND_CODE[e.kind];
    this.pForced[pos] = forced;
  }

  private read(p: number): TimelineEntry {
    const kind = KINDS[this.pKind[p]];
    const out: { -readonly [K in keyof TimelineEntry]: TimelineEntry[K] } = { at: this.pAt[p], kind, node: this.texts.text(this.pNode[p]) };
    const text = this.pText[p];
    switch (kind) {
      case 'desired-added':
      case 'desired-removed':
        if (text !== NONE) out.pod = this.texts.text(text);
        break;
      case 'detach-started': {
        const forced = FORCED[this.pForced[p]];
        if (forced !== undefined) out.forced = forced;
        break;
      }
      case 'attach-failed':
      case 'detach-failed':
        out.error = this.texts.text(text);
        if (!Number.isNaN(this.pRetryAt[p])) out.retryAt = this.pRetryAt[p];
        break;
      case 'multi-attach-blocked':
        out.holders = text === NONE ? [] : this.texts.text(text).split(HOLDER_SEP);
        break;
      default:
        break;
    }
    return out;
  }

  /** Drops volume `v`'s oldest entry; its last entry frees the volume's id. */
  private dropOldest(v: number): void {
    const p = this.vHead[v];
    const next = this.pNext[p];
    this.vHead[v] = next;
    if (next === NONE) this.vTail[v] = NONE;
    this.texts.release(this.pNode[p]);
    if (this.pText[p] !== NONE) this.texts.release(this.pText[p]);
    this.pVolume[p] = NONE;
    this.total--;
    if (--this.vCount[v] === 0) this.volumes.release(v);
  }

  private growRing(): void {
    const old = this.pVolume.length;
    const n = Math.min(this.max, Math.max(64, old * 2));
    this.pVolume = grownInt32(this.pVolume, n);
    this.pVolume.fill(NONE, old);
    this.pNext = grownInt32(this.pNext, n);
    this.pAt = grownFloat64(this.pAt, n);
    this.pRetryAt = grownFloat64(this.pRetryAt, n);
    this.pNode = grownInt32(this.pNode, n);
    this.pText = grownInt32(this.pText, n);
    this.pKind = grownUint8(this.pKind, n);
    this.pForced = grownUint8(this.pForced, n);
  }

  private growVolumes(v: number): void {
    const n = Math.max(v + 1, this.vHead.length * 2);
    this.vHead = grownInt32(this.vHead, n);
    this.vTail = grownInt32(this.vTail, n);
    this.vCount = grownInt32(this.vCount, n);
    this.vVersion = grownFloat64(this.vVersion, n);
  }
}

function grownFloat64(a: Float64Array, n: number) {
  const b = new Float64Array(n);
  b.set(a);
  return b;
}

function grownUint8(a: Uint8Array, n: number) {
  const b = new Uint8Array(n);
  b.set(a);
  return b;
}
