/**
 * An EventRecorder for reconciler and operation tests: keeps every recorded event in memory,
 * synchronously, with the real message texts and no correlation, queue or API.
 */
import type { EventRecorder, EventType, InvolvedPod } from './event-recorder.js';
import {
  DEFAULT_WAITING_FOR_DETACH_TEXT,
  REASON_FAILED_ATTACH,
  REASON_SUCCESSFUL_ATTACH,
  attachFailedMessage,
  attachSucceededMessage,
  multiAttachMessage,
  type PodName,
} from './event-messages.js';

export interface RecordedEvent {
  readonly pod: InvolvedPod;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
}

export interface FakeEventRecorder extends EventRecorder {
  readonly events: RecordedEvent[];
}

export function createFakeEventRecorder(opts: { waitingForDetachText?: boolean } = {}): FakeEventRecorder {
  const events: RecordedEvent[] = [];
  const waitingForDetachText = opts.waitingForDetachText ?? DEFAULT_WAITING_FOR_DETACH_TEXT;
  const record = (pod: InvolvedPod, type: EventType, reason: string, message: string): void => {
    events.push({ pod, type, reason, message });
  };
  return {
    events,
    record,
    attachSucceeded(pods, specName) {
      for (const pod of pods) record(pod, 'Normal', REASON_SUCCESSFUL_ATTACH, attachSucceededMessage(specName));
    },
    attachFailed(pods, specName, error) {
      for (const pod of pods) record(pod, 'Warning', REASON_FAILED_ATTACH, attachFailedMessage(specName, error));
    },
    multiAttach(pods, specName, podsOnOtherNodes: readonly PodName[]) {
      for (const pod of pods) {
        const message = multiAttachMessage({ specName, recipientNamespace: pod.namespace, podsOnOtherNodes, waitingForDetachText });
        record(pod, 'Warning', REASON_FAILED_ATTACH, message);
      }
    },
    async flush() {},
    stop() {},
  };
}
