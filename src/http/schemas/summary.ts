/** Schema of /api/v1/summary: O(1) counts, loop timings and watch health. */
import { Type, type Static } from 'typebox';
import { protectedErrors, StringEnum } from './common.js';

const Timing = Type.Object({
  lastMs: Type.Number(), p50Ms: Type.Number(), p99Ms: Type.Number(), samples: Type.Integer(),
});

export const Summary = Type.Object({
  ready: Type.Boolean(),
  role: StringEnum(['leader', 'standby', 'single', 'shard']),
  nodes: Type.Object({
    total: Type.Integer({ description: 'Nodes known to the state (managed or not)' }),
    managed: Type.Integer(),
    healthy: Type.Integer({ description: 'Managed nodes with Ready=True' }),
    outOfService: Type.Integer(),
    statusUpdatesPending: Type.Integer({ description: 'Nodes whose status.volumesAttached must be rewritten (K3)' }),
  }),
  volumes: Type.Integer(),
  pairs: Type.Object({
    total: Type.Integer(),
    desired: Type.Integer(),
    desiredAttached: Type.Integer({ description: 'Desired pairs whose attachment is confirmed (equal to desired when every wanted volume is attached)' }),
    attached: Type.Integer({ description: 'Confirmed attachments (D1)' }),
    uncertain: Type.Integer(),
    reportedAsAttached: Type.Integer(),
  }),
  operations: Type.Object({ pending: Type.Integer(), backoff: Type.Integer() }),
  conflicts: Type.Integer({ description: 'Desired pairs blocked by a multi-attach conflict (G3)' }),
  loop: Type.Object({ pass: Timing, plan: Timing }),
  apiClient: Type.Object({
    inFlight: Type.Integer({ description: 'Kubernetes API requests on the wire' }),
    waiting: Type.Integer({ description: 'Requests waiting for an in-flight slot' }),
    maxInFlight: Type.Integer(),
    admissionBound: Type.Integer({ description: 'No operation starts while more requests than this wait (the API server is the bottleneck)' }),
  }),
  watches: Type.Array(Type.Object({
    resource: Type.String(),
    synced: Type.Boolean(),
    events: Type.Integer(),
    relists: Type.Integer(),
    restarts: Type.Integer(),
    lastEventAgeMs: Type.Optional(Type.Number()),
  })),
});
export type Summary = Static<typeof Summary>;

export const summarySchema = {
  summary: 'Fleet summary: counts, loop timings, watch health',
  response: { 200: Summary, 401: protectedErrors[401] },
};
