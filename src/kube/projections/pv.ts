/**
 * PersistentVolume projection: claimRef (C4), access modes (multi-attach, H) and the volume
 * source, either CSI or an in-tree source to translate (C6).
 */
import {
  inTreeSourceOf,
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
import { sharedList, sharedString } from './string-pool.js';

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
      if (intree) out.intree = intree;
      else {
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
  return pv;
}

/**
 * A PV update as the store keeps it (ResourceKind.keepFrom): `old` itself when nothing the
 * projection keeps changed. Most PV updates change nothing it keeps: the external-attacher
 * adds and removes its finalizer around every attachment, one update each, half a million in a
 * 50k-node cold start, whose projections would otherwise be promoted with the store and freed
 * only by a full collection.
 */
export function keepPvFrom(old: PvRecord, fresh: PvRecord): PvRecord {
  const claimRef = sameClaimRef(old.claimRef, fresh.claimRef) ? old.claimRef : fresh.claimRef;
  const csi = sameCsi(old.csi, fresh.csi) ? old.csi : fresh.csi;
  const accessModes = sameStrings(old.accessModes, fresh.accessModes) ? old.accessModes : fresh.accessModes;
  if (fresh.name === old.name && fresh.phase === old.phase && accessModes === old.accessModes && claimRef === old.claimRef
    && csi === old.csi && sameInTree(old.intree, fresh.intree) && fresh.otherSourceType === old.otherSourceType) {
    return old;
  }
  // `fresh` is this update's own projection, not yet seen by anyone: completed in place.
  if (fresh.name === old.name) fresh.name = old.name;
  fresh.accessModes = accessModes;
  if (claimRef !== undefined) fresh.claimRef = claimRef;
  if (csi !== undefined) fresh.csi = csi;
  if (fresh.intree !== undefined && sameInTree(old.intree, fresh.intree)) fresh.intree = old.intree;
  return fresh;
}

type ClaimRef = PvRecord['claimRef'];
type CsiSource = PvRecord['csi'];

function sameClaimRef(a: ClaimRef, b: ClaimRef): boolean {
  return a === b || (a !== undefined && b !== undefined && a.namespace === b.namespace && a.name === b.name && a.uid === b.uid);
}

function sameCsi(a: CsiSource, b: CsiSource): boolean {
  return a === b || (a !== undefined && b !== undefined && a.driver === b.driver && a.volumeHandle === b.volumeHandle && a.readOnly === b.readOnly);
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameInTree(a: InTreeSource | undefined, b: InTreeSource | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.type !== b.type) return false;
  const ka = Object.keys(a.fields);
  if (ka.length !== Object.keys(b.fields).length) return false;
  return ka.every((k) => Object.hasOwn(b.fields, k) && a.fields[k] === b.fields[k]);
}

export const PV_KIND: ResourceKind<PvRecord> = {
  resource: 'persistentvolumes', path: '/api/v1/persistentvolumes', namespaced: false, project: projectPv, reshare: resharePv, keepFrom: keepPvFrom,
};
