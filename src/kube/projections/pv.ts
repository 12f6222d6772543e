/**
 * PersistentVolume projection: claimRef (C4), access modes (multi-attach, H) and the volume
 * source, either CSI or an in-tree source to translate (C6).
 */
import {
  inTreeSourceOf,
  META_KEEP,
  optBool,
  optRecord,
  optStr,
  project,
  record,
  str,
  stringArray,
  type InTreeSource,
  type ResourceKind,
} from './read.js';
import { pvZoneLabel } from '../../plugins/volume-spec.js';
import { keepEqual } from './keep-equal.js';
import { sharedList, sharedString } from './string-pool.js';
import { PV_CODEC } from './pv-codec.js';

/** The PV's own uid is not kept: no rule reads it (C4 compares the claim's uid with `claimRef.uid`). */
export interface PvRecord {
  name: string;
  /** `status.phase`; '' when unset. */
  phase: string;
  claimRef?: { namespace: string; name: string; uid: string };
  /** Shared and frozen (string-pool.ts). */
  accessModes: readonly string[];
  csi?: { driver: string; volumeHandle: string; readOnly: boolean };
  intree?: InTreeSource;
  /**
   * For an in-tree source: the zone label its CSI name is made with (gcePersistentDisk,
   * C6; `pvZoneLabel`), as the kubelet makes the name it waits for in node status.
   */
  zoneLabel?: string;
  /** The source's field name when it is neither CSI nor migratable (`nfs`, `hostPath`, `local`, …). */
  otherSourceType?: string;
}

const NON_SOURCE_FIELDS = new Set([
  'accessModes', 'capacity', 'claimRef', 'mountOptions', 'nodeAffinity',
  'persistentVolumeReclaimPolicy', 'storageClassName', 'volumeMode', 'volumeAttributesClassName',
]);

export function projectPv(raw: unknown) {
  return project<PvRecord>(raw, (o) => {
    const meta = record(o.metadata, 'metadata');
    const spec = optRecord(o.spec, 'spec') ?? {};
    const status = optRecord(o.status, 'status') ?? {};
    const ref = optRecord(spec.claimRef, 'spec.claimRef');
    const csi = optRecord(spec.csi, 'spec.csi');
    const out: PvRecord = {
      name: str(meta.name, 'metadata.name'),
      phase: sharedString(optStr(status.phase, 'status.phase') ?? ''),
      accessModes: sharedList(stringArray(spec.accessModes, 'spec.accessModes')),
    };
    if (ref) {
      // A claimRef without uid (pre-bound PV) never matches a PVC uid (C4), so '' is safe.
      out.claimRef = {
        namespace: sharedString(optStr(ref.namespace, 'spec.claimRef.namespace') ?? ''),
        name: optStr(ref.name, 'spec.claimRef.name') ?? '',
        uid: optStr(ref.uid, 'spec.claimRef.uid') ?? '',
      };
    }
    if (csi) {
      out.csi = {
        driver: sharedString(str(csi.driver, 'spec.csi.driver')),
        volumeHandle: str(csi.volumeHandle, 'spec.csi.volumeHandle'),
        readOnly: optBool(csi.readOnly, 'spec.csi.readOnly') ?? false,
      };
    } else {
      const intree = inTreeSourceOf(spec, 'spec');
      if (intree) {
        out.intree = intree;
        const zone = pvZoneLabel(optRecord(meta.labels, 'metadata.labels'));
        if (zone !== undefined) out.zoneLabel = sharedString(zone);
      } else {
        const other = Object.keys(spec).find((k) => !NON_SOURCE_FIELDS.has(k) && spec[k] != null);
        if (other) out.otherSourceType = other;
      }
    }
    return out;
  });
}

/** The strings and the access-mode list {@link projectPv} pools, pooled again (ResourceKind.reshare). */
export function resharePv(pv: PvRecord): PvRecord {
  pv.phase = sharedString(pv.phase);
  pv.accessModes = sharedList(pv.accessModes);
  if (pv.claimRef) pv.claimRef.namespace = sharedString(pv.claimRef.namespace);
  if (pv.csi) pv.csi.driver = sharedString(pv.csi.driver);
  if (pv.zoneLabel !== undefined) pv.zoneLabel = sharedString(pv.zoneLabel);
  return pv;
}

/**
 * PV updates as the store keeps them (ResourceKind.keepFrom, keep-equal.ts): most change
 * nothing the projection keeps (the external-attacher's finalizer, added when a volume is
 * attached and removed when it is detached: half a million updates in a 50k-node cold start),
 * and then the stored record stays.
 */
export const PV_KIND: ResourceKind<PvRecord> = {
  resource: 'persistentvolumes', path: '/api/v1/persistentvolumes', namespaced: false, project: projectPv, reshare: resharePv, keepFrom: keepEqual, codec: PV_CODEC,
  // The source is told by all of spec's keys (otherSourceType), so spec is kept whole.
  keep: { metadata: { ...META_KEEP, labels: true }, spec: true, status: { phase: true } },
};
