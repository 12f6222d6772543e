/**
 * EventCorrelator: decides, for each event the controller wants to record, whether to create a
 * new Event object, bump the count of one already written, or drop it. A condensed version of
 * client-go's correlator (tools/record/events_cache.go), with its defaults:
 * - aggregation: 10 events on one object with the same type and reason but different messages
 *   within 10 minutes collapse into one `(combined from similar events): <message>` Event;
 * - deduplication: an identical event (same object, type, reason, message) increments `count` and
 *   moves `lastTimestamp` of the Event already written instead of creating another;
 * - spam filter: a token bucket per involved object (burst 25, one token per 5 minutes) drops
 *   events beyond that, so an attach-failure storm cannot flood the API server.
 * The caches are LRU-bounded (4096 entries each); eviction only costs a fresh Event later.
 */

export type EventType = 'Normal' | 'Warning';

export interface InvolvedPod {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export interface CorrelatorOptions {
  now: () => number;
  burst?: number;
  refillIntervalMs?: number;
  maxSimilarEvents?: number;
  similarIntervalMs?: number;
  cacheSize?: number;
}

/** The Event state to write. `firstTimestamp` and `lastTimestamp` are epoch milliseconds. */
export interface CorrelatedEvent {
  readonly name: string;
  readonly pod: InvolvedPod;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
  readonly count: number;
  readonly firstTimestamp: number;
  readonly lastTimestamp: number;
}

export type Correlation =
  | { readonly action: 'create'; readonly event: CorrelatedEvent }
  | { readonly action: 'patch'; readonly event: CorrelatedEvent }
  | { readonly action: 'drop' };

export const COMBINED_PREFIX = '(combined from similar events): ';

/** A Map used as an LRU: `get` refreshes, `set` evicts the oldest beyond `max`. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, v: V): void {
    this.map.delete(key);
    this.map.set(key, v);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}

interface Observation {
  name: string;
  count: number;
  firstTimestamp: number;
}

export class EventCorrelator {
  private readonly buckets: Lru<{ tokens: number; at: number }>;
  private readonly similar: Lru<{ messages: Set<string>; last: number }>;
  private readonly observed: Lru<Observation>;
  private lastNameNanos = 0n;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly maxSimilar: number;
  private readonly similarMs: number;

  constructor(private readonly opts: CorrelatorOptions) {
    this.burst = opts.burst ?? 25;
    this.refillMs = opts.refillIntervalMs ?? 300_000;
    this.maxSimilar = opts.maxSimilarEvents ?? 10;
    this.similarMs = opts.similarIntervalMs ?? 600_000;
    const size = opts.cacheSize ?? 4096;
    this.buckets = new Lru(size);
    this.similar = new Lru(size);
    this.observed = new Lru(size);
  }

  correlate(pod: InvolvedPod, type: EventType, reason: string, message: string): Correlation {
    const now = this.opts.now();
    const objectKey = `${pod.namespace}\u0000${pod.name}\u0000${pod.uid}`;
    const aggregateKey = `${objectKey}\u0000${type}\u0000${reason}`;

    // Aggregation: too many distinct messages ⇒ one combined Event keyed without the message.
    let rec = this.similar.get(aggregateKey);
    if (!rec || now - rec.last > this.similarMs) rec = { messages: new Set(), last: now };
    rec.messages.add(message);
    rec.last = now;
    this.similar.set(aggregateKey, rec);
    let key = `${aggregateKey}\u0000${message}`;
    if (rec.messages.size >= this.maxSimilar) {
      rec.messages.delete(rec.messages.values().next().value!);
      key = aggregateKey;
      message = COMBINED_PREFIX + message;
    }

    // Deduplication: an Event already written for this key gets count + 1.
    const seen = this.observed.get(key);
    const obs: Observation = seen
      ? { name: seen.name, count: seen.count + 1, firstTimestamp: seen.firstTimestamp }
      : { name: this.eventName(pod.name, now), count: 1, firstTimestamp: now };
    this.observed.set(key, obs);

    // Spam filter, after observation as in client-go.
    if (!this.takeToken(objectKey, now)) return { action: 'drop' };
    const event: CorrelatedEvent = { name: obs.name, pod, type, reason, message, count: obs.count, firstTimestamp: obs.firstTimestamp, lastTimestamp: now };
    return { action: seen ? 'patch' : 'create', event };
  }

  private takeToken(objectKey: string, now: number): boolean {
    let b = this.buckets.get(objectKey);
    if (!b) b = { tokens: this.burst, at: now };
    const refill = Math.floor((now - b.at) / this.refillMs);
    if (refill > 0) b = { tokens: Math.min(this.burst, b.tokens + refill), at: b.at + refill * this.refillMs };
    if (b.tokens >= this.burst) b = { tokens: b.tokens, at: now };
    const allowed = b.tokens >= 1;
    this.buckets.set(objectKey, allowed ? { tokens: b.tokens - 1, at: b.at } : b);
    return allowed;
  }

  /** client-go's `<object name>.<hex unix nanos>`, kept strictly increasing so names never collide. */
  private eventName(objectName: string, now: number): string {
    let nanos = BigInt(Math.floor(now)) * 1_000_000n;
    if (nanos <= this.lastNameNanos) nanos = this.lastNameNanos + 1n;
    this.lastNameNanos = nanos;
    return `${objectName}.${nanos.toString(16)}`;
  }
}
