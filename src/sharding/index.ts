/**
 * Scale-out ownership: node buckets (bucket-hash.ts), their target owners (assignment.ts), this
 * replica's membership and its view of peers (membership.ts), the bucket Leases
 * (bucket-leases.ts) and the loop that claims, warms up, drains and releases them
 * (shard-coordinator.ts). The controller asks `ShardCoordinator.mayAct(node)` before each write.
 * Tests build replicas over `createFakeLeaseApi()` (fake-lease-api.ts).
 */
export { assignTargets } from './assignment.js';
export { bucketOf, DEFAULT_BUCKETS, hash53, mix53 } from './bucket-hash.js';
export { BUCKET_KIND, BUCKET_LEASE_PREFIX, createBucketLeases, KIND_LABEL, type BucketLeases, type BucketLeasesOptions } from './bucket-leases.js';
export type { ShardLeaseApi } from './lease-api.js';
export { createMembership, FENCED_PREFIX, MEMBER_LEASE_PREFIX, RING, RING_LABEL, type Membership, type MembershipOptions } from './membership.js';
export { createShardCoordinator, type ShardCoordinator, type ShardCoordinatorOptions } from './shard-coordinator.js';
