/**
 * The stream hub behind `GET /api/v1/stream` (Server-Sent Events): one timer for all clients,
 * every `intervalMs` (1 s), computes the summary once, the newest history sample, and the
 * versions of the topics someone subscribed to, then tells each client what changed for it:
 *   - `summary`: at connect, then only when it changed (by `changeKey`: without its `now`);
 *   - `history`: each new sample;
 *   - `invalidate` `{topic, version}`: a topic's version moved since this client last heard of it
 *     (so changes within one interval give one message per topic);
 *   - `: ping` comments every `pingMs` (15 s), for proxies and the client's staleness check.
 * Each message has an `id` that increments per connection.
 *
 * Backpressure: once a write returns false the client is blocked; further messages replace the
 * pending one of their kind (per event, per topic for `invalidate`) and the latest of each is
 * written on 'drain'. A slow client gets fewer, newer messages, never a growing queue.
 *
 * The timers run only while clients are connected; `closeAll` ends every stream (server close).
 * Never throws from its timers: a failed tick is logged and the next one runs on schedule.
 */
import { logger, type Logger } from '../log/logger.js';
import type { DashboardModel } from './dashboard-model.js';

/** Where a client's bytes go (an http.ServerResponse in production, a fake in tests). */
export interface StreamSink {
  /** false: the buffer is full; wait for 'drain'. */
  write(chunk: string): boolean;
  onDrain(fn: () => void): void;
  end(): void;
}

export interface StreamClient {
  close(): void;
}

export interface StreamHub {
  /** Registers a client (topics validated by {@link parseTopics}) and sends its first `summary`. */
  add(sink: StreamSink, topics: readonly string[]): StreamClient;
  clients(): number;
  /** Ends every stream and stops the timers. */
  closeAll(): void;
  /** Runs one interval's work now (tests). */
  tick(): void;
}

export interface StreamHubDeps {
  readonly model: DashboardModel;
  /** The `summary` event body (the `/api/v1/dashboard` answer). */
  summary(): { readonly now: number } & object;
  /**
   * What decides that the summary changed; default: the summary without `now`. The dashboard's
   * leaves out the fields that move every second whatever happens (sweep time, watch event ages).
   */
  changeKey?(summary: { readonly now: number } & object): string;
  readonly intervalMs?: number;
  readonly pingMs?: number;
  readonly log?: Logger;
}

export const MAX_TOPICS = 50;
const FIXED_TOPICS = new Set(['summary', 'history', 'notConverged', 'conflicts', 'operations', 'nodes']);

/** The topics of a `topics=` parameter, or an error message. */
export function parseTopics(param: string | undefined): string[] | { error: string } {
  const topics = [...new Set((param ?? 'summary').split(',').map((t) => t.trim()).filter((t) => t.length > 0))];
  if (topics.length > MAX_TOPICS) return { error: `at most ${MAX_TOPICS} topics` };
  for (const t of topics) {
    if (FIXED_TOPICS.has(t)) continue;
    if ((t.startsWith('node:') && t.length > 5) || (t.startsWith('volume:') && t.length > 7)) continue;
    return { error: `unknown topic ${t}` };
  }
  return topics;
}

export function createStreamHub(deps: StreamHubDeps): StreamHub {
  return new Hub(deps);
}

interface Client {
  readonly sink: StreamSink;
  readonly topics: ReadonlySet<string>;
  readonly versions: Map<string, number>;
  nextId: number;
  blocked: boolean;
  readonly pending: Map<string, { event: string; data: string }>;
  closed: boolean;
  /** The last summary sent, without its `now`. */
  summaryKey?: string;
}

class Hub implements StreamHub {
  private readonly all = new Set<Client>();
  private tickTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private lastHistoryT = -Infinity;
  private readonly log: Logger;

  constructor(private readonly d: StreamHubDeps) {
    this.log = d.log ?? logger('dashboard');
  }

  clients(): number {
    return this.all.size;
  }

  add(sink: StreamSink, topics: readonly string[]): StreamClient {
    const c: Client = { sink, topics: new Set(topics), versions: new Map(), nextId: 1, blocked: false, pending: new Map(), closed: false };
    for (const t of c.topics) {
      const v = this.version(t);
      if (v !== undefined) c.versions.set(t, v);
    }
    sink.onDrain(() => this.drain(c));
    this.all.add(c);
    sink.write('retry: 3000\n\n');
    if (c.topics.has('summary')) {
      const { key, data } = this.summary();
      c.summaryKey = key;
      this.send(c, 'summary', data);
    }
    this.ensureTimers();
    return { close: () => this.remove(c) };
  }

  private remove(c: Client): void {
    if (c.closed) return;
    c.closed = true;
    this.all.delete(c);
    if (this.all.size === 0) this.stopTimers();
  }

  closeAll(): void {
    for (const c of [...this.all]) {
      this.remove(c);
      try {
        c.sink.end();
      } catch {
        // Already gone.
      }
    }
    this.stopTimers();
  }

  private ensureTimers(): void {
    if (!this.tickTimer) this.scheduleTick();
    if (!this.pingTimer) this.schedulePing();
  }

  private stopTimers(): void {
    if (this.tickTimer) clearTimeout(this.tickTimer);
    if (this.pingTimer) clearTimeout(this.pingTimer);
    this.tickTimer = undefined;
    this.pingTimer = undefined;
  }

  private scheduleTick(): void {
    this.tickTimer = setTimeout(() => {
      this.tickTimer = undefined;
      if (this.all.size === 0) return;
      try {
        this.tick();
      } catch (err) {
        this.log.error({ err }, 'stream tick failed');
      }
      if (this.all.size > 0) this.scheduleTick();
    }, this.d.intervalMs ?? 1000);
  }

  private schedulePing(): void {
    this.pingTimer = setTimeout(() => {
      this.pingTimer = undefined;
      if (this.all.size === 0) return;
      for (const c of this.all) if (!c.blocked) this.write(c, ': ping\n\n');
      this.schedulePing();
    }, this.d.pingMs ?? 15_000);
  }

  tick(): void {
    // An open stream is someone reading the dashboard: the index keeps sweeping.
    if (this.all.size > 0) this.d.model.index.touch();
    if ([...this.all].some((c) => c.topics.has('summary'))) {
      const { key, data } = this.summary();
      for (const c of this.all) {
        if (!c.topics.has('summary') || c.summaryKey === key) continue;
        c.summaryKey = key;
        this.send(c, 'summary', data);
      }
    }
    const sample = this.d.model.history.latest();
    if (sample && sample.t > this.lastHistoryT) {
      this.lastHistoryT = sample.t;
      const data = JSON.stringify(sample);
      for (const c of this.all) if (c.topics.has('history')) this.send(c, 'history', data);
    }
    const versions = new Map<string, number | undefined>();
    for (const c of this.all) {
      for (const t of c.topics) {
        if (t === 'summary' || t === 'history') continue;
        if (!versions.has(t)) versions.set(t, this.version(t));
        const v = versions.get(t);
        if (v === undefined || c.versions.get(t) === v) continue;
        c.versions.set(t, v);
        this.send(c, 'invalidate', JSON.stringify({ topic: t, version: v }), `invalidate:${t}`);
      }
    }
  }

  /** The summary body, and its key for change detection (the body without `now`, which always moves). */
  private summary(): { key: string; data: string } {
    const s = this.d.summary();
    if (this.d.changeKey) return { key: this.d.changeKey(s), data: JSON.stringify(s) };
    const { now: _now, ...rest } = s as { now: number } & Record<string, unknown>;
    return { key: JSON.stringify(rest), data: JSON.stringify(s) };
  }

  private version(topic: string): number | undefined {
    if (topic === 'notConverged') return this.d.model.index.snapshot().version;
    if (topic === 'summary' || topic === 'history') return undefined;
    return this.d.model.topics.version(topic);
  }

  private send(c: Client, event: string, data: string, key: string = event): void {
    if (c.closed) return;
    if (c.blocked) {
      c.pending.delete(key); // re-inserted last: the newest goes out after the older kinds
      c.pending.set(key, { event, data });
      return;
    }
    this.write(c, `id: ${c.nextId++}\nevent: ${event}\ndata: ${data}\n\n`);
  }

  private write(c: Client, chunk: string): void {
    try {
      if (!c.sink.write(chunk)) c.blocked = true;
    } catch {
      this.remove(c);
    }
  }

  private drain(c: Client): void {
    if (c.closed) return;
    c.blocked = false;
    const pending = [...c.pending.values()];
    c.pending.clear();
    for (const p of pending) this.send(c, p.event, p.data, p.event === 'invalidate' ? `invalidate:${JSON.parse(p.data).topic as string}` : p.event);
  }
}
