/**
 * The bounded history of committed changes of one resource that watches resume from: the last
 * `capacity` events, oldest first. A watch from resourceVersion R can be served only if no event
 * after R has been dropped; otherwise the caller answers 410 Gone and the client relists.
 *
 * The events are packed, not kept as objects: a ring of typed arrays (type and flags, rv) whose
 * position i is slot i of a ByteArena holding the event's key, JSON and, for MODIFIED, the JSON
 * before. The ring is FIFO, so the arena frees its records in write order and needs no
 * compaction.
 *
 * A MODIFIED event's JSON before is most often the JSON of the object's previous event, still in
 * the window: the record then holds no copy, only that event's ring position. When the earlier
 * event is dropped its JSON bytes are copied for the later one into a second arena, whose records
 * die in the order of the events holding them, not of the writes, so that one compacts.
 *
 * `after` answers ReplayedEvents that read the arena's chunks directly: a frame is the JSON's
 * bytes copied behind the frame's head, with no decode and encode. The chunks they read are
 * lent: released, they are left to the collector, never reused for new records.
 */
import { ByteArena } from '../../packed/byte-arena.js';
import { CommittedEvent } from './committed-event.js';
import type { ResourceName, StoreEventType } from './sim-store.js';

const TYPES: readonly StoreEventType[] = ['ADDED', 'MODIFIED', 'DELETED'];
const TYPE_MASK = 3;
/** The event's object is namespaced: its key is `namespace/name`. */
const NAMESPACED = 4;
/** The event carries the JSON before (MODIFIED). */
const HAS_PREV = 8;
/** The JSON before is that of an earlier event in the window (`prevPos`), not a copy in the record. */
const PREV_REF = 16;
/** The JSON before was copied from a dropped event into `prevArena` (slot: the ring position). */
const PREV_COPY = 32;
const NO_POS = -1;

/** `{"type":"…","object":` of each type, as the wire frame starts. */
const FRAME_HEADS = new Map(TYPES.map((t) => [t, Buffer.from(`{"type":"${t}","object":`)]));

/**
 * An event replayed from the window: its JSON stays in the arena's chunk (lent, so never
 * rewritten) until it is read, and its frame is copied from those bytes, not decoded and
 * encoded again.
 */
class ReplayedEvent extends CommittedEvent {
  constructor(
    type: StoreEventType,
    resource: ResourceName,
    rv: number,
    namespace: string | undefined,
    name: string,
    private readonly buf: Buffer,
    private readonly at: number,
    private readonly len: number,
    private readonly prevBuf: Buffer | undefined,
    private readonly prevAt: number,
    private readonly prevLen: number,
  ) {
    super(type, resource, rv, namespace, name, '');
    this.releaseFrame();
  }

  override get json(): string {
    return this.buf.toString('utf8', this.at, this.at + this.len);
  }

  override get prevJson(): string | undefined {
    return this.prevBuf === undefined ? undefined : this.prevBuf.toString('utf8', this.prevAt, this.prevAt + this.prevLen);
  }

  protected override build(type: StoreEventType): Buffer {
    const head = FRAME_HEADS.get(type) as Buffer;
    const h = head.length;
    const out = Buffer.allocUnsafe(h + this.len + 2);
    head.copy(out, 0);
    this.buf.copy(out, h, this.at, this.at + this.len);
    out[h + this.len] = 0x7d; // }
    out[h + this.len + 1] = 0x0a; // \n
    return out;
  }
}

export class EventWindow {
  private readonly arena: ByteArena;
  /**
   * The JSON before of events whose earlier event was dropped first. Its records are freed in
   * the order of the events that hold them, not in the order written, so it compacts.
   */
  private readonly prevArena: ByteArena;
  private readonly cap: number;
  private flags = new Uint8Array(16);
  private rvs = new Float64Array(16);
  /** For a PREV_REF event, the ring position of the event whose JSON is its JSON before. */
  private prevPos = new Int32Array(16);
  /** The ring position of the PREV_REF event that refers to this one (NO_POS: none). */
  private referrer = new Int32Array(16).fill(NO_POS);
  private head = 0; // ring position of the oldest event
  private length = 0;
  /** rv of the newest dropped event (0 while nothing was dropped). */
  private droppedRv = 0;

  constructor(
    readonly capacity: number,
    private readonly resource: ResourceName,
    /** The arenas' chunk size (tests: small, so that chunks are released and reused). */
    chunkBytes?: number,
  ) {
    this.cap = Math.max(1, capacity);
    this.arena = new ByteArena({ compact: false, chunkBytes });
    this.prevArena = new ByteArena({ chunkBytes });
  }

  /**
   * Records `ev`. For MODIFIED, `prevRv` is the resourceVersion of the JSON before: when the
   * event that committed it is still in the window, the record refers to it instead of holding
   * a copy, and the copy is made, bytewise, only when that event is dropped.
   */
  push(ev: CommittedEvent, prevRv?: number): void {
    let pos: number;
    if (this.length === this.cap) {
      pos = this.head;
      this.droppedRv = this.rvs[pos];
      this.head = (this.head + 1) % this.cap;
      const r = this.referrer[pos];
      if (r !== NO_POS) {
        // The dropped event's JSON is a later event's JSON before: copy its bytes for that one.
        const prevArena = this.prevArena;
        while (prevArena.slotLimit <= r) prevArena.newSlot();
        prevArena.setBytes(r, this.arena.chunkOf(pos), this.arena.start(pos, 1), this.arena.length(pos, 1));
        this.flags[r] = (this.flags[r] & ~PREV_REF) | PREV_COPY;
        this.referrer[pos] = NO_POS;
      }
      if (this.flags[pos] & PREV_COPY) this.prevArena.clear(pos);
      this.length--;
    } else {
      // Not yet full: nothing was dropped, so the ring has not wrapped and head is 0.
      pos = this.length;
      if (pos === this.rvs.length) this.grow();
      while (this.arena.slotLimit <= pos) this.arena.newSlot();
    }
    const ns = ev.namespace;
    const prev = ev.prevJson;
    const key = ns !== undefined ? `${ns}/${ev.name}` : ev.name;
    const ref = prev !== undefined && prevRv !== undefined ? this.refFor(prevRv, prev) : NO_POS;
    this.flags[pos] = TYPES.indexOf(ev.type) | (ns !== undefined ? NAMESPACED : 0) | (prev !== undefined ? HAS_PREV : 0) | (ref !== NO_POS ? PREV_REF : 0);
    this.rvs[pos] = ev.rv;
    this.length++;
    if (ref !== NO_POS) {
      this.prevPos[pos] = ref;
      this.referrer[ref] = pos;
      this.arena.set(pos, key, ev.json);
    } else this.arena.set(pos, key, ev.json, prev ?? '');
  }

  /** The ring position of the retained event with resourceVersion `rv` whose JSON is `json`'s length, or NO_POS. */
  private refFor(rv: number, json: string): number {
    if (this.length === 0 || rv <= this.droppedRv) return NO_POS;
    const cap = this.cap;
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.rvs[(this.head + mid) % cap] < rv) lo = mid + 1;
      else hi = mid;
    }
    if (lo === this.length) return NO_POS;
    const pos = (this.head + lo) % cap;
    if (this.rvs[pos] !== rv || (this.flags[pos] & TYPE_MASK) === 2 || this.referrer[pos] !== NO_POS) return NO_POS;
    // The store's JSON before is the JSON committed at its resourceVersion, so the rv names it; the
    // length is a cheap check (UTF-8 takes at least a byte per UTF-16 unit, at most three).
    const len = this.arena.length(pos, 1);
    return len >= json.length && len <= json.length * 3 ? pos : NO_POS;
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

  /** The event at ring position `pos`, as a replayed event (its frames built on each call from the arena's bytes). */
  private event(pos: number): CommittedEvent {
    const f = this.flags[pos];
    const arena = this.arena;
    const key = arena.text(pos, 0);
    const slash = f & NAMESPACED ? key.lastIndexOf('/') : -1; // names never hold '/', namespaces might
    const ns = slash >= 0 ? key.slice(0, slash) : undefined;
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    arena.lend(pos);
    let prevBuf: Buffer | undefined;
    let prevAt = 0;
    let prevLen = 0;
    if (f & HAS_PREV) {
      const from = f & PREV_COPY ? this.prevArena : arena;
      const src = f & PREV_REF ? this.prevPos[pos] : pos;
      const part = f & PREV_REF ? 1 : f & PREV_COPY ? 0 : 2;
      if (from !== arena || src !== pos) from.lend(src);
      prevBuf = from.chunkOf(src);
      prevAt = from.start(src, part);
      prevLen = from.length(src, part);
    }
    return new ReplayedEvent(TYPES[f & TYPE_MASK], this.resource, this.rvs[pos], ns, name, arena.chunkOf(pos), arena.start(pos, 1), arena.length(pos, 1), prevBuf, prevAt, prevLen);
  }

  /** Doubles the ring's arrays (only while it fills, before it ever wraps). */
  private grow(): void {
    const n = Math.min(this.cap, this.rvs.length * 2);
    const flags = new Uint8Array(n);
    flags.set(this.flags);
    const rvs = new Float64Array(n);
    rvs.set(this.rvs);
    const prevPos = new Int32Array(n);
    prevPos.set(this.prevPos);
    const referrer = new Int32Array(n).fill(NO_POS);
    referrer.set(this.referrer);
    this.flags = flags;
    this.rvs = rvs;
    this.prevPos = prevPos;
    this.referrer = referrer;
  }
}
