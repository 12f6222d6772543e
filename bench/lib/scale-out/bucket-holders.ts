/**
 * Who holds each node bucket, as the bucket Leases (`fleet-attach-b-NNNN`) are committed: the
 * holder at a resourceVersion is the `holderIdentity` of the bucket's last Lease change before
 * it ('' when free or deleted). Fed in commit order; listeners hear every change of holder.
 */
import { bucketOf } from '../../../src/sharding/index.js';
import { BUCKET_LEASE_PREFIX } from '../../../src/sharding/index.js';

export interface BucketHolders {
  /** Applies a committed Lease change (other Leases are ignored). */
  apply(rv: number, leaseName: string, holder: string): void;
  bucketOf(node: string): number;
  holderOf(node: string): string;
  holder(bucket: number): string;
  /** Buckets held by `id` now. */
  heldBy(id: string): number[];
  /** Buckets held by anyone now. */
  held(): number;
  /** Calls `fn` on every change of a bucket's holder; returns the unsubscribe function. */
  onChange(fn: (bucket: number, holder: string, previous: string) => void): () => void;
}

const LEASE = new RegExp(`^${BUCKET_LEASE_PREFIX}(\\d+)$`);

export function createBucketHolders(buckets: number): BucketHolders {
  const holders = new Map<number, string>();
  const listeners = new Set<(bucket: number, holder: string, previous: string) => void>();
  return {
    apply(_rv, leaseName, holder) {
      const m = LEASE.exec(leaseName);
      if (!m) return;
      const b = Number(m[1]);
      const previous = holders.get(b) ?? '';
      if (previous === holder) return;
      holders.set(b, holder);
      for (const fn of [...listeners]) fn(b, holder, previous);
    },
    bucketOf: (node) => bucketOf(node, buckets),
    holderOf: (node) => holders.get(bucketOf(node, buckets)) ?? '',
    holder: (b) => holders.get(b) ?? '',
    heldBy: (id) => [...holders].filter(([, h]) => h === id).map(([b]) => b).sort((a, b) => a - b),
    held: () => [...holders.values()].filter((h) => h !== '').length,
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
}
