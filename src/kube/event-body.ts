/**
 * core/v1 Event bodies as client-go's legacy event recorder writes them: name
 * `<object>.<hex nanoseconds>`, first/last timestamp now, count 1, source component.
 */
import type { CoreV1Event } from '@kubernetes/client-node';

export const EVENT_SOURCE_COMPONENT = 'attachdetach-controller';

export interface EventInput {
  involvedObject: { kind: string; name: string; namespace?: string; uid?: string; apiVersion?: string };
  type: 'Normal' | 'Warning';
  /** e.g. `SuccessfulAttachVolume`, `FailedAttachVolume`. */
  reason: string;
  message: string;
  /** `source.component`; default {@link EVENT_SOURCE_COMPONENT}. */
  component?: string;
}

let seq = 0n;

export function buildEventBody(namespace: string, e: EventInput, now = new Date()): CoreV1Event {
  const nanos = BigInt(now.getTime()) * 1_000_000n + (seq++ % 1_000_000n);
  const component = e.component ?? EVENT_SOURCE_COMPONENT;
  return {
    metadata: { name: `${e.involvedObject.name}.${nanos.toString(16)}`, namespace },
    involvedObject: { ...e.involvedObject, namespace: e.involvedObject.namespace ?? namespace },
    reason: e.reason,
    message: e.message,
    type: e.type,
    source: { component },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
    reportingComponent: component,
    reportingInstance: '',
  };
}
