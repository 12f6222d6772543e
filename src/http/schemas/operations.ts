/** Schemas of /api/v1/conflicts and /api/v1/operations. */
import { Type, type Static } from 'typebox';
import { Limit, OperationKind, PodView, protectedErrors, StringEnum } from './common.js';

export const Conflict = Type.Object({
  volume: Type.String(),
  node: Type.String({ description: 'Node that wants the volume' }),
  specName: Type.Optional(Type.String()),
  attachedTo: Type.Array(Type.String(), { description: 'Nodes holding the confirmed attachment' }),
  pods: Type.Array(PodView),
  podCount: Type.Integer(),
  multiAttachErrorReported: Type.Boolean(),
  waitingFor: Type.Optional(Type.String()),
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
