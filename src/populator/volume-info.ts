/**
 * VolumeInfo: the cold, host-side facts the controller keeps per volume id in the world state
 * (`state.setVolumeInfo`): the spec resolved last (what detach and the attached-check use, as
 * upstream's actual state keeps one spec per volume; an attach uses its own (volume, node)
 * entry's spec, `state.desiredSpec`), and the last operation error for the inspection API.
 * Volumes loaded at start-up from node status or a VolumeAttachment have no spec until a pod
 * wants them (A4/A5).
 */
import { csiPersistentSource, type AccessMode, type VolumeSpec } from '../plugins/index.js';
import type { WorldState, VolumeId } from '../cache/world-state.js';
import { flatCopy } from '../cache/flat-copy.js';
import { sharedString } from '../kube/projections/string-pool.js';

export interface VolumeInfo {
  uniqueName: string;
  /** The fields below are the inspection API's VolumeInfo (src/http/inspection-view.ts). */
  /** The spec name resolved last, from any pod: volume-wide. Events quote the name of their own
   * (volume, node) entry instead (`state.specName`), which differs when PVs share one volume. */
  specName?: string;
  pvName?: string;
  /** Metrics plugin label (J4), e.g. `kubernetes.io/csi:<driver>`. */
  plugin?: string;
  csi?: { driver: string; volumeHandle: string };
  accessModes?: readonly AccessMode[];
  migrated?: boolean;
  /** Undefined for volumes known only from node status or a VolumeAttachment (A5). */
  spec?: VolumeSpec;
  /** The attachable plugin's name, e.g. `kubernetes.io/csi`. */
  pluginName: string;
  /** The last failed operation on the volume, for `waitingFor` and the inspection API. */
  lastError?: { op: 'attach' | 'detach'; node: string; message: string; at: number };
}

/** The VolumeInfo of a volume id, or undefined when none was recorded. */
export function volumeInfoOf(state: WorldState, volume: VolumeId): VolumeInfo | undefined {
  const info = state.volumeInfo(volume);
  return info && typeof info === 'object' && 'uniqueName' in info ? (info as VolumeInfo) : undefined;
}

/**
 * The VolumeInfo of a resolved spec; keeps the previous lastError. Returns `prior` itself when
 * it already describes an equal spec (every re-processing of a pod), so callers can skip the store.
 */
export function volumeInfoFor(uniqueName: string, spec: VolumeSpec, pluginName: string, prior?: VolumeInfo): VolumeInfo {
  if (prior?.spec && prior.uniqueName === uniqueName && prior.pluginName === pluginName && sameSpec(prior.spec, spec)) return prior;
  const csi = csiPersistentSource(spec);
  const info: VolumeInfo = { uniqueName, spec, pluginName, specName: spec.name };
  if (spec.origin !== 'inline') info.pvName = spec.name;
  // Pooled: one copy of each plugin label, not one rope per volume.
  info.plugin = csi ? sharedString(flatCopy(`${pluginName}:${csi.driver}`)) : pluginName;
  // The spec's own source object (it has both fields): no second object per volume.
  if (csi) info.csi = csi;
  info.accessModes = spec.accessModes;
  info.migrated = spec.migrated;
  if (prior?.lastError) info.lastError = prior.lastError;
  return info;
}

/**
 * Equal specs: same scalar fields, access modes and source fields. Object-valued fields (CSI
 * volumeAttributes, a migrated inline spec) must be the same object: otherwise "different",
 * which only costs a rebuilt VolumeInfo.
 */
function sameSpec(a: VolumeSpec, b: VolumeSpec): boolean {
  if (a === b) return true;
  if (a.name !== b.name || a.origin !== b.origin || a.readOnly !== b.readOnly || a.migrated !== b.migrated) return false;
  if (a.accessModes.length !== b.accessModes.length || a.accessModes.some((m, i) => m !== b.accessModes[i])) return false;
  return sameFields(a.source, b.source) && sameFields(a, b, ['name', 'origin', 'readOnly', 'migrated', 'accessModes', 'source']);
}

function sameFields(a: object, b: object, skip: readonly string[] = []): boolean {
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (skip.includes(k)) continue;
    if (!Object.hasOwn(b, k) || (a as Record<string, unknown>)[k] !== (b as Record<string, unknown>)[k]) return false;
  }
  return true;
}
