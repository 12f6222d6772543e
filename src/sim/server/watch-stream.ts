/**
 * One watch connection: a stream of event frames written in order. A replay (initial state
 * or window events) is pulled lazily and written with backpressure; live events arriving
 * meanwhile queue behind it. Only live frames count against the backlog bound: a watcher
 * whose unsent backlog exceeds it is cut off (its queue dropped, the response ended after the
 * bytes already handed to the socket), and the client resumes from the last resourceVersion
 * it saw or relists on 410. Frames are handed to the socket in chunks: those of one turn of
 * the event loop together.
 */
import type { ServerResponse } from 'node:http';
import type { ResourceInfo } from '../store/resources.js';
import type { Client } from './client-faults.js';
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
}

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

  constructor(opts: WatchStreamOptions) {
    this.res = opts.res;
    this.info = opts.info;
    this.namespace = opts.namespace;
    this.selector = opts.selector;
    this.bookmarks = opts.bookmarks;
    this.maxBacklog = opts.maxBacklogBytes;
    this.onClose = opts.onClose;
    this.client = opts.client;
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
  }

  /** Starts the response and the replay (frames written before any live event). */
  begin(replay: Iterable<Buffer | string>, timeoutMs: number): void {
    // No Transfer-Encoding: HTTP/1.1 frames a body without a length in chunks by default, and
    // HTTP/2 forbids the header.
    this.res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    this.res.flushHeaders();
    this.replay = replay[Symbol.iterator]();
    if (timeoutMs > 0) this.timer = setTimeout(() => this.end(), timeoutMs);
    this.pump();
  }

  /** Queues a live frame (shared bytes: never mutated). */
  send(frame: Buffer | string): void {
    if (this.closed || this.held) return;
    if (this.replay === undefined && this.head === this.queue.length && !this.waitingDrain) {
      this.write(frame);
      if (this.pendingBytes + this.res.writableLength > this.maxBacklog) this.cut();
      return;
    }
    this.queue.push(frame);
    this.queuedBytes += frame.length;
    if (this.queuedBytes + this.pendingBytes + this.res.writableLength > this.maxBacklog) this.cut();
  }

  /** Ends the stream after what was already queued. */
  end(): void {
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
