/**
 * Timeline: what the controller did to each volume and why, newest last, as told by the
 * reconciler, the executor and the populator through the ControllerObserver interface.
 *
 * Memory is bounded twice: at most `perVolume` entries per volume (the oldest go first) and at
 * most `maxEntries` in all (the globally oldest go first, whichever volume they belong to). A
 * global ring of (volume, seq) records the order of insertion; an eviction from it removes the
 * volume's oldest entry only if that is still the one recorded (the per-volume cap may have
 * taken it already). O(1) per event; O(entries of the volume) per read.
 */
import type { ControllerEvent, ControllerObserver } from '../operations/controller-observer.js';

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

interface Slot {
  entries: Array<TimelineEntry & { readonly seq: number }>;
  version: number;
}

export function createTimeline(deps: TimelineDeps): Timeline {
  return new RingTimeline(deps);
}

class RingTimeline implements Timeline {
  private readonly volumes = new Map<string, Slot>();
  private readonly max: number;
  private readonly perVolume: number;
  private readonly ringVolume: Array<string | undefined>;
  private readonly ringSeq: Float64Array;
  private head = 0;
  private seq = 0;
  private total = 0;

  constructor(private readonly d: TimelineDeps) {
    this.max = Math.max(1, d.maxEntries ?? DEFAULT_MAX_ENTRIES);
    this.perVolume = Math.max(1, d.perVolume ?? DEFAULT_PER_VOLUME);
    this.ringVolume = new Array<string | undefined>(this.max);
    this.ringSeq = new Float64Array(this.max);
  }

  observe(e: ControllerEvent): void {
    const entry = toEntry(e, this.d.now(), ++this.seq);
    // The ring slot about to be overwritten holds the globally oldest insertion (evicted before
    // the volume's slot is looked up: the eviction may drop that very slot).
    const evicted = this.ringVolume[this.head];
    if (evicted !== undefined) this.evict(evicted, this.ringSeq[this.head]);
    let slot = this.volumes.get(e.volume);
    if (!slot) {
      slot = { entries: [], version: 0 };
      this.volumes.set(e.volume, slot);
    }
    this.ringVolume[this.head] = e.volume;
    this.ringSeq[this.head] = entry.seq;
    this.head = (this.head + 1) % this.max;
    slot.entries.push(entry);
    slot.version = entry.seq;
    this.total++;
    if (slot.entries.length > this.perVolume) {
      slot.entries.shift();
      this.total--;
    }
  }

  private evict(volume: string, seq: number): void {
    const slot = this.volumes.get(volume);
    if (!slot || slot.entries.length === 0 || slot.entries[0].seq !== seq) return;
    slot.entries.shift();
    this.total--;
    if (slot.entries.length === 0) this.volumes.delete(volume);
  }

  entries(volume: string): readonly TimelineEntry[] {
    return (this.volumes.get(volume)?.entries ?? []).map(({ seq: _seq, ...rest }) => rest);
  }

  size(): number {
    return this.total;
  }

  version(volume: string): number {
    return this.volumes.get(volume)?.version ?? 0;
  }
}

function toEntry(e: ControllerEvent, at: number, seq: number): TimelineEntry & { seq: number } {
  const out: TimelineEntry & { seq: number } = { at, kind: e.kind, node: e.node, seq };
  switch (e.kind) {
    case 'desired-added':
    case 'desired-removed':
      return e.pod === undefined ? out : { ...out, pod: e.pod };
    case 'detach-started':
      return e.forced === undefined ? out : { ...out, forced: e.forced };
    case 'attach-failed':
    case 'detach-failed':
      return e.retryAt === undefined ? { ...out, error: e.error } : { ...out, error: e.error, retryAt: e.retryAt };
    case 'multi-attach-blocked':
      return { ...out, holders: [...e.holders] };
    default:
      return out;
  }
}
