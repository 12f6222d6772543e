/**
 * Resolves one pod volume to the attachable volume it names (rules C4–C7): the spec, its
 * unique name and the plugin that attaches it, or the reason it is not (to be) attached.
 *
 * Unresolvable volumes are not errors: upstream skips them silently and retries only on another
 * trigger (a PVC event, C8; the full pod pass, C10). `quiet` says whether the reason is one of
 * those ordinary waits (unbound PVC, missing PV, not attachable) or worth a log line (a
 * malformed or untranslatable source). `code` names the reason for the skipped-volumes metric.
 */
import type { PodRecord, PodVolume, PvRecord, PvcRecord, InTreeSource as ProjectedInTree } from '../kube/projections/index.js';
import { translateInTreeSpecToCsi, type TranslationResult } from '../plugins/migration/csi-translator.js';
import { uniqueVolumeName, type AccessMode, type AttachableVolumePlugin, type CsiTranslator, type VolumePluginManager, type VolumeSource, type VolumeSpec } from '../plugins/index.js';

export interface ResolverLookups {
  pvc(namespace: string, name: string): PvcRecord | undefined;
  pv(name: string): PvRecord | undefined;
}

export interface ResolverDeps {
  lookups: ResolverLookups;
  plugins: VolumePluginManager;
  translator: CsiTranslator;
}

/** Why a volume is not (yet) in the desired state; the `reason` label of `fleet_attach_desired_volumes_skipped`. */
export const SKIP_REASONS = [
  'pvc_not_found',
  'pvc_not_owned',
  'pvc_not_bound',
  'pv_not_found',
  'pv_claim_mismatch',
  'not_attachable',
  'unsupported_source',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export type Skip = { ok: false; reason: string; quiet: boolean; code: SkipReason };
export type Resolution = { ok: true; uniqueName: string; spec: VolumeSpec; plugin: AttachableVolumePlugin } | Skip;

const ACCESS_MODES = new Set<AccessMode>(['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod']);
const skip = (code: SkipReason, reason: string, quiet = true): Skip => ({ ok: false, reason, quiet, code });

export function resolvePodVolume(pod: PodRecord, volume: PodVolume, deps: ResolverDeps): Resolution {
  const spec = specOf(pod, volume, deps.lookups);
  return 'name' in spec ? finish(spec, pod.nodeName, deps) : spec;
}

/** C4–C5: the spec before translation, or why there is none. */
function specOf(pod: PodRecord, volume: PodVolume, lookups: ResolverLookups): VolumeSpec | Skip {
  switch (volume.kind) {
    case 'pvc':
    case 'ephemeral': {
      const claimName = volume.claimName ?? '';
      const pvc = lookups.pvc(pod.namespace, claimName);
      if (!pvc) return skip('pvc_not_found', `PVC ${pod.namespace}/${claimName} not found`);
      if (volume.kind === 'ephemeral' && pvc.controllerUid !== pod.uid) {
        return skip('pvc_not_owned', `PVC ${pod.namespace}/${claimName} is not owned by the pod (C5)`);
      }
      if (pvc.phase !== 'Bound' || !pvc.volumeName) return skip('pvc_not_bound', `PVC ${pod.namespace}/${claimName} is not bound`);
      const pv = lookups.pv(pvc.volumeName);
      if (!pv) return skip('pv_not_found', `PV ${pvc.volumeName} not found`);
      if (!pv.claimRef || pv.claimRef.uid !== pvc.uid) return skip('pv_claim_mismatch', `PV ${pv.name} claimRef does not match PVC ${pod.namespace}/${claimName}`);
      return pvSpec(pv, volume.readOnly ?? false);
    }
    case 'intree': {
      const source = volume.intree ? inTreeSource(volume.intree) : undefined;
      if (!source) return skip('unsupported_source', `inline ${volume.sourceType} volume ${volume.name} is malformed or not translatable`, false);
      return { name: volume.name, origin: 'inline', source, accessModes: [], readOnly: volume.readOnly ?? false, migrated: false };
    }
    case 'csi-inline':
      return skip('not_attachable', 'CSI ephemeral inline volumes are never attachable (C7)');
    default:
      return skip('not_attachable', `${volume.sourceType} volumes are not attachable (C7)`);
  }
}

/** The spec of a PersistentVolume before translation (C4), or why there is none. */
export function pvSpec(pv: PvRecord, readOnly: boolean): VolumeSpec | Skip {
  const source = pvSource(pv);
  if (!source) return skip('unsupported_source', `PV ${pv.name} has a malformed ${pv.intree?.type ?? 'volume'} source`, false);
  const allKnown = pv.accessModes.every((m) => ACCESS_MODES.has(m as AccessMode));
  return {
    name: pv.name,
    origin: 'pv',
    source,
    // The PV's own (shared) list when every mode is known: no array per volume.
    accessModes: allKnown ? (pv.accessModes as readonly AccessMode[]) : pv.accessModes.filter((m): m is AccessMode => ACCESS_MODES.has(m as AccessMode)),
    ...(allKnown ? {} : { unknownAccessModes: true as const }),
    readOnly,
    migrated: false,
    ...(pv.zoneLabel !== undefined ? { zoneLabel: pv.zoneLabel } : {}),
  };
}

/** Whether a PV update can change how a claim resolves to it (C4–C7): the fields C4 and {@link pvSpec} read (keep in step). */
export function pvResolutionChanged(pv: PvRecord, old: PvRecord): boolean {
  const a = pv.claimRef, b = old.claimRef;
  if (a?.uid !== b?.uid || a?.namespace !== b?.namespace || a?.name !== b?.name || pv.otherSourceType !== old.otherSourceType || pv.zoneLabel !== old.zoneLabel) return true;
  if (pv.csi?.driver !== old.csi?.driver || pv.csi?.volumeHandle !== old.csi?.volumeHandle || pv.csi?.readOnly !== old.csi?.readOnly) return true;
  if (pv.accessModes.length !== old.accessModes.length || pv.accessModes.some((m, i) => m !== old.accessModes[i])) return true;
  return JSON.stringify(pv.intree) !== JSON.stringify(old.intree);
}

/** A3: a VolumeAttachment's PV on `nodeName`, translated and named like a pod volume would be. */
export function resolvePersistentVolume(pv: PvRecord, nodeName: string, deps: Omit<ResolverDeps, 'lookups'>): Resolution {
  const spec = pvSpec(pv, false);
  return 'name' in spec ? finish(spec, nodeName, deps) : spec;
}

/**
 * The unique name a PV's volume has wherever it is attached (the inspection API's lookup by PV):
 * its CSI name, translated from an in-tree source as on a node that migrated the plugin (on one
 * that did not, an in-tree volume is not attachable, C7). PV sources are immutable, so this is
 * the name its pods resolved it to.
 */
export function resolvePersistentVolumeOnAnyNode(pv: PvRecord, plugins: VolumePluginManager): Resolution {
  const spec = pvSpec(pv, false);
  return 'name' in spec ? named(translateInTreeSpecToCsi(spec), plugins) : spec;
}

function finish(spec: VolumeSpec, nodeName: string, deps: Omit<ResolverDeps, 'lookups'>): Resolution {
  return named(deps.translator.translateForNode(spec, nodeName), deps.plugins);
}

function named(translated: TranslationResult, plugins: VolumePluginManager): Resolution {
  if (translated.status === 'skipped') return skip('unsupported_source', translated.reason, false);
  const plugin = plugins.findAttachablePluginBySpec(translated.spec);
  if (!plugin) return skip('not_attachable', 'not attachable (C7)');
  // The plugin found is the one plugin supporting the spec: name the volume with it directly
  // (what `plugins.uniqueVolumeName` does after a second lookup).
  const volumeName = plugin.getVolumeName(translated.spec);
  if (volumeName === undefined) return skip('unsupported_source', 'volume cannot be named by its plugin', false);
  const uniqueName = uniqueVolumeName(plugin.name, volumeName);
  return { ok: true, uniqueName, spec: translated.spec, plugin };
}

function pvSource(pv: PvRecord): VolumeSource | undefined {
  if (pv.csi) return { type: 'csi', driver: pv.csi.driver, volumeHandle: pv.csi.volumeHandle, readOnly: pv.csi.readOnly };
  if (pv.intree) return inTreeSource(pv.intree);
  return { type: 'other', name: pv.otherSourceType ?? 'unknown' };
}

const REQUIRED: Record<string, readonly string[]> = {
  awsElasticBlockStore: ['volumeID'],
  gcePersistentDisk: ['pdName'],
  azureDisk: ['diskName', 'dataDiskURI'],
  cinder: ['volumeID'],
  vsphereVolume: ['volumePath'],
  iscsi: ['targetPortal', 'iqn'],
  fc: [], // named by WWNs and LUN or by WWIDs: its plugin decides (getVolumeName)
};

/** The projected scalar fields carry the API field names, so a typed source is a checked spread. */
function inTreeSource(src: ProjectedInTree): VolumeSource | undefined {
  const required = REQUIRED[src.type];
  if (!required) return { type: 'other', name: src.type };
  for (const field of required) if (typeof src.fields[field] !== 'string' || src.fields[field] === '') return undefined;
  return { ...src.fields, type: src.type } as unknown as VolumeSource;
}
