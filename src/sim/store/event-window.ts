/**
 * The bounded history of committed changes of one resource that watches resume from: the last
 * `capacity` events, oldest first. A watch from resourceVersion R can be served only if no event
 * after R has been dropped; otherwise the caller answers 410 Gone and the client relists.
 *
 * The events are packed, not kept as objects: a ring of typed arrays (type and flags, rv) whose
 * position i is slot i of a ByteArena holding the event's key, JSON and, for MODIFIED, the JSON
 * before. The ring is FIFO, so the arena frees its records in write order and needs no
 * compaction. `after` builds CommittedEvents, with frames built on demand, for the events it
 * answers.
 */
import { ByteArena } from './byte-arena.js';
import { CommittedEvent } from './committed-event.js';
import type { ResourceName, StoreEventType } from './sim-store.js';

const TYPES: readonly StoreEventType[] = ['ADDED', 'MODIFIED', 'DELETED'];
const TYPE_MASK = 3;
/** The event's object is namespaced: its key is `namespace/name`. */
const NAMESPACED = 4;
/** The event carries the JSON before (MODIFIED). */
const HAS_PREV = 8;

export class EventWindow {
  private readonly arena = new ByteArena({ compact: false });
  private readonly cap: number;
  private flags = new Uint8Array(16);
  private rvs = new Float64Array(16);
  private head = 0; // ring position of the oldest event
  private length = 0;
  /** rv of the newest dropped event (0 while nothing was dropped). */
  private droppedRv = 0;

  constructor(
    readonly capacity: number,
    private readonly resource: ResourceName,
  ) {
    this.cap = Math.max(1, capacity);
  }

  push(ev: CommittedEvent): void {
    let pos: number;
    if (this.length === this.cap) {
      pos = this.head;
      this.droppedRv = this.rvs[pos];
      this.head = (this.head + 1) % this.cap;
    } else {
      // Not yet full: nothing was dropped, so the ring has not wrapped and head is 0.
      pos = this.length++;
      if (pos === this.rvs.length) this.grow();
      while (this.arena.slotLimit <= pos) this.arena.newSlot();
    }
    const ns = ev.namespace;
    const prev = ev.prevJson;
    this.flags[pos] = TYPES.indexOf(ev.type) | (ns !== undefined ? NAMESPACED : 0) | (prev !== undefined ? HAS_PREV : 0);
    this.rvs[pos] = ev.rv;
    this.arena.set(pos, ns !== undefined ? `${ns}/${ev.name}` : ev.name, ev.json, prev ?? '');
  }

  /** The oldest resourceVersion a watch can start from. */
  oldestResumable(): number {
    return this.droppedRv;
  }

  /** Retained events with rv > `rv`, oldest first; undefined when some of them were dropped. */
  after(rv: number): CommittedEvent[] | undefined {
    if (rv < this.droppedRv) return undefined;
    const cap = this.cap;
    // Binary search for the first event with rv > `rv` (the ring is ordered by rv).
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.rvs[(this.head + mid) % cap] <= rv) lo = mid + 1;
      else hi = mid;
    }
    const out: CommittedEvent[] = [];
    for (let i = lo; i < this.length; i++) out.push(this.event((this.head + i) % cap));
    return out;
  }

  /** The event at ring position `pos`, as a delivered event (its frames built on each call). */
  private event(pos: number): CommittedEvent {
    const f = this.flags[pos];
    const key = this.arena.text(pos, 0);
    const slash = f & NAMESPACED ? key.lastIndexOf('/') : -1; // names never hold '/', namespaces might
    const ns = slash >= 0 ? key.slice(0, slash) : undefined;
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    const prev = f & HAS_PREV ? this.arena.text(pos, 2) : undefined;
    const ev = new CommittedEvent(TYPES[f & TYPE_MASK], this.resource, this.rvs[pos], ns, name, this.arena.text(pos, 1), prev);
    ev.releaseFrame();
    return ev;
  }

  /** Doubles the ring's arrays (only while it fills, before it ever wraps). */
  private grow(): void {
    const n = Math.min(this.cap, this.rvs.length * 2);
    const flags = new Uint8Array(n);
    flags.set(this.flags);
    const rvs = new Float64Array(n);
    rvs.set(this.rvs);
    this.flags = flags;
    this.rvs = rvs;
  }
}
