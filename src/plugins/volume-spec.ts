/**
 * VolumeSpec: one pod volume after resolution (rules C4–C6): either a PersistentVolume reached
 * through a bound PVC, or a volume written inline in the pod. It is the controller's analogue of
 * upstream's `volume.Spec` and carries only the fields the plugins, the multi-attach policy and
 * the event texts read. It is not a PV or a pod volume object: projections build it.
 *
 * `origin` says where the spec came from:
 * - `pv`: a PersistentVolume; `name` is the PV name, `accessModes` the PV's.
 * - `inline`: `pod.spec.volumes[]`; `name` is the pod volume name, `accessModes` is empty.
 * - `inline-migrated`: an inline in-tree volume translated to CSI (C6). Upstream turns it into a
 *   PV-backed spec whose PV name is made up by the translation, so it behaves like `pv` for
 *   access modes and events, and its VolumeAttachment carries `inlineVolumeSpec`.
 */

/** A PersistentVolume access mode, as in `core/v1`. */
export type AccessMode = 'ReadWriteOnce' | 'ReadOnlyMany' | 'ReadWriteMany' | 'ReadWriteOncePod';

/** A CSI source: `pv.spec.csi` (`origin` pv / inline-migrated) or `pod.spec.volumes[].csi` (inline ephemeral). */
export interface CsiSource {
  readonly type: 'csi';
  readonly driver: string;
  /** Required for PV-backed CSI; inline ephemeral CSI volumes have none. */
  readonly volumeHandle: string;
  readonly readOnly?: boolean;
  readonly fsType?: string;
  readonly volumeAttributes?: Readonly<Record<string, string>>;
}

export interface AwsElasticBlockStoreSource {
  readonly type: 'awsElasticBlockStore';
  /** `vol-…` or `aws://<zone>/vol-…`. */
  readonly volumeID: string;
  readonly fsType?: string;
  readonly partition?: number;
  readonly readOnly?: boolean;
}

export interface GcePersistentDiskSource {
  readonly type: 'gcePersistentDisk';
  readonly pdName: string;
  readonly fsType?: string;
  readonly partition?: number;
  readonly readOnly?: boolean;
}

export interface AzureDiskSource {
  readonly type: 'azureDisk';
  readonly diskName: string;
  readonly dataDiskURI: string;
  /** `Managed` (default when absent), `Shared` or `Dedicated`; only managed disks migrate. */
  readonly kind?: string;
  readonly cachingMode?: string;
  readonly fsType?: string;
  readonly readOnly?: boolean;
}

export interface CinderSource {
  readonly type: 'cinder';
  readonly volumeID: string;
  readonly fsType?: string;
  readonly readOnly?: boolean;
}

export interface VsphereVolumeSource {
  readonly type: 'vsphereVolume';
  readonly volumePath: string;
  readonly fsType?: string;
  readonly storagePolicyName?: string;
}

/** `iscsi` (pod volume or PV): attachable in-tree, the attach a no-op (C7). */
export interface IscsiSource {
  readonly type: 'iscsi';
  /** `ip:port` of the target portal. */
  readonly targetPortal: string;
  readonly iqn: string;
  readonly lun?: number;
  readonly readOnly?: boolean;
}

/** `fc` (pod volume or PV): attachable in-tree, the attach a no-op (C7). Named by WWNs and LUN, else WWIDs. */
export interface FcSource {
  readonly type: 'fc';
  readonly targetWWNs?: readonly string[];
  readonly lun?: number;
  readonly wwids?: readonly string[];
  readonly readOnly?: boolean;
}

/** In-tree sources attachable without CSI: their plugins' attach and detach do nothing. */
export type AttachOnlySource = IscsiSource | FcSource;

/** Any other source (hostPath, nfs, configMap, emptyDir, …): never attachable. `name` is the field name. */
export interface OtherSource {
  readonly type: 'other';
  readonly name: string;
}

/** The in-tree sources this controller can translate to CSI (C6). */
export type InTreeSource =
  | AwsElasticBlockStoreSource
  | GcePersistentDiskSource
  | AzureDiskSource
  | CinderSource
  | VsphereVolumeSource;

export type VolumeSource = CsiSource | InTreeSource | AttachOnlySource | OtherSource;

export interface VolumeSpec {
  /** Spec name: PV name (or the translated PV name for `inline-migrated`), else the pod volume name. Used in event texts. */
  readonly name: string;
  readonly origin: 'pv' | 'inline' | 'inline-migrated';
  readonly source: VolumeSource;
  /** The PV's `spec.accessModes`; empty for `inline` (and for PVs without modes). */
  readonly accessModes: readonly AccessMode[];
  /**
   * The PV also lists modes this controller does not know (left out of `accessModes`, e.g. a mode
   * newer than it). Upstream forbids multi-attach for any non-empty list without ReadWriteMany
   * or ReadOnlyMany, so a list of unknown modes alone forbids it too, where an empty one allows it.
   */
  readonly unknownAccessModes?: true;
  /** `persistentVolumeClaim.readOnly` of the pod (C4) or the inline source's readOnly. */
  readonly readOnly: boolean;
  /** True when the spec was translated from an in-tree source (C6). */
  readonly migrated: boolean;
  /**
   * The PV's zone label, needed to translate gcePersistentDisk PVs: the value of
   * `failure-domain.beta.kubernetes.io/zone`, else `topology.kubernetes.io/zone` (zones joined by `__`).
   * See {@link pvZoneLabel}.
   */
  readonly zoneLabel?: string;
  /** For `inline-migrated` only: the translated PV spec, sent as the VolumeAttachment's `spec.source.inlineVolumeSpec` (L2). */
  readonly inlineVolumeSpec?: Readonly<Record<string, unknown>>;
}

export const LABEL_ZONE_BETA = 'failure-domain.beta.kubernetes.io/zone';
export const LABEL_ZONE_GA = 'topology.kubernetes.io/zone';

/** The zone label value upstream's GCE PD translation reads from a PV's labels (beta label first). */
export function pvZoneLabel(labels: Readonly<Record<string, unknown>> | undefined): string | undefined {
  if (!labels) return undefined;
  const beta = labels[LABEL_ZONE_BETA];
  if (typeof beta === 'string' && beta) return beta;
  const ga = labels[LABEL_ZONE_GA];
  return typeof ga === 'string' && ga ? ga : undefined;
}

/**
 * The CSI persistent source of a PV-backed spec (`pv` or `inline-migrated` with a CSI source),
 * or undefined: inline CSI ephemeral volumes and in-tree sources have none.
 */
export function csiPersistentSource(spec: VolumeSpec): CsiSource | undefined {
  if (spec.origin === 'inline' || spec.source.type !== 'csi') return undefined;
  return spec.source;
}
