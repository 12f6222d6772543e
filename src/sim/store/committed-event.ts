/**
 * A committed change as the store delivers it and a watch replays it: its type, resource,
 * resourceVersion, object name and JSON (and, for MODIFIED, the JSON before), with its wire
 * frame built on demand.
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
    private readonly jsonText: string,
    private readonly prevText?: string,
  ) {}

  get json(): string {
    return this.jsonText;
  }

  /** For MODIFIED: the object as it was before, so filtered watches can tell entering from leaving. */
  get prevJson(): string | undefined {
    return this.prevText;
  }

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

  protected build(type: StoreEventType): Buffer {
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
