/** Schemas of /api/v1/volumes and /api/v1/volumes/{uniqueName}. */
import { Type, type Static } from 'typebox';
import { ContinueToken, ErrorBody, Limit, OperationKind, PairView, protectedErrors, StringEnum } from './common.js';

export const VolumeDetail = Type.Object({
  name: Type.String({ description: 'Unique volume name, e.g. kubernetes.io/csi/<driver>^<handle>' }),
  specName: Type.Optional(Type.String({ description: 'PV name or pod volume name; absent until a pod resolves the spec' })),
  pvName: Type.Optional(Type.String()),
  plugin: Type.Optional(Type.String()),
  driver: Type.Optional(Type.String()),
  accessModes: Type.Array(Type.String()),
  multiAttach: StringEnum(['allowed', 'forbidden'], { description: 'H1 policy' }),
  migrated: Type.Optional(Type.Boolean()),
  attachedTo: Type.Array(Type.String(), { description: "Nodes with a confirmed attachment (D7), first `limit`" }),
  nodeCount: Type.Integer({ description: 'Pairs of the volume (nodes listed: at most `limit`)' }),
  nodes: Type.Array(PairView),
  lastError: Type.Optional(Type.Object({ op: OperationKind, node: Type.String(), message: Type.String(), ageMs: Type.Number() })),
  backoffRetryInMs: Type.Optional(Type.Number({ description: 'Latest end of an open backoff window (I3)' })),
  waitingFor: Type.Optional(Type.String({ description: 'The most telling pair explanation (+N more)' })),
});
export type VolumeDetail = Static<typeof VolumeDetail>;

export const VolumeList = Type.Object({
  items: Type.Array(VolumeDetail),
  continue: Type.Optional(Type.String()),
});
export type VolumeList = Static<typeof VolumeList>;

export const UniqueName = Type.String({ minLength: 1, maxLength: 1024, description: 'URL-encoded unique volume name' });

const nodesPerVolume = Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'Nodes listed per volume (1-500)' }));

export const getVolumeSchema = {
  summary: 'One volume: its nodes (desired/actual), pods, policy, VolumeAttachment, last error, waitingFor',
  params: Type.Object({ uniqueName: UniqueName }),
  querystring: Type.Object({ limit: nodesPerVolume }),
  response: { 200: VolumeDetail, ...protectedErrors, 404: ErrorBody },
};

export const listVolumesSchema = {
  summary: 'Volumes of a PersistentVolume (?pv=), or all volumes paged by internal id order',
  querystring: Type.Object({
    pv: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'PersistentVolume name; disables paging' })),
    limit: Type.Optional(Limit),
    continue: Type.Optional(ContinueToken),
  }),
  response: { 200: VolumeList, ...protectedErrors },
};
