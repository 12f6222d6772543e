/** Schemas of /api/v1/nodes and /api/v1/nodes/{name}. */
import { Type, type Static } from 'typebox';
import { ContinueToken, ErrorBody, Limit, PairView, protectedErrors, StringEnum } from './common.js';

/** The `state` filter of the node list. */
export const NodeFilter = StringEnum(['healthy', 'unhealthy', 'out-of-service', 'status-pending', 'unmanaged'], {
  description: 'healthy: Ready=True; unhealthy: not Ready (or Node gone); out-of-service: has the '
    + 'node.kubernetes.io/out-of-service taint; status-pending: status.volumesAttached awaits a write (K3); '
    + 'unmanaged: no controller-managed-attach-detach annotation (B1)',
});
export type NodeFilter = Static<typeof NodeFilter>;

const NodeFields = {
  name: Type.String(),
  managed: Type.Boolean(),
  healthy: Type.Boolean(),
  outOfService: Type.Boolean(),
  statusUpdateNeeded: Type.Boolean(),
  desired: Type.Integer({ description: 'Desired pairs on the node' }),
  attached: Type.Integer(),
  uncertain: Type.Integer(),
};

export const NodeSummary = Type.Object(NodeFields);
export type NodeSummary = Static<typeof NodeSummary>;

export const NodeDetail = Type.Object({
  ...NodeFields,
  volumesInUse: Type.Optional(Type.Array(Type.String(), { description: 'Last observed status.volumesInUse; absent when never observed or unreadable (every volume then counts as mounted)' })),
  volumes: Type.Array(PairView, { description: 'Every pair of the node: desired, actual or holding operation state' }),
});
export type NodeDetail = Static<typeof NodeDetail>;

export const NodeList = Type.Object({
  items: Type.Array(NodeSummary),
  continue: Type.Optional(Type.String({ description: 'Present when more nodes may follow; a filtered page may be short' })),
});
export type NodeList = Static<typeof NodeList>;

export const NodeName = Type.String({ minLength: 1, maxLength: 253 });

export const listNodesSchema = {
  summary: 'Nodes, paged by internal id order',
  querystring: Type.Object({ limit: Type.Optional(Limit), continue: Type.Optional(ContinueToken), state: Type.Optional(NodeFilter) }),
  response: { 200: NodeList, ...protectedErrors },
};

export const getNodeSchema = {
  summary: 'One node: desired vs actual volumes, timers, operations, pods, waitingFor',
  params: Type.Object({ name: NodeName }),
  response: { 200: NodeDetail, ...protectedErrors, 404: ErrorBody },
};

export const nodeWindowSchema = {
  summary: 'An offset window of the nodes matching a name prefix and state, with their total (the dashboard\'s node list)',
  querystring: Type.Object({
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000, default: 0 })),
    limit: Type.Optional(Limit),
    prefix: Type.Optional(Type.String({ maxLength: 253, default: '' })),
    state: Type.Optional(NodeFilter),
  }),
  response: {
    200: Type.Object({ total: Type.Integer(), offset: Type.Integer(), items: NodeList.properties.items }),
    ...protectedErrors,
  },
};
