/**
 * Pod projection: the fields the desired-state rules (C1–C5, C10) read, nothing else.
 */
import {
  inTreeSourceOf,
  optArray,
  optBool,
  optRecord,
  optStr,
  optTimestamp,
  project,
  record,
  str,
  type InTreeSource,
  type Obj,
  type ResourceKind,
} from './read.js';

export type PodVolumeKind = 'pvc' | 'ephemeral' | 'csi-inline' | 'intree' | 'other';

export interface PodVolume {
  /** `spec.volumes[].name` (the inline spec name used in event texts). */
  name: string;
  kind: PodVolumeKind;
  /** pvc: `persistentVolumeClaim.claimName`; ephemeral: `<pod name>-<volume name>` (C5). */
  claimName?: string;
  /** pvc: `persistentVolumeClaim.readOnly`; intree / csi-inline: the source's `readOnly`. */
  readOnly?: boolean;
  /** intree: the migratable source to translate to CSI (C6). */
  intree?: InTreeSource;
  /** csi-inline: `csi.driver`. */
  driver?: string;
  /** The volume source's field name (`hostPath`, `nfs`, `iscsi`, …), for logs about skipped volumes. */
  sourceType: string;
}

export interface PodRecord {
  uid: string;
  namespace: string;
  name: string;
  /** `spec.nodeName`; '' while unscheduled. */
  nodeName: string;
  /** `status.phase`; '' when unset. */
  phase: string;
  deletionTimestamp?: string;
  /**
   * Rule C2's container test: every init, regular and ephemeral container status is `terminated`
   * or `waiting`; an empty status list counts as not running.
   */
  allContainersNotRunning: boolean;
  volumes: PodVolume[];
}

function projectVolume(v: Obj, podName: string, path: string): PodVolume {
  const name = str(v.name, `${path}.name`);
  const pvc = optRecord(v.persistentVolumeClaim, `${path}.persistentVolumeClaim`);
  if (pvc) {
    const readOnly = optBool(pvc.readOnly, `${path}.persistentVolumeClaim.readOnly`);
    return {
      name,
      kind: 'pvc',
      claimName: str(pvc.claimName, `${path}.persistentVolumeClaim.claimName`),
      ...(readOnly !== undefined ? { readOnly } : {}),
      sourceType: 'persistentVolumeClaim',
    };
  }
  if (optRecord(v.ephemeral, `${path}.ephemeral`)) {
    return { name, kind: 'ephemeral', claimName: `${podName}-${name}`, sourceType: 'ephemeral' };
  }
  const csi = optRecord(v.csi, `${path}.csi`);
  if (csi) {
    const readOnly = optBool(csi.readOnly, `${path}.csi.readOnly`);
    return { name, kind: 'csi-inline', driver: str(csi.driver, `${path}.csi.driver`), ...(readOnly !== undefined ? { readOnly } : {}), sourceType: 'csi' };
  }
  const intree = inTreeSourceOf(v, path);
  if (intree) {
    const ro = intree.fields.readOnly;
    return { name, kind: 'intree', intree, ...(typeof ro === 'boolean' ? { readOnly: ro } : {}), sourceType: intree.type };
  }
  const sourceType = Object.keys(v).find((k) => k !== 'name' && v[k] !== undefined && v[k] !== null) ?? 'unknown';
  return { name, kind: 'other', sourceType };
}

/** Upstream `notRunning`: a status whose state is neither terminated nor waiting counts as running. */
function noneRunning(statuses: unknown[], path: string): boolean {
  return statuses.every((s, i) => {
    const state = optRecord(record(s, `${path}[${i}]`).state, `${path}[${i}].state`);
    return state !== undefined && (state.terminated != null || state.waiting != null);
  });
}

export function projectPod(raw: unknown) {
  return project<PodRecord>(raw, (o) => {
    const meta = record(o.metadata, 'metadata');
    const name = str(meta.name, 'metadata.name');
    const spec = optRecord(o.spec, 'spec') ?? {};
    const status = optRecord(o.status, 'status') ?? {};
    const volumes = optArray(spec.volumes, 'spec.volumes').map((v, i) =>
      projectVolume(record(v, `spec.volumes[${i}]`), name, `spec.volumes[${i}]`),
    );
    const deletionTimestamp = optTimestamp(meta.deletionTimestamp, 'metadata.deletionTimestamp');
    return {
      uid: str(meta.uid, 'metadata.uid'),
      namespace: str(meta.namespace, 'metadata.namespace'),
      name,
      nodeName: optStr(spec.nodeName, 'spec.nodeName') ?? '',
      phase: optStr(status.phase, 'status.phase') ?? '',
      ...(deletionTimestamp ? { deletionTimestamp } : {}),
      allContainersNotRunning:
        noneRunning(optArray(status.initContainerStatuses, 'status.initContainerStatuses'), 'status.initContainerStatuses') &&
        noneRunning(optArray(status.containerStatuses, 'status.containerStatuses'), 'status.containerStatuses') &&
        noneRunning(optArray(status.ephemeralContainerStatuses, 'status.ephemeralContainerStatuses'), 'status.ephemeralContainerStatuses'),
      volumes,
    };
  });
}

export const POD_KIND: ResourceKind<PodRecord> = { resource: 'pods', path: '/api/v1/pods', namespaced: true, project: projectPod };
