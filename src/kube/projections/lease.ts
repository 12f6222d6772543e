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
  /**
   * What the Lease holds beyond the election's fields (labels, annotations, owner references,
   * spec fields such as `strategy` and `preferredHolder`), written back unchanged by an update:
   * client-go's LeaseLock keeps the metadata the same way; keeping the other spec fields is ours
   * (it replaces the whole spec).
   */
  kept?: { metadata: Record<string, unknown>; spec: Record<string, unknown> };
}

const ELECTION_SPEC = new Set(['holderIdentity', 'leaseDurationSeconds', 'acquireTime', 'renewTime', 'leaseTransitions']);
const KEPT_METADATA = ['labels', 'annotations', 'ownerReferences'] as const;

function keptFields(meta: Record<string, unknown>, spec: Record<string, unknown>): LeaseRecord['kept'] | undefined {
  const m: Record<string, unknown> = {};
  const s: Record<string, unknown> = {};
  for (const k of KEPT_METADATA) if (meta[k] !== undefined) m[k] = meta[k];
  for (const [k, v] of Object.entries(spec)) if (!ELECTION_SPEC.has(k) && v !== undefined) s[k] = v;
  return Object.keys(m).length || Object.keys(s).length ? { metadata: m, spec: s } : undefined;
}

export function projectLease(raw: unknown) {
  return project<LeaseRecord>(raw, (o) => {
    const meta = record(o.metadata, 'metadata');
    const spec = optRecord(o.spec, 'spec') ?? {};
    const rv = optStr(meta.resourceVersion, 'metadata.resourceVersion');
    const acquireTime = optTimestamp(spec.acquireTime, 'spec.acquireTime');
    const renewTime = optTimestamp(spec.renewTime, 'spec.renewTime');
    const kept = keptFields(meta, spec);
    return {
      namespace: str(meta.namespace, 'metadata.namespace'),
      name: str(meta.name, 'metadata.name'),
      ...(rv ? { resourceVersion: rv } : {}),
      holderIdentity: optStr(spec.holderIdentity, 'spec.holderIdentity') ?? '',
      leaseDurationSeconds: optInt(spec.leaseDurationSeconds, 'spec.leaseDurationSeconds') ?? 0,
      ...(acquireTime ? { acquireTime } : {}),
      ...(renewTime ? { renewTime } : {}),
      leaseTransitions: optInt(spec.leaseTransitions, 'spec.leaseTransitions') ?? 0,
      ...(kept ? { kept } : {}),
    };
  });
}
