/**
 * The Lease calls sharding makes: KubeApiClient's lease methods (not rate limited, so that
 * renewals and hand-overs never queue behind controller traffic). Every write is guarded: create
 * fails with 409 when the Lease exists, update with 409 when its resourceVersion is stale.
 */
import type { KubeApiClient } from '../kube/api-client.js';

export type ShardLeaseApi = Pick<KubeApiClient, 'getLease' | 'createLease' | 'updateLease' | 'listLeases'>;
