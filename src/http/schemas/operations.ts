/** Schemas of /api/v1/conflicts and /api/v1/operations. */
import { Type, type Static } from 'typebox';
import { DiagnosisFields, Limit, OperationKind, PodView, protectedErrors, StringEnum } from './common.js';

export const Conflict = Type.Object({
  volume: Type.String(),
  node: Type.String({ description: 'Node that wants the volume' }),
  specName: Type.Optional(Type.String()),
  attachedTo: Type.Array(Type.String(), { description: 'Nodes holding the confirmed attachment' }),
  pods: Type.Array(PodView),
  podCount: Type.Integer(),
  multiAttachErrorReported: Type.Boolean(),
  waitingFor: Type.Optional(Type.String()),
  ...DiagnosisFields,
  holder: Type.Optional(Type.Object({
    node: Type.String(),
    healthy: Type.Boolean(),
    outOfService: Type.Boolean(),
    mounted: Type.Boolean({ description: 'In the holder’s volumesInUse (D3)' }),
    desired: Type.Boolean({ description: 'Pods on the holder still want the volume' }),
    podCount: Type.Integer(),
    detachTimerAgeMs: Type.Optional(Type.Number({ description: 'Age of the holder pair’s detach timer (D5)' })),
    detachInMs: Type.Optional(Type.Number({ description: 'Expected time until the holder’s pair moves (force detach, retry, next pass)' })),
    detachWhyNot: Type.Optional(Type.String({ description: 'Why no time can be given (instead of detachInMs)' })),
    reason: Type.Optional(Type.String({ description: 'Reason code of the holder’s pair' })),
  }, { description: 'The first node holding the attachment, as the detach rules see it' })),
  class: Type.Optional(StringEnum(['rollout-race', 'holder-node-down', 'holder-still-mounted', 'two-live-consumers'], {
    description: 'rollout-race: holder healthy, no pod wants it there, unmount done or under way (timer under 1 min); holder-node-down: holder NotReady or out of service; holder-still-mounted: holder healthy, no pod wants it, still mounted after 1 min (a kubelet problem); two-live-consumers: pods on both nodes want it',
  })),
});

export const ConflictList = Type.Object({ total: Type.Integer(), items: Type.Array(Conflict) });
export type ConflictList = Static<typeof ConflictList>;

export const Operation = Type.Object({
  state: StringEnum(['pending', 'backoff']),
  op: OperationKind,
  volume: Type.String(),
  node: Type.String(),
  volumeWide: Type.Boolean({ description: 'Keyed by the volume alone (multi-attach forbidden, I1)' }),
  ageMs: Type.Number({ description: 'Since start (pending) or since the last failure (backoff)' }),
  retryInMs: Type.Optional(Type.Number()),
  durationMs: Type.Optional(Type.Number({ description: 'Backoff window length' })),
  attempt: Type.Optional(Type.Integer({ description: 'Failures in a row of this key (the window doubles from 500 ms per failure, I3)' })),
  lastError: Type.Optional(Type.String({ description: "The volume's last error, when it was this operation on this node" })),
});

export const OperationList = Type.Object({
  total: Type.Object({ pending: Type.Integer(), backoff: Type.Integer() }),
  items: Type.Array(Operation, { description: 'Oldest first, at most `limit`' }),
});
export type OperationList = Static<typeof OperationList>;

export const conflictsSchema = {
  summary: 'Multi-attach conflicts now (G3)',
  querystring: Type.Object({ limit: Type.Optional(Limit) }),
  response: { 200: ConflictList, ...protectedErrors },
};

export const operationsSchema = {
  summary: 'Pending operations and open backoff windows',
  querystring: Type.Object({ state: Type.Optional(StringEnum(['pending', 'backoff'])), limit: Type.Optional(Limit) }),
  response: { 200: OperationList, ...protectedErrors },
};
