/**
 * VolumeAttachment projection: identity, source, and the status the external attacher writes
 * (L3, L4, M1). The controller never writes status.
 */
import { META_KEEP, optBool, optRecord, optStr, optTimestamp, project, record, str, type ResourceKind } from './read.js';
import { keepEqual } from './keep-equal.js';
import { sharedString } from './string-pool.js';
import { VOLUME_ATTACHMENT_CODEC } from './volume-attachment-codec.js';

/**
 * The object's resourceVersion and finalizers are not kept: nothing reads them (VolumeAttachments
 * are found by name, L1; the store keeps each object's resourceVersion), and without them the
 * attacher's finalizer update changes nothing the record holds.
 */
export interface VolumeAttachmentRecord {
  name: string;
  /** `metadata.uid`: a delete names the incarnation it means (DeleteOptions preconditions). */
  uid?: string;
  /** `spec.attacher`: the CSI driver name. */
  attacher: string;
  nodeName: string;
  /** `spec.source.persistentVolumeName`, when the source is a PV. */
  pvName?: string;
  /** `spec.source.inlineVolumeSpec` is set (a migrated inline volume). */
  inline: boolean;
  attached: boolean;
  attachError?: string;
  detachError?: string;
  deletionTimestamp?: string;
  /** `deletionTimestamp` is set. */
  deleting: boolean;
}

function errorMessage(status: Record<string, unknown>, field: string): string | undefined {
  const e = optRecord(status[field], `status.${field}`);
  // An error object without a message still means "failed": keep it visible as ''.
  return e ? (optStr(e.message, `status.${field}.message`) ?? '') : undefined;
}

export function projectVolumeAttachment(raw: unknown) {
  return project<VolumeAttachmentRecord>(raw, (o) => {
    const meta = record(o.metadata, 'metadata');
    const spec = record(o.spec, 'spec');
    const source = optRecord(spec.source, 'spec.source') ?? {};
    const status = optRecord(o.status, 'status') ?? {};
    const pvName = optStr(source.persistentVolumeName, 'spec.source.persistentVolumeName');
    const attachError = errorMessage(status, 'attachError');
    const detachError = errorMessage(status, 'detachError');
    const deletionTimestamp = optTimestamp(meta.deletionTimestamp, 'metadata.deletionTimestamp');
    const uid = optStr(meta.uid, 'metadata.uid');
    return {
      name: str(meta.name, 'metadata.name'),
      ...(uid ? { uid } : {}),
      attacher: sharedString(str(spec.attacher, 'spec.attacher')),
      nodeName: sharedString(str(spec.nodeName, 'spec.nodeName')),
      ...(pvName ? { pvName } : {}),
      inline: source.inlineVolumeSpec != null,
      attached: optBool(status.attached, 'status.attached') ?? false,
      ...(attachError !== undefined ? { attachError } : {}),
      ...(detachError !== undefined ? { detachError } : {}),
      ...(deletionTimestamp ? { deletionTimestamp } : {}),
      deleting: deletionTimestamp !== undefined,
    };
  });
}

/** The strings {@link projectVolumeAttachment} pools, pooled again (ResourceKind.reshare). */
export function reshareVolumeAttachment(va: VolumeAttachmentRecord): VolumeAttachmentRecord {
  va.attacher = sharedString(va.attacher);
  va.nodeName = sharedString(va.nodeName);
  return va;
}

/**
 * VolumeAttachment updates as the store keeps them (ResourceKind.keepFrom, keep-equal.ts): the
 * attacher's finalizer update changes nothing the record holds, so the stored record stays;
 * the status update takes the stored copies of the unchanged strings (the 68-character name,
 * the PV name).
 */
export const VOLUME_ATTACHMENT_KIND: ResourceKind<VolumeAttachmentRecord> = {
  resource: 'volumeattachments',
  path: '/apis/storage.k8s.io/v1/volumeattachments',
  namespaced: false,
  project: projectVolumeAttachment,
  reshare: reshareVolumeAttachment,
  codec: VOLUME_ATTACHMENT_CODEC,
  keepFrom: keepEqual,
  keep: {
    metadata: { ...META_KEEP, deletionTimestamp: true },
    spec: { attacher: true, nodeName: true, source: { persistentVolumeName: true, inlineVolumeSpec: true } },
    status: { attached: true, attachError: { message: true }, detachError: { message: true } },
  },
};
