/**
 * The bounded history of committed changes that watches resume from: the last `capacity`
 * events, oldest first. A watch from resourceVersion R can be served only if no event after
 * R has been dropped; otherwise the caller answers 410 Gone and the client relists.
 */
import type { KubeObject, ResourceName, StoreEvent, StoreEventType } from './sim-store.js';

/** A committed change, with its wire frame built once and shared by every watcher. */
export class CommittedEvent implements StoreEvent {
  private frameBytes: Buffer | undefined;
  private delivered = false;
  private lent: KubeObject | undefined;

  constructor(
    readonly type: StoreEventType,
    readonly resource: ResourceName,
    readonly rv: number,
    readonly namespace: string | undefined,
    readonly name: string,
    readonly json: string,
    /** For MODIFIED: the object as it was before, so filtered watches can tell entering from leaving. */
    readonly prevJson?: string,
  ) {}

  object(): KubeObject {
    return JSON.parse(this.json) as KubeObject;
  }

  /**
   * The committed object, read only: while the store delivers this event, the object the JSON
   * was serialised from (no parse); otherwise a fresh parse.
   */
  view(): KubeObject {
    return this.lent ?? this.object();
  }

  /** Lends the committed object for the time of delivery (the store's CommitBus only). */
  lend(obj: KubeObject | undefined): void {
    this.lent = obj;
  }

  /** Parses `prevJson` (MODIFIED only; a fresh copy each call). Not cached: window events would keep it alive. */
  previous(): KubeObject | undefined {
    return this.prevJson === undefined ? undefined : (JSON.parse(this.prevJson) as KubeObject);
  }

  /** The wire frame of this change with another type (a filtered watch sees MODIFIED as ADDED or DELETED). */
  frameAs(type: StoreEventType): Buffer {
    return type === this.type ? this.frame() : this.build(type);
  }

  /**
   * `{"type":…,"object":…}\n`, the watch stream line for this event: one Buffer shared by the
   * live watchers while the event is delivered, a new one for each replay after.
   */
  frame(): Buffer {
    if (this.frameBytes) return this.frameBytes;
    const bytes = this.build(this.type);
    if (!this.delivered) this.frameBytes = bytes;
    return bytes;
  }

  private build(type: StoreEventType): Buffer {
    return Buffer.from(`{"type":"${type}","object":${this.json}}\n`);
  }

  /**
   * Called once the event has been delivered: the live watchers hold their own reference to the
   * frame until it is written, and the window keeps none. Kept, the frames of full windows were
   * ~1 KB of Buffer memory per event outside the JS heap, whose growth made V8 run a full GC
   * every few seconds in the simulator under churn (70–120 ms pauses every ~7 s at 10k nodes).
   */
  releaseFrame(): void {
    this.frameBytes = undefined;
    this.delivered = true;
  }
}

export class EventWindow {
  private readonly ring: Array<CommittedEvent | undefined>;
  private head = 0; // index of the oldest event
  private length = 0;
  /** rv of the newest dropped event (0 while nothing was dropped). */
  private droppedRv = 0;

  constructor(readonly capacity: number) {
    this.ring = new Array<CommittedEvent | undefined>(Math.max(1, capacity));
  }

  push(ev: CommittedEvent): void {
    const cap = this.ring.length;
    if (this.length === cap) {
      const oldest = this.ring[this.head];
      if (oldest) this.droppedRv = oldest.rv;
      this.ring[this.head] = ev;
      this.head = (this.head + 1) % cap;
      return;
    }
    this.ring[(this.head + this.length) % cap] = ev;
    this.length++;
  }

  /** The oldest resourceVersion a watch can start from. */
  oldestResumable(): number {
    return this.droppedRv;
  }

  /** Retained events with rv > `rv`, oldest first; undefined when some of them were dropped. */
  after(rv: number): CommittedEvent[] | undefined {
    if (rv < this.droppedRv) return undefined;
    const cap = this.ring.length;
    // Binary search for the first event with rv > `rv` (the ring is ordered by rv).
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.ring[(this.head + mid) % cap] as CommittedEvent).rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    const out: CommittedEvent[] = [];
    for (let i = lo; i < this.length; i++) out.push(this.ring[(this.head + i) % cap] as CommittedEvent);
    return out;
  }
}
