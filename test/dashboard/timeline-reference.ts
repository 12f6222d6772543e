/**
 * The timeline as plain objects (an array of entries per volume): the reference model the packed
 * timeline (src/dashboard/timeline.ts) is checked against by timeline.test.ts.
 */
import type { ControllerEvent } from '../../src/operations/controller-observer.js';
import type { Timeline, TimelineDeps, TimelineEntry } from '../../src/dashboard/timeline.js';

interface Slot {
  entries: Array<TimelineEntry & { readonly seq: number }>;
  version: number;
}

export class ReferenceTimeline implements Timeline {
  private readonly volumes = new Map<string, Slot>();
  private readonly max: number;
  private readonly perVolume: number;
  private readonly ringVolume: Array<string | undefined>;
  private readonly ringSeq: Float64Array;
  private head = 0;
  private seq = 0;
  private total = 0;

  constructor(private readonly d: TimelineDeps) {
    this.max = Math.max(1, d.maxEntries ?? 100_000);
    this.perVolume = Math.max(1, d.perVolume ?? 50);
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
