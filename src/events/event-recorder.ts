/**
 * EventRecorder: records core/v1 Events about pods (the only objects the attach/detach
 * controller reports on, section N), in the pod's namespace, with source component
 * `attachdetach-controller`. Recording never blocks and never throws: events are correlated
 * (event-correlator.ts), queued, and written in the background by a bounded number of requests;
 * when the queue is full, events are dropped, as client-go's broadcaster does.
 */
import { fleetError, isNotLeader } from '../errors/index.js';
import { logger, type Logger } from '../log/logger.js';
import { EventCorrelator, type CorrelatedEvent, type EventType, type InvolvedPod } from './event-correlator.js';
import {
  EVENT_COMPONENT,
  REASON_FAILED_ATTACH,
  REASON_SUCCESSFUL_ATTACH,
  attachFailedMessage,
  attachSucceededMessage,
  multiAttachMessage,
  DEFAULT_WAITING_FOR_DETACH_TEXT,
  type PodName,
} from './event-messages.js';

export type { EventType, InvolvedPod } from './event-correlator.js';

/** The Event object as sent to the API (`POST /api/v1/namespaces/<ns>/events`). */
export interface CoreV1Event {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace: string };
  involvedObject: { apiVersion: 'v1'; kind: 'Pod'; namespace: string; name: string; uid: string };
  reason: string;
  message: string;
  type: EventType;
  source: { component: string; host?: string };
  /** RFC 3339, seconds precision (metav1.Time). */
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  reportingComponent: string;
  reportingInstance: string;
}

/** The fields a repeated Event updates (a merge patch of the Event). */
export interface EventPatch {
  count: number;
  lastTimestamp: string;
  message: string;
}

/** Writes Events. Expected outcomes resolve; any other failure rejects (and is logged, not retried). */
export interface EventSink {
  create(namespace: string, event: CoreV1Event): Promise<void>;
  /** Patches an Event written before; `not-found` when it is gone (it is then created again). */
  patch(namespace: string, name: string, patch: EventPatch): Promise<'patched' | 'not-found'>;
}

export interface EventRecorder {
  /** Records one event about a pod. */
  record(pod: InvolvedPod, type: EventType, reason: string, message: string): void;
  /** J1: Normal SuccessfulAttachVolume to each pod. */
  attachSucceeded(pods: Iterable<InvolvedPod>, specName: string): void;
  /** J2: Warning FailedAttachVolume to each pod, the error's message appended. */
  attachFailed(pods: Iterable<InvolvedPod>, specName: string, error: unknown): void;
  /**
   * H3/H6: Warning FailedAttachVolume to each pod of the blocked entry, each with a message naming
   * only the pods of its own namespace among `podsOnOtherNodes`.
   */
  multiAttach(pods: Iterable<InvolvedPod>, specName: string, podsOnOtherNodes: readonly PodName[]): void;
  /** Resolves when every queued write has finished (tests, shutdown). */
  flush(): Promise<void>;
  /** Drops queued writes and ignores later records; in-flight writes finish. */
  stop(): void;
}

export interface EventRecorderDeps {
  sink: EventSink;
  /** `source.component` and `reportingComponent`; default `attachdetach-controller`. */
  component?: string;
  /** `source.host` / `reportingInstance` (e.g. the pod or host name of this replica). */
  host?: string;
  /** Multi-Attach texts: true = H6 (current upstream, default), false = H3. */
  waitingForDetachText?: boolean;
  /** Queued writes beyond which events are dropped; default 1000. */
  maxQueue?: number;
  /** Concurrent Event writes; default 4. */
  maxInFlight?: number;
  /** Spam filter per pod; defaults 25 and 5 minutes (client-go). */
  burst?: number;
  refillIntervalMs?: number;
  now?: () => number;
  log?: Logger;
  /** Called for each event not written: the queue was full, or the spam filter held it. */
  onDropped?: (cause: DropCause) => void;
}

export const DROP_CAUSES = ['queue-full', 'spam-filter'] as const;
export type DropCause = (typeof DROP_CAUSES)[number];

/**
 * @example
 * const events = createEventRecorder({ sink });
 * events.attachSucceeded(entry.pods, spec.name);
 */
export function createEventRecorder(deps: EventRecorderDeps): EventRecorder {
  return new Recorder(deps);
}

/** metav1.Time serialisation: RFC 3339 in UTC, whole seconds. */
export function formatEventTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/**
 * A full queue's drops are logged at once, then at most once per this period with the count
 * since: a large cold start drops tens of thousands, and a line per thousand buried the rest of
 * the log (the demo's progress lines among them).
 */
export const DROP_LOG_INTERVAL_MS = 10_000;

class Recorder implements EventRecorder {
  private readonly correlator: EventCorrelator;
  private readonly component: string;
  private readonly log: Logger;
  private readonly maxQueue: number;
  private readonly maxInFlight: number;
  private readonly now: () => number;
  private droppedFull = 0;
  private droppedSinceLog = 0;
  private lastDropLogAt = -Infinity;
  /** Writes per Event name are chained so a patch never overtakes its create. */
  private readonly tails = new Map<string, Promise<void>>();
  private readonly waiting: Array<() => void> = [];
  private queued = 0;
  private inFlight = 0;
  private stopped = false;

  constructor(private readonly deps: EventRecorderDeps) {
    this.component = deps.component ?? EVENT_COMPONENT;
    this.log = deps.log ?? logger('event-recorder');
    this.maxQueue = deps.maxQueue ?? 1000;
    this.maxInFlight = deps.maxInFlight ?? 4;
    for (const [field, v] of [['maxQueue', this.maxQueue], ['maxInFlight', this.maxInFlight]] as const) {
      if (!Number.isInteger(v) || v < 1) throw fleetError('FA_ERR_INTERNAL', `${field} must be a positive integer, got ${v}`);
    }
    this.now = deps.now ?? Date.now;
    this.correlator = new EventCorrelator({
      now: this.now,
      ...(deps.burst !== undefined ? { burst: deps.burst } : {}),
      ...(deps.refillIntervalMs !== undefined ? { refillIntervalMs: deps.refillIntervalMs } : {}),
    });
  }

  record(pod: InvolvedPod, type: EventType, reason: string, message: string): void {
    if (this.stopped) return;
    // A full queue drops the event before correlation, as client-go's broadcaster drops it
    // before its sink correlates: a cold start's tens of thousands of drops cost nothing more.
    if (this.queued >= this.maxQueue) {
      this.droppedFull++;
      this.droppedSinceLog++;
      this.deps.onDropped?.('queue-full');
      const now = this.now();
      if (now - this.lastDropLogAt >= DROP_LOG_INTERVAL_MS) {
        this.log.warn({ pod: `${pod.namespace}/${pod.name}`, reason, dropped: this.droppedSinceLog, droppedSoFar: this.droppedFull }, 'events dropped: write queue full');
        this.lastDropLogAt = now;
        this.droppedSinceLog = 0;
      }
      return;
    }
    const c = this.correlator.correlate(pod, type, reason, message);
    if (c.action === 'drop') {
      this.deps.onDropped?.('spam-filter');
      this.log.debug({ pod: `${pod.namespace}/${pod.name}`, reason }, 'event dropped by the spam filter');
      return;
    }
    this.enqueue(c.event.name, () => (c.action === 'create' ? this.create(c.event) : this.patch(c.event)));
  }

  attachSucceeded(pods: Iterable<InvolvedPod>, specName: string): void {
    const message = attachSucceededMessage(specName);
    for (const pod of pods) this.record(pod, 'Normal', REASON_SUCCESSFUL_ATTACH, message);
  }

  attachFailed(pods: Iterable<InvolvedPod>, specName: string, error: unknown): void {
    const message = attachFailedMessage(specName, error);
    for (const pod of pods) this.record(pod, 'Warning', REASON_FAILED_ATTACH, message);
  }

  multiAttach(pods: Iterable<InvolvedPod>, specName: string, podsOnOtherNodes: readonly PodName[]): void {
    const waitingForDetachText = this.deps.waitingForDetachText ?? DEFAULT_WAITING_FOR_DETACH_TEXT;
    for (const pod of pods) {
      const message = multiAttachMessage({ specName, recipientNamespace: pod.namespace, podsOnOtherNodes, waitingForDetachText });
      this.record(pod, 'Warning', REASON_FAILED_ATTACH, message);
    }
  }

  async flush(): Promise<void> {
    while (this.tails.size > 0) await Promise.all([...this.tails.values()]);
  }

  stop(): void {
    this.stopped = true;
  }

  private enqueue(name: string, write: () => Promise<void>): void {
    this.queued++;
    const previous = this.tails.get(name) ?? Promise.resolve();
    const run: Promise<void> = previous
      .then(() => this.limited(write))
      .catch((err: unknown) => {
        if (!isNotLeader(err)) this.log.warn({ err, event: name }, 'event write failed');
      })
      .finally(() => {
        this.queued--;
        if (this.tails.get(name) === run) this.tails.delete(name);
      });
    this.tails.set(name, run);
  }

  private async limited(write: () => Promise<void>): Promise<void> {
    while (this.inFlight >= this.maxInFlight) await new Promise<void>((r) => this.waiting.push(r));
    if (this.stopped) return;
    this.inFlight++;
    try {
      await write();
    } finally {
      this.inFlight--;
      this.waiting.shift()?.();
    }
  }

  private toEvent(e: CorrelatedEvent): CoreV1Event {
    const host = this.deps.host ?? '';
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: e.name, namespace: e.pod.namespace },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: e.pod.namespace, name: e.pod.name, uid: e.pod.uid },
      reason: e.reason,
      message: e.message,
      type: e.type,
      source: host ? { component: this.component, host } : { component: this.component },
      firstTimestamp: formatEventTime(e.firstTimestamp),
      lastTimestamp: formatEventTime(e.lastTimestamp),
      count: e.count,
      reportingComponent: this.component,
      reportingInstance: host,
    };
  }

  private create(e: CorrelatedEvent): Promise<void> {
    return this.deps.sink.create(e.pod.namespace, this.toEvent(e));
  }

  private async patch(e: CorrelatedEvent): Promise<void> {
    const patch: EventPatch = { count: e.count, lastTimestamp: formatEventTime(e.lastTimestamp), message: e.message };
    const result = await this.deps.sink.patch(e.pod.namespace, e.name, patch);
    // The Event expired or its create failed: write it whole, as client-go does.
    if (result === 'not-found') await this.create(e);
  }
}
