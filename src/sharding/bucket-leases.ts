/**
 * The ownership records of the buckets: one Lease per bucket, `fleet-attach-b-<0000..>`
 * (labelled `fleet-attach.io/kind=bucket`), whose holderIdentity is the owning replica ('' when
 * free) and whose leaseTransitions is the bucket's epoch, the fencing token of an ownership.
 *
 * Guarantees:
 * - Every write is a compare-and-swap: `claim` creates the Lease when it was seen absent (409
 *   if someone else created it first) or updates the record seen (409 if anything wrote it
 *   since); `release` updates the record the owner holds. So of two replicas acting on the same
 *   observation at most one succeeds, whatever either believes.
 * - A claim increments the epoch (the first claim of a new Lease is epoch 1; 0 means never
 *   owned), a release keeps it: epochs of successive owners strictly increase.
 * - The Leases are never renewed: `renewTime` is the time of the last ownership change, and the
 *   lease duration is informational. Liveness lives in the member Leases (membership.ts).
 */
import type { CallOptions, LeaseRecord } from '../kube/api-client.js';
import type { ShardLeaseApi } from './lease-api.js';

export const BUCKET_LEASE_PREFIX = 'fleet-attach-b-';
export const KIND_LABEL = 'fleet-attach.io/kind';
export const BUCKET_KIND = 'bucket';

export interface BucketLeasesOptions {
  api: ShardLeaseApi;
  namespace: string;
  buckets: number;
  /** Written as leaseDurationSeconds, for people reading the Leases (default 15). */
  leaseDurationSeconds?: number;
}

export interface BucketLeases {
  /** Lease name of bucket `b`. */
  name(b: number): string;
  /** Bucket of a Lease name, or -1 when it names no bucket of this ring. */
  bucketOf(name: string): number;
  /** All bucket Leases, by bucket (undefined where absent). */
  list(opts?: CallOptions): Promise<Array<LeaseRecord | undefined>>;
  /** Reads one bucket's Lease. */
  get(b: number, opts?: CallOptions): Promise<LeaseRecord | undefined>;
  /** Makes `holder` the owner, epoch + 1, guarded by `seen` (undefined: the Lease was absent). */
  claim(b: number, seen: LeaseRecord | undefined, holder: string, opts?: CallOptions): Promise<LeaseRecord>;
  /** Frees the bucket (holder ''), epoch kept, guarded by `held`. */
  release(held: LeaseRecord, opts?: CallOptions): Promise<LeaseRecord>;
}

export function createBucketLeases(opts: BucketLeasesOptions): BucketLeases {
  return new LeaseBuckets(opts);
}

class LeaseBuckets implements BucketLeases {
  private readonly width: number;
  private readonly duration: number;

  constructor(private readonly opts: BucketLeasesOptions) {
    this.width = Math.max(4, String(opts.buckets - 1).length);
    this.duration = opts.leaseDurationSeconds ?? 15;
  }

  name(b: number): string {
    return BUCKET_LEASE_PREFIX + String(b).padStart(this.width, '0');
  }

  bucketOf(name: string): number {
    if (!name.startsWith(BUCKET_LEASE_PREFIX)) return -1;
    const digits = name.slice(BUCKET_LEASE_PREFIX.length);
    if (digits.length !== this.width || !/^\d+$/.test(digits)) return -1;
    const b = Number(digits);
    return b < this.opts.buckets ? b : -1;
  }

  async list(opts?: CallOptions): Promise<Array<LeaseRecord | undefined>> {
    const out = new Array<LeaseRecord | undefined>(this.opts.buckets).fill(undefined);
    for (const rec of await this.opts.api.listLeases(this.opts.namespace, `${KIND_LABEL}=${BUCKET_KIND}`, opts)) {
      const b = this.bucketOf(rec.name);
      if (b >= 0) out[b] = rec;
    }
    return out;
  }

  get(b: number, opts?: CallOptions): Promise<LeaseRecord | undefined> {
    return this.opts.api.getLease(this.opts.namespace, this.name(b), opts);
  }

  claim(b: number, seen: LeaseRecord | undefined, holder: string, opts?: CallOptions): Promise<LeaseRecord> {
    const at = new Date().toISOString();
    const owner = { holderIdentity: holder, leaseDurationSeconds: this.duration, acquireTime: at, renewTime: at };
    if (seen) return this.opts.api.updateLease({ ...seen, ...owner, leaseTransitions: seen.leaseTransitions + 1 }, opts);
    const labels = { [KIND_LABEL]: BUCKET_KIND };
    return this.opts.api.createLease({ namespace: this.opts.namespace, name: this.name(b), ...owner, leaseTransitions: 1, kept: { metadata: { labels }, spec: {} } }, opts);
  }

  release(held: LeaseRecord, opts?: CallOptions): Promise<LeaseRecord> {
    const at = new Date().toISOString();
    return this.opts.api.updateLease({ ...held, holderIdentity: '', acquireTime: at, renewTime: at }, opts);
  }
}
