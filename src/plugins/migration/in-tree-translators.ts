/**
 * In-tree → CSI source translation for the five block-storage plugins of rule C6, matching
 * upstream's csi-translation-lib (`plugins/*.go`): driver names, volume-handle formats, the PV
 * names made up for inline volumes, and the access modes the translation rewrites. Only the
 * fields the attach/detach controller uses are produced (no topology, no storage classes).
 * Translation is pure; failures are values carrying upstream's error text.
 */
import type { AccessMode, CsiSource, InTreeSource, VolumeSpec } from '../volume-spec.js';

export interface TranslatedSource {
  readonly source: CsiSource;
  readonly accessModes: readonly AccessMode[];
}

export interface TranslatedInline extends TranslatedSource {
  /** The PV name upstream gives the translated inline volume; it becomes the spec name. */
  readonly pvName: string;
}

export type Translation<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

export interface InTreeTranslator {
  /** Upstream in-tree plugin name, as listed in the CSINode migrated-plugins annotation. */
  readonly inTreePluginName: string;
  /** The CSI driver that supersedes it. */
  readonly driver: string;
  readonly sourceType: InTreeSource['type'];
  /** `TranslateInTreePVToCSI`. */
  translatePv(spec: VolumeSpec): Translation<TranslatedSource>;
  /** `TranslateInTreeInlineVolumeToCSI`. */
  translateInline(spec: VolumeSpec): Translation<TranslatedInline>;
}

export const AWS_EBS_DRIVER = 'ebs.csi.aws.com';
export const GCE_PD_DRIVER = 'pd.csi.storage.gke.io';
export const AZURE_DISK_DRIVER = 'disk.csi.azure.com';
export const CINDER_DRIVER = 'cinder.csi.openstack.org';
export const VSPHERE_DRIVER = 'csi.vsphere.vmware.com';

/** GCE PD handles leave the project (and, for inline volumes, the zone) for the driver to fill in. */
export const GCE_UNSPECIFIED = 'UNSPECIFIED';
/** Separator of multi-zone values in PV zone labels. */
const MULTI_ZONE_DELIMITER = '__';

const ok = <T>(value: T): Translation<T> => ({ ok: true, value });
const fail = <T>(error: string): Translation<T> => ({ ok: false, error });
const RWO: readonly AccessMode[] = ['ReadWriteOnce'];

/** Drops unset optional fields, as Go's `omitempty` does in the JSON the API receives. */
function csi(driver: string, volumeHandle: string, readOnly: boolean | undefined, fsType: string | undefined, attrs: Record<string, string>): CsiSource {
  return {
    type: 'csi',
    driver,
    volumeHandle,
    ...(readOnly ? { readOnly } : {}),
    ...(fsType ? { fsType } : {}),
    volumeAttributes: attrs,
  };
}

type SourceOf<K extends InTreeSource['type']> = Extract<InTreeSource, { type: K }>;

function hasSourceType<K extends InTreeSource['type']>(spec: VolumeSpec, type: K): spec is VolumeSpec & { source: SourceOf<K> } {
  return spec.source.type === type;
}

function translator<K extends InTreeSource['type']>(t: {
  inTreePluginName: string;
  driver: string;
  sourceType: K;
  pv: (spec: VolumeSpec, src: SourceOf<K>) => Translation<TranslatedSource>;
  inline: (spec: VolumeSpec, src: SourceOf<K>) => Translation<TranslatedInline>;
}): InTreeTranslator {
  return {
    inTreePluginName: t.inTreePluginName,
    driver: t.driver,
    sourceType: t.sourceType,
    translatePv: (spec) =>
      hasSourceType(spec, t.sourceType) ? t.pv(spec, spec.source) : fail(`pv is nil or ${t.sourceType} not defined on pv`),
    translateInline: (spec) =>
      hasSourceType(spec, t.sourceType) ? t.inline(spec, spec.source) : fail(`volume is nil or ${t.sourceType} not defined on volume`),
  };
}

/** `vol-…` stays; `aws://<zone>/vol-…` becomes `vol-…` (upstream `KubernetesVolumeIDToEBSVolumeID`). */
export function ebsVolumeId(kubernetesId: string): Translation<string> {
  if (!kubernetesId.startsWith('aws://')) return ok(kubernetesId);
  let path: string;
  try {
    path = new URL(kubernetesId).pathname;
  } catch (err) {
    return fail(`Invalid disk name (${kubernetesId}): ${err instanceof Error ? err.message : String(err)}`);
  }
  const awsId = path.replace(/^\/+|\/+$/g, '');
  if (!/^vol-[^/]*$/.test(awsId)) return fail(`Invalid format for AWS volume (${kubernetesId})`);
  return ok(awsId);
}

const awsEbs = translator({
  inTreePluginName: 'kubernetes.io/aws-ebs',
  driver: AWS_EBS_DRIVER,
  sourceType: 'awsElasticBlockStore',
  pv: (spec, src) => {
    const id = ebsVolumeId(src.volumeID);
    if (!id.ok) return fail(`failed to translate Kubernetes ID to EBS Volume ID ${id.error}`);
    const source = csi(AWS_EBS_DRIVER, id.value, src.readOnly, src.fsType, { partition: String(src.partition ?? 0) });
    return ok({ source, accessModes: spec.accessModes });
  },
  inline: (_spec, src) => {
    const id = ebsVolumeId(src.volumeID);
    if (!id.ok) return fail(`failed to translate Kubernetes ID to EBS Volume ID ${id.error}`);
    const source = csi(AWS_EBS_DRIVER, id.value, src.readOnly, src.fsType, { partition: String(src.partition ?? 0) });
    return ok({ source, accessModes: RWO, pvName: `${AWS_EBS_DRIVER}-${id.value}` });
  },
});

/** The region of GCE zones `<locale>-<region>-<zone>`; all zones must share one region. */
function gceRegionFromZones(zones: readonly string[]): Translation<string> {
  if (zones.length < 1) return fail('no zones specified');
  const regions = new Set<string>();
  for (const zone of zones) {
    const parts = zone.split('-');
    if (parts.length !== 3) return fail(`zone in unexpected format, expected: {locale}-{region}-{zone}, got: ${zone}`);
    regions.add(`${parts[0]}-${parts[1]}`);
  }
  if (regions.size !== 1) return fail(`multiple or no regions gotten from zones, got: ${[...regions].join(',')}`);
  return ok([...regions][0]!);
}

/** Upstream `backwardCompatibleAccessModes`: RWX counts as RWO; ROX+RWO becomes RWO; anything else RWO. */
export function gceBackwardCompatibleAccessModes(modes: readonly AccessMode[]): readonly AccessMode[] {
  if (modes.length === 0) return modes;
  const s = new Set<AccessMode>(modes.map((m) => (m === 'ReadWriteMany' ? 'ReadWriteOnce' : m)));
  if (s.has('ReadWriteOnce')) return RWO;
  if (s.has('ReadOnlyMany')) return ['ReadOnlyMany'];
  return RWO;
}

const gcePd = translator({
  inTreePluginName: 'kubernetes.io/gce-pd',
  driver: GCE_PD_DRIVER,
  sourceType: 'gcePersistentDisk',
  pv: (spec, src) => {
    const zones = (spec.zoneLabel ?? '').split(MULTI_ZONE_DELIMITER);
    let handle: string;
    if (zones.length === 1 && zones[0] !== '') {
      handle = `projects/${GCE_UNSPECIFIED}/zones/${zones[0]}/disks/${src.pdName}`;
    } else if (zones.length > 1) {
      const region = gceRegionFromZones(zones);
      if (!region.ok) return fail(`failed to get region from zones: ${region.error}`);
      handle = `projects/${GCE_UNSPECIFIED}/regions/${region.value}/disks/${src.pdName}`;
    } else {
      handle = `projects/${GCE_UNSPECIFIED}/zones/${GCE_UNSPECIFIED}/disks/${src.pdName}`;
    }
    const partition = src.partition ? String(src.partition) : '';
    const source = csi(GCE_PD_DRIVER, handle, src.readOnly, src.fsType, { partition });
    return ok({ source, accessModes: gceBackwardCompatibleAccessModes(spec.accessModes) });
  },
  inline: (_spec, src) => {
    const handle = `projects/${GCE_UNSPECIFIED}/zones/${GCE_UNSPECIFIED}/disks/${src.pdName}`;
    const partition = src.partition ? String(src.partition) : '';
    const source = csi(GCE_PD_DRIVER, handle, src.readOnly, src.fsType, { partition });
    const accessModes: readonly AccessMode[] = src.readOnly ? ['ReadOnlyMany'] : RWO;
    return ok({ source, accessModes, pvName: `${GCE_PD_DRIVER}-${src.pdName}` });
  },
});

type AzureSrc = SourceOf<'azureDisk'>;

function azureSource(src: AzureSrc): Translation<CsiSource> {
  if (src.kind !== undefined && src.kind.toLowerCase() !== 'managed') return fail(`kind(${src.kind}) is not supported in csi migration`);
  const attrs: Record<string, string> = { kind: 'Managed' };
  if (src.cachingMode) attrs.cachingmode = src.cachingMode;
  if (src.fsType !== undefined) attrs.fstype = src.fsType;
  return ok(csi(AZURE_DISK_DRIVER, src.dataDiskURI, src.readOnly, src.fsType, attrs));
}

const azureDisk = translator({
  inTreePluginName: 'kubernetes.io/azure-disk',
  driver: AZURE_DISK_DRIVER,
  sourceType: 'azureDisk',
  pv: (spec, src) => {
    const s = azureSource(src);
    return s.ok ? ok({ source: s.value, accessModes: spec.accessModes }) : s;
  },
  inline: (_spec, src) => {
    const s = azureSource(src);
    return s.ok ? ok({ source: s.value, accessModes: RWO, pvName: src.dataDiskURI }) : s;
  },
});

const cinder = translator({
  inTreePluginName: 'kubernetes.io/cinder',
  driver: CINDER_DRIVER,
  sourceType: 'cinder',
  pv: (spec, src) =>
    ok({ source: csi(CINDER_DRIVER, src.volumeID, src.readOnly, src.fsType, {}), accessModes: spec.accessModes }),
  inline: (_spec, src) =>
    ok({ source: csi(CINDER_DRIVER, src.volumeID, src.readOnly, src.fsType, {}), accessModes: RWO, pvName: `${CINDER_DRIVER}-${src.volumeID}` }),
});

type VsphereSrc = SourceOf<'vsphereVolume'>;
const vsphereAttrs = (src: VsphereSrc): Record<string, string> => (src.storagePolicyName ? { storagepolicyname: src.storagePolicyName } : {});

const vsphere = translator({
  inTreePluginName: 'kubernetes.io/vsphere-volume',
  driver: VSPHERE_DRIVER,
  sourceType: 'vsphereVolume',
  pv: (spec, src) =>
    ok({ source: csi(VSPHERE_DRIVER, src.volumePath, undefined, src.fsType, vsphereAttrs(src)), accessModes: spec.accessModes }),
  inline: (_spec, src) =>
    ok({
      source: csi(VSPHERE_DRIVER, src.volumePath, undefined, src.fsType, vsphereAttrs(src)),
      accessModes: RWO,
      pvName: `${VSPHERE_DRIVER}-${src.volumePath}`,
    }),
});

/** Every supported translator, keyed by the in-tree source type. */
export const IN_TREE_TRANSLATORS: ReadonlyMap<InTreeSource['type'], InTreeTranslator> = new Map(
  [awsEbs, gcePd, azureDisk, cinder, vsphere].map((t) => [t.sourceType, t]),
);

/** In-tree plugin names whose migration upstream considers complete in current releases (all five). */
export const MIGRATION_COMPLETE_PLUGINS: readonly string[] = [...IN_TREE_TRANSLATORS.values()].map((t) => t.inTreePluginName);
