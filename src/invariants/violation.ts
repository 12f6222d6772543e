/**
 * What the invariant checker reports. Kinds, as the safety model names them:
 * - `multi-attach` (a): a volume whose PV forbids multi-attach (access modes only
 *   ReadWriteOnce/ReadWriteOncePod) has VolumeAttachments on two nodes at once, not both being deleted;
 * - `detach-while-mounted` (b): a VolumeAttachment's deletion was requested while its volume
 *   is in the node's volumesInUse, the node has no out-of-service taint and the max-wait
 *   timer cannot have expired;
 * - `reported-not-attached` (c): `node.status.volumesAttached` lists a volume whose
 *   VolumeAttachment is missing, not attached, or being deleted;
 * - `duplicate-attachment` (d): two VolumeAttachments for the same volume and node;
 * - `not-converged` (e): after faults stopped, a desired pair was not attached (and reported)
 *   within the bound.
 */
export const VIOLATION_KINDS = ['multi-attach', 'detach-while-mounted', 'reported-not-attached', 'duplicate-attachment', 'not-converged'] as const;
export type ViolationKind = (typeof VIOLATION_KINDS)[number];

export interface Violation {
  kind: ViolationKind;
  /** Epoch ms when it was observed. */
  at: number;
  /** Store resourceVersion of the change that revealed it (the sweep's current one for `not-converged`). */
  rv: number;
  /** Unique volume name (or `pv:<name>` when it could not be resolved). */
  volume: string;
  nodes: string[];
  /** VolumeAttachment names involved. */
  attachments: string[];
  detail: string;
}
