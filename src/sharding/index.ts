export { assignTargets } from './assignment.js';
export { bucketOf, DEFAULT_BUCKETS, hash53, mix53 } from './bucket-hash.js';
export { BUCKET_KIND, BUCKET_LEASE_PREFIX, createBucketLeases, KIND_LABEL, type BucketLeases, type BucketLeasesOptions } from './bucket-leases.js';
export type { ShardLeaseApi } from './lease-api.js';
export { createMembership, FENCED_PREFIX, MEMBER_LEASE_PREFIX, RING, RING_LABEL, type Membership, type MembershipOptions } from './membership.js';
export { createShardCoordinator, type ShardCoordinator, type ShardCoordinatorOptions } from './shard-coordinator.js';
