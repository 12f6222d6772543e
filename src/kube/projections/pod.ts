/**
 * Pod projection: the fields the desired-state rules (C1–C5, C10) read, nothing else.
 */
import {
  inTreeSourceOf,
  META_KEEP,
  optArray,
  optBool,
  optRecord,
  optStr,
  optTimestamp,
  project,
  record,
  str,
  underPath,
  type InTreeSource,
  type Obj,
  type ResourceKind,
} from './read.js';
import { keepEqual } from './keep-equal.js';
import { sharedString } from './string-pool.js';
import { POD_CODEC } from './pod-codec.js';

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

/**
 * One entry of `spec.volumes`. Paths are relative to the entry: the caller prefixes them
 * (`underPath`) only when the entry is malformed, so a valid pod builds no path strings.
 */
function projectVolume(raw: unknown, podName: string): PodVolume {
  const v = record(raw, '');
  const name = sharedString(str(v.name, 'name'));
  const pvc = optRecord(v.persistentVolumeClaim, 'persistentVolumeClaim');
  if (pvc) {
    const out: PodVolume = { name, kind: 'pvc', claimName: str(pvc.claimName, 'persistentVolumeClaim.claimName'), sourceType: 'persistentVolumeClaim' };
    const readOnly = optBool(pvc.readOnly, 'persistentVolumeClaim.readOnly');
    if (readOnly !== undefined) out.readOnly = readOnly;
    return out;
  }
  if (optRecord(v.ephemeral, 'ephemeral')) {
    return { name, kind: 'ephemeral', claimName: `${podName}-${name}`, sourceType: 'ephemeral' };
  }
  const csi = optRecord(v.csi, 'csi');
  if (csi) {
    const out: PodVolume = { name, kind: 'csi-inline', driver: sharedString(str(csi.driver, 'csi.driver')), sourceType: 'csi' };
    const readOnly = optBool(csi.readOnly, 'csi.readOnly');
    if (readOnly !== undefined) out.readOnly = readOnly;
    return out;
  }
  const intree = inTreeSourceOf(v, '');
  if (intree) {
    const out: PodVolume = { name, kind: 'intree', intree, sourceType: intree.type };
    const ro = intree.fields.readOnly;
    if (typeof ro === 'boolean') out.readOnly = ro;
    return out;
  }
  const sourceType = Object.keys(v).find((k) => k !== 'name' && v[k] !== undefined && v[k] !== null) ?? 'unknown';
  return { name, kind: 'other', sourceType };
}

function projectVolumes(raw: unknown, podName: string): PodVolume[] {
  const list = optArray(raw, 'spec.volumes');
  const out = new Array<PodVolume>(list.length);
  for (let i = 0; i < list.length; i++) {
    try {
      out[i] = projectVolume(list[i], podName);
    } catch (err) {
      throw underPath(err, `spec.volumes[${i}]`);
    }
  }
  return out;
}

/** Upstream `notRunning`: a status whose state is neither terminated nor waiting counts as running. */
function noneRunning(raw: unknown, path: string): boolean {
  const statuses = optArray(raw, path);
  for (let i = 0; i < statuses.length; i++) {
    let state: Obj | undefined;
    try {
      state = optRecord(record(statuses[i], '').state, 'state');
    } catch (err) {
      throw underPath(err, `${path}[${i}]`);
    }
    if (state === undefined || (state.terminated == null && state.waiting == null)) return false;
  }
  return true;
}

export function projectPod(raw: unknown) {
  return project<PodRecord>(raw, (o) => {
    const meta = record(o.metadata, 'metadata');
    const name = str(meta.name, 'metadata.name');
    const spec = optRecord(o.spec, 'spec') ?? {};
    const status = optRecord(o.status, 'status') ?? {};
    const volumes = projectVolumes(spec.volumes, name);
    const deletionTimestamp = optTimestamp(meta.deletionTimestamp, 'metadata.deletionTimestamp');
    const pod: PodRecord = {
      uid: str(meta.uid, 'metadata.uid'),
      namespace: sharedString(str(meta.namespace, 'metadata.namespace')),
      name,
      nodeName: sharedString(optStr(spec.nodeName, 'spec.nodeName') ?? ''),
      phase: sharedString(optStr(status.phase, 'status.phase') ?? ''),
      allContainersNotRunning:
        noneRunning(status.initContainerStatuses, 'status.initContainerStatuses') &&
        noneRunning(status.containerStatuses, 'status.containerStatuses') &&
        noneRunning(status.ephemeralContainerStatuses, 'status.ephemeralContainerStatuses'),
      volumes,
    };
    if (deletionTimestamp) pod.deletionTimestamp = deletionTimestamp;
    return pod;
  });
}

/** The strings {@link projectPod} pools, pooled again (ResourceKind.reshare). */
export function resharePod(pod: PodRecord): PodRecord {
  pod.namespace = sharedString(pod.namespace);
  pod.nodeName = sharedString(pod.nodeName);
  pod.phase = sharedString(pod.phase);
  for (const v of pod.volumes) {
    v.name = sharedString(v.name);
    if (v.driver !== undefined) v.driver = sharedString(v.driver);
  }
  return pod;
}

const CONTAINER_STATES = [{ state: { terminated: true, waiting: true } }] as const;

export const POD_KIND: ResourceKind<PodRecord> = {
  resource: 'pods',
  path: '/api/v1/pods',
  namespaced: true,
  project: projectPod,
  reshare: resharePod,
  codec: POD_CODEC,
  // An update that changes nothing the projection reads leaves the stored object in place (and
  // the populator skips it when nothing is left to retry); one that does shares the unchanged
  // fields (the volume list) with it.
  keepFrom: keepEqual,
  keep: {
    metadata: { ...META_KEEP, deletionTimestamp: true },
    spec: { nodeName: true, volumes: true },
    status: { phase: true, initContainerStatuses: CONTAINER_STATES, containerStatuses: CONTAINER_STATES, ephemeralContainerStatuses: CONTAINER_STATES },
  },
};
