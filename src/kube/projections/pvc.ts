/**
 * PersistentVolumeClaim projection: binding (C4) and the controlling owner (C5 generic ephemeral).
 */
import { META_KEEP, optBool, optRecord, optStr, project, readItems, record, str, type ResourceKind } from './read.js';
import { sharedString } from './string-pool.js';
import { PVC_CODEC } from './pvc-codec.js';

export interface PvcRecord {
  uid: string;
  namespace: string;
  name: string;
  /** `status.phase` (`Pending`, `Bound`, `Lost`); '' when unset. */
  phase: string;
  /** `spec.volumeName`; '' while unbound. */
  volumeName: string;
  /** uid of the ownerReference with `controller: true` (C5: must be the pod), if any. */
  controllerUid?: string;
}

export function projectPvc(raw: unknown) {
  return project<PvcRecord>(raw, (o) => {
    const meta = record(o.metadata, 'metadata');
    const spec = optRecord(o.spec, 'spec') ?? {};
    const status = optRecord(o.status, 'status') ?? {};
    let controllerUid: string | undefined;
    readItems(meta.ownerReferences, 'metadata.ownerReferences', (r) => {
      const ref = record(r, '');
      if (optBool(ref.controller, 'controller') === true) controllerUid = str(ref.uid, 'uid');
    });
    return {
      uid: str(meta.uid, 'metadata.uid'),
      namespace: sharedString(str(meta.namespace, 'metadata.namespace')),
      name: str(meta.name, 'metadata.name'),
      phase: sharedString(optStr(status.phase, 'status.phase') ?? ''),
      volumeName: optStr(spec.volumeName, 'spec.volumeName') ?? '',
      ...(controllerUid ? { controllerUid } : {}),
    };
  });
}

/** The strings {@link projectPvc} pools, pooled again (ResourceKind.reshare). */
export function resharePvc(pvc: PvcRecord): PvcRecord {
  pvc.namespace = sharedString(pvc.namespace);
  pvc.phase = sharedString(pvc.phase);
  return pvc;
}

export const PVC_KIND: ResourceKind<PvcRecord> = {
  resource: 'persistentvolumeclaims',
  path: '/api/v1/persistentvolumeclaims',
  namespaced: true,
  project: projectPvc,
  reshare: resharePvc,
  codec: PVC_CODEC,
  keep: { metadata: { ...META_KEEP, ownerReferences: [{ controller: true, uid: true }] }, spec: { volumeName: true }, status: { phase: true } },
};
