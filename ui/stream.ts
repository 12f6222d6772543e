/**
 * The tab's one live stream: a single EventSource on /api/v1/stream for the topics of the view
 * on screen (browsers allow six HTTP/1.1 connections per origin across all tabs, so never one
 * per topic). A view change reopens it with the new topics.
 *
 * Staleness is measured, not assumed: the stream is stale while it is not open or when no event
 * arrived for more than two heartbeats (15 s each). The `history` topic is always subscribed — a
 * sample a second — so a quiet fleet still proves the stream alive (a `: ping` comment is not
 * visible to EventSource). EventSource reconnects by itself after a network error; when the
 * server ends the stream for good (an HTTP error closes it), it is reopened here after a delay.
 * Every (re)open that follows a failure tells the listeners to refetch what they show.
 */
import { streamEvents, type Dashboard, type HistorySample } from './api.js';
import { api } from './api.js';

export const HEARTBEAT_MS = 15_000;
const STALE_AFTER_MS = 2 * HEARTBEAT_MS;
const REOPEN_AFTER_MS = 5_000;

export interface StreamStatus { connected: boolean; stale: boolean; messages: number; lastEventAt: number; since: number }

export interface StreamListeners {
  summary?(d: Dashboard): void;
  history?(s: HistorySample): void;
  /** A topic's data changed (or the stream came back after a gap: topic '*'): refetch. */
  invalidate?(topic: string): void;
}

declare global {
  interface Window { __faStream: { connected: boolean; messages: number; lastEventAt: number } }
}

type Listener = (s: StreamStatus) => void;

class LiveStream {
  private source: EventSource | undefined;
  private topics = '';
  private reopenTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly statusListeners = new Set<Listener>();
  private readonly dataListeners = new Set<StreamListeners>();
  status: StreamStatus = { connected: false, stale: true, messages: 0, lastEventAt: 0, since: Date.now() };

  constructor() {
    window.__faStream = { connected: false, messages: 0, lastEventAt: 0 };
    setInterval(() => this.publish(), 1000);
  }

  /** Subscribes this tab to `topics` (plus summary and history); reopens only when they changed. */
  use(topics: string[]): void {
    const all = [...new Set(['summary', 'history', ...topics])].sort().join('\n');
    if (all === this.topics && this.source !== undefined) return;
    this.topics = all;
    this.open();
  }

  /** Closes the stream (the login page shows no data). */
  stop(): void {
    clearTimeout(this.reopenTimer);
    this.source?.close();
    this.source = undefined;
    this.topics = '';
    this.publish();
  }

  onStatus(fn: Listener): () => void {
    this.statusListeners.add(fn);
    fn(this.status);
    return () => this.statusListeners.delete(fn);
  }

  onData(l: StreamListeners): () => void {
    this.dataListeners.add(l);
    return () => this.dataListeners.delete(l);
  }

  private open(): void {
    this.source?.close();
    clearTimeout(this.reopenTimer);
    const es = new EventSource(api.streamUrl(this.topics.split('\n')));
    this.source = es;
    es.onopen = () => {
      // The server versions topics from this connection on: what a view fetched before it
      // (during a reconnect, or before a new topic's stream opened) is refetched once.
      this.emit((l) => l.invalidate?.('*'));
      this.touch(false);
    };
    es.onerror = () => {
      this.publish();
      // CLOSED: the server refused (HTTP error); CONNECTING: the browser retries by itself.
      if (es.readyState === EventSource.CLOSED && this.source === es) {
        this.reopenTimer = setTimeout(() => this.open(), REOPEN_AFTER_MS);
      }
    };
    es.addEventListener('summary', (e) => this.deliver(e, (l, d) => l.summary?.(streamEvents.summary(d))));
    es.addEventListener('history', (e) => this.deliver(e, (l, d) => l.history?.(streamEvents.history(d))));
    es.addEventListener('invalidate', (e) => this.deliver(e, (l, d) => l.invalidate?.(streamEvents.invalidate(d).topic)));
    es.addEventListener('ping', (e) => this.deliver(e, () => {}));
    this.publish();
  }

  private deliver(e: Event, each: (l: StreamListeners, data: string) => void): void {
    const data = (e as MessageEvent<string>).data;
    this.touch(true);
    this.emit((l) => {
      try {
        each(l, data);
      } catch (err) {
        console.warn('stream event not understood', e.type, err);
      }
    });
  }

  private emit(fn: (l: StreamListeners) => void): void {
    for (const l of this.dataListeners) fn(l);
  }

  private touch(message: boolean): void {
    if (message) this.status = { ...this.status, messages: this.status.messages + 1 };
    this.status = { ...this.status, lastEventAt: Date.now() };
    this.publish();
  }

  private publish(): void {
    const open = this.source?.readyState === EventSource.OPEN;
    const quiet = Date.now() - this.status.lastEventAt > STALE_AFTER_MS;
    const stale = !open || quiet;
    const since = stale === this.status.stale ? this.status.since : Date.now();
    this.status = { ...this.status, connected: open, stale, since };
    window.__faStream = { connected: open, messages: this.status.messages, lastEventAt: this.status.lastEventAt };
    for (const fn of this.statusListeners) fn(this.status);
  }
}

export const stream = new LiveStream();
