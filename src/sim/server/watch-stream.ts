/**
 * One watch connection: a stream of event frames written in order. A replay (initial state
 * or window events) is pulled lazily and written with backpressure; live events arriving
 * meanwhile queue behind it. Only live frames count against the backlog bound: a watcher
 * whose unsent backlog exceeds it is cut off (its queue dropped, the response ended after the
 * bytes already handed to the socket), and the client resumes from the last resourceVersion
 * it saw or relists on 410. Frames are handed to the socket in chunks: those of one turn of
 * the event loop together.
 *
 * A lagging stream (a client fault, client-faults.ts) puts a delay line in front of all this:
 * the replay, every live frame and bookmark, and the end of the stream come out in order, each
 * its lag after it was handed over (the replay, its lag after the watch began). Nothing is
 * dropped on the way, and frames waiting in the line count against the backlog bound: past it
 * the stream is cut off as a slow watcher is.
 */
import type { ServerResponse } from 'node:http';
import type { ResourceInfo } from '../store/resources.js';
import type { Client } from './client-faults.js';
import { DelayLine, realLagClock, type LagClock } from './delay-line.js';
import type { Selector } from './selectors.js';

export interface WatchStreamOptions {
  res: ServerResponse;
  info: ResourceInfo;
  namespace: string | undefined;
  selector: Selector | undefined;
  bookmarks: boolean;
  maxBacklogBytes: number;
  /** Called once when the stream ends, for whatever reason. */
  onClose: (stream: WatchStream) => void;
  /** Who watches (for per-client faults). */
  client?: Client;
  /** Lag of every frame, from the start (see `setLag`); default 0. */
  lagMs?: number;
  /** Clock of the lag (tests pass a controlled one). */
  clock?: LagClock;
}

/** What a lagging stream delays: a live frame, the start of its replay, or its end. */
type Lagged = { frame: Buffer | string } | { replay: Iterator<Buffer | string> } | { end: true };

export class WatchStream {
  readonly info: ResourceInfo;
  readonly namespace: string | undefined;
  readonly selector: Selector | undefined;
  readonly bookmarks: boolean;
  readonly client: Client | undefined;
  /** Set when the stream was cut off for exceeding its backlog. */
  cutOff = false;
  /** While set, live frames and bookmarks are dropped (a partitioned client; see `hold`). */
  private held = false;
  private readonly res: ServerResponse;
  private readonly maxBacklog: number;
  private readonly onClose: (s: WatchStream) => void;
  private replay: Iterator<Buffer | string> | undefined;
  private queue: Array<Buffer | string> = [];
  /** Index of the next frame to write: frames before it are sent (the queue is compacted when drained). */
  private head = 0;
  private queuedBytes = 0;
  private waitingDrain = false;
  /** Frames written but not yet handed to the response (see `write`), and their bytes. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private lagMs: number;
  private readonly clock: LagClock;
  private lagLine: DelayLine<Lagged> | undefined;
  /** Bytes of the live frames in the lag line. */
  private laggedBytes = 0;
  /** Set once `end` has queued the end behind lagged frames: nothing more is accepted. */
  private ending = false;

  constructor(opts: WatchStreamOptions) {
    this.res = opts.res;
    this.info = opts.info;
    this.namespace = opts.namespace;
    this.selector = opts.selector;
    this.bookmarks = opts.bookmarks;
    this.maxBacklog = opts.maxBacklogBytes;
    this.onClose = opts.onClose;
    this.client = opts.client;
    this.lagMs = Math.max(0, opts.lagMs ?? 0);
    this.clock = opts.clock ?? realLagClock;
    this.res.on('close', () => this.finish());
    this.res.on('drain', () => {
      this.waitingDrain = false;
      this.pump();
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  get isHeld(): boolean {
    return this.held;
  }

  /** Frames (and the replay or end) waiting in the lag line. */
  get lagged(): number {
    return this.lagLine?.size ?? 0;
  }

  /**
   * Sets the lag of what is handed over from now on. What waits in the lag line keeps its due
   * time, and later frames never overtake it: at 0 the stream is live again once the line is empty.
   */
  setLag(ms: number): void {
    this.lagMs = Math.max(0, ms);
  }

  /**
   * Sends nothing more (the rest of a replay, queued and live frames, bookmarks) until the
   * stream ends: a client cut off by a partition. Whoever holds a stream ends it once the partition is over, so that the client
   * resumes from the last event it received and the events dropped meanwhile are replayed.
   */
  hold(): void {
    this.held = true;
    this.replay = undefined;
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
    this.dropLagged();
    this.ending = false;
  }

  /** Starts the response and the replay (frames written before any live event). */
  begin(replay: Iterable<Buffer | string>, timeoutMs: number): void {
    // No Transfer-Encoding: HTTP/1.1 frames a body without a length in chunks by default, and
    // HTTP/2 forbids the header.
    this.res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    this.res.flushHeaders();
    const it = replay[Symbol.iterator]();
    if (this.lagMs > 0) this.delay({ replay: it }, 0);
    else this.replay = it;
    if (timeoutMs > 0) this.timer = setTimeout(() => this.end(), timeoutMs);
    this.pump();
  }

  /** Queues a live frame (shared bytes: never mutated). */
  send(frame: Buffer | string): void {
    if (this.closed || this.held || this.ending) return;
    if (this.isLagging()) return this.delay({ frame }, frame.length);
    this.deliver(frame);
  }

  private isLagging(): boolean {
    return this.lagMs > 0 || (this.lagLine !== undefined && this.lagLine.size > 0);
  }

  private delay(item: Lagged, bytes: number): void {
    (this.lagLine ??= new DelayLine<Lagged>(this.clock, (x) => this.released(x))).push(item, this.lagMs);
    this.laggedBytes += bytes;
    if (this.laggedBytes + this.queuedBytes + this.pendingBytes + this.res.writableLength > this.maxBacklog) this.cut();
  }

  private released(x: Lagged): void {
    if ('frame' in x) {
      this.laggedBytes -= x.frame.length;
      this.deliver(x.frame);
    } else if ('replay' in x) {
      this.replay = x.replay;
      this.pump();
    } else {
      this.endNow();
    }
  }

  private dropLagged(): void {
    this.lagLine?.clear();
    this.laggedBytes = 0;
  }

  /** Writes a frame now, or queues it behind the replay and the frames the socket has not taken. */
  private deliver(frame: Buffer | string): void {
    if (this.closed) return;
    if (this.replay === undefined && this.head === this.queue.length && !this.waitingDrain) {
      this.write(frame);
      if (this.pendingBytes + this.res.writableLength > this.maxBacklog) this.cut();
      return;
    }
    this.queue.push(frame);
    this.queuedBytes += frame.length;
    if (this.queuedBytes + this.pendingBytes + this.res.writableLength > this.maxBacklog) this.cut();
  }

  /**
   * Ends the stream after what was already queued; on a lagging stream, once the lagged frames
   * are out and the lag has passed (a held stream ends at once: it owes nothing).
   */
  end(): void {
    if (this.closed || this.ending) return;
    if (!this.held && this.isLagging()) {
      this.ending = true;
      this.delay({ end: true }, 0);
      return;
    }
    this.endNow();
  }

  private endNow(): void {
    if (this.closed) return;
    this.replay = undefined;
    this.flushQueue();
    this.flush();
    this.res.end();
    this.finish();
  }

  /** Ends at once, dropping unsent frames (server shutdown). */
  destroy(): void {
    if (this.closed) return;
    this.res.destroy();
    this.finish();
  }

  private cut(): void {
    this.cutOff = true;
    this.dropLagged();
    this.replay = undefined;
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
    this.pending = [];
    this.pendingBytes = 0;
    this.res.end();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.dropLagged();
    this.pending = [];
    this.pendingBytes = 0;
    this.queue = [];
    this.head = 0;
    this.replay = undefined;
    this.onClose(this);
  }

  private pump(): void {
    while (!this.closed && !this.waitingDrain) {
      if (this.replay) {
        const r = this.replay.next();
        if (r.done) this.replay = undefined;
        else this.write(r.value);
        continue;
      }
      if (this.head === this.queue.length) return;
      this.flushQueue();
    }
  }

  /** Writes queued live frames until the socket pushes back. */
  private flushQueue(): void {
    const q = this.queue;
    while (this.head < q.length && !this.waitingDrain) {
      const f = q[this.head++];
      this.queuedBytes -= f.length;
      this.write(f);
    }
    if (this.head === q.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 4096 && this.head * 2 > q.length) {
      this.queue = q.slice(this.head);
      this.head = 0;
    }
  }

  /** Adds a frame to the pending chunk; a full chunk is written at once, the rest after this turn of the event loop. */
  private write(frame: Buffer | string): void {
    if (this.pending.length === 0) flushSoon(this);
    const bytes = typeof frame === 'string' ? Buffer.from(frame) : frame;
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    if (this.pendingBytes >= CHUNK_BYTES) this.flush();
  }

  /** Writes the pending frames as one chunk (the batch flush, and before the response ends). */
  flush(): void {
    if (this.pending.length === 0 || this.closed) return;
    const chunk = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    if (!this.res.write(chunk)) this.waitingDrain = true;
  }
}

// Frames written during one turn of the event loop (every request and tick it ran) go out as
// one chunk per stream after its I/O phase: one write, one TLS record for many events.
const CHUNK_BYTES = 64 << 10;
let toFlush = new Set<WatchStream>();
let flushScheduled = false;

function flushSoon(s: WatchStream): void {
  toFlush.add(s);
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(() => {
    flushScheduled = false;
    const batch = toFlush;
    toFlush = new Set();
    for (const w of batch) w.flush();
  });
}
