/**
 * coordination.k8s.io/v1 Lease, as leader election reads and writes it.
 */
import { optInt, optRecord, optStr, optTimestamp, project, record, str } from './read.js';

export interface LeaseRecord {
  namespace: string;
  name: string;
  /** Required on update (optimistic concurrency); ignored on create. */
  resourceVersion?: string;
  /** '' when nobody holds the lease (released). */
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** RFC 3339 timestamps (MicroTime on the wire). */
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions: number;
}

export function projectLease(raw: unknown) {
  return project<LeaseRecord>(raw, (o) => {
    const meta = record(o.metadata, 'metadata');
    const spec = optRecord(o.spec, 'spec') ?? {};
    const rv = optStr(meta.resourceVersion, 'metadata.resourceVersion');
    const acquireTime = optTimestamp(spec.acquireTime, 'spec.acquireTime');
    const renewTime = optTimestamp(spec.renewTime, 'spec.renewTime');
    return {
      namespace: str(meta.namespace, 'metadata.namespace'),
      name: str(meta.name, 'metadata.name'),
      ...(rv ? { resourceVersion: rv } : {}),
      holderIdentity: optStr(spec.holderIdentity, 'spec.holderIdentity') ?? '',
      leaseDurationSeconds: optInt(spec.leaseDurationSeconds, 'spec.leaseDurationSeconds') ?? 0,
      ...(acquireTime ? { acquireTime } : {}),
      ...(renewTime ? { renewTime } : {}),
      leaseTransitions: optInt(spec.leaseTransitions, 'spec.leaseTransitions') ?? 0,
    };
  });
}
