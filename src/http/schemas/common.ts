/**
 * Schemas shared by the route groups: the error body, paging parameters and the pair entry
 * (one (volume, node) pair as the node and volume endpoints show it).
 */
import { Type, type Static, type TEnum } from 'typebox';

/** Every error response: a catalogue code (src/errors) and a message for humans. */
export const ErrorBody = Type.Object(
  { code: Type.String({ description: 'FA_ERR_* catalogue code' }), message: Type.String() },
  { description: 'Error' },
);
export type ErrorBody = Static<typeof ErrorBody>;

/** Page size: default and cap of every `limit` parameter. */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;

export const Limit = Type.Integer({
  minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: `Page size (1-${MAX_LIMIT}, default ${DEFAULT_LIMIT})`,
});
export const ContinueToken = Type.String({
  minLength: 1, maxLength: 64, description: 'Opaque token from the previous page’s `continue`',
});

/** Error responses of the protected routes (401 appears only off loopback or with a token set). */
export const protectedErrors = { 400: ErrorBody, 401: ErrorBody } as const;

/**
 * A string enum with `type: "string"` spelled out: the serializer then writes it as a string
 * instead of probing its type, and the OpenAPI schema says what it is.
 */
export function StringEnum<const Values extends string[]>(values: readonly [...Values], options: { description?: string } = {}): TEnum<Values> {
  return Type.Enum(values, { ...options, type: 'string' });
}

export const OperationKind = StringEnum(['attach', 'detach']);

export const PodView = Type.Object({
  uid: Type.String(),
  namespace: Type.Optional(Type.String()),
  name: Type.Optional(Type.String({ description: 'Absent when the pod is no longer known' })),
});
export type PodView = Static<typeof PodView>;

/** The reason code and ETA that come with every `waitingFor` (src/http/waiting-for.ts diagnose). */
export const DiagnosisFields = {
  reason: Type.Optional(Type.String({ description: 'Reason code (GET /api/v1/reasons); present with waitingFor' })),
  etaMs: Type.Optional(Type.Number({ description: 'Expected time until the pair moves (0: the next pass)' })),
  etaWhy: Type.Optional(Type.String({ description: 'Why there is no ETA (instead of etaMs)' })),
};

export const PairView = Type.Object({
  volume: Type.String({ description: 'Unique volume name' }),
  node: Type.String(),
  desired: Type.Boolean({ description: 'At least one scheduled, non-terminated pod wants the pair (C1)' }),
  pods: Type.Array(PodView, { description: 'Pods wanting the pair (first 20)' }),
  podCount: Type.Integer(),
  attachState: StringEnum(['attached', 'uncertain', 'detached'], { description: 'Actual state (D1)' }),
  state: StringEnum(['attached', 'attaching', 'uncertain', 'detaching', 'detached'], {
    description: 'attachState, or attaching/detaching while that operation runs on this pair',
  }),
  mounted: Type.Boolean({ description: 'In the node’s status.volumesInUse, or volumesInUse never observed (D3)' }),
  reportedAsAttached: Type.Boolean({ description: 'Listed in node.status.volumesAttached by the controller (D6)' }),
  detachRequestedAgeMs: Type.Optional(Type.Number({ description: 'Age of the detach timer (D5)' })),
  multiAttachErrorReported: Type.Boolean({ description: 'The Multi-Attach event was emitted (H4)' }),
  operation: Type.Optional(Type.Object({
    op: OperationKind,
    node: Type.String({ description: 'Node the operation runs for (another node for a volume-wide key)' }),
    volumeWide: Type.Boolean(),
    ageMs: Type.Number(),
  }, { description: 'Pending operation blocking the pair (G1)' })),
  backoff: Type.Optional(Type.Array(Type.Object({
    op: OperationKind,
    retryInMs: Type.Number(),
    durationMs: Type.Number(),
  }), { description: 'Open backoff windows (I3)' })),
  attachmentName: Type.Optional(Type.String({ description: 'VolumeAttachment name (CSI, L1); volume responses only' })),
  waitingFor: Type.Optional(Type.String({ description: 'Why nothing happens to the pair now; absent when settled' })),
  ...DiagnosisFields,
});
export type PairView = Static<typeof PairView>;
