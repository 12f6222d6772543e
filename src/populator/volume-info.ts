/**
 * VolumeInfo: the cold, host-side facts the controller keeps per volume id in the world state
 * (`state.setVolumeInfo`): the spec resolved last (what detach and the attached-check use, as
 * upstream's actual state keeps one spec per volume; an attach uses its own (volume, node)
 * entry's spec, `state.desiredSpec`), and the last operation error for the inspection API.
 * Volumes loaded at start-up from node status or a VolumeAttachment have no spec until a pod
 * wants them (A4/A5).
 */
import { csiPersistentSource, type AccessMode, type VolumeSpec } from '../plugins/volume-spec.js';
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
  return deriveVolumeInfo(uniqueName, pluginName, spec, prior?.lastError, (label) => sharedString(flatCopy(label)));
}

/**
 * The VolumeInfo of a unique name, a plugin name, a spec (none: a volume known only from node
 * status or a VolumeAttachment) and a last error: every other field derives from the spec.
 * The world state keeps only those four (src/cache/volume-records.ts) and rebuilds the rest.
 */
export function deriveVolumeInfo(
  uniqueName: string, pluginName: string, spec: VolumeSpec | undefined, lastError: VolumeInfo['lastError'],
  label: (s: string) => string = (s) => s,
): VolumeInfo {
  const info: VolumeInfo = spec === undefined ? { uniqueName, pluginName } : { uniqueName, spec, pluginName, specName: spec.name };
  if (spec !== undefined) {
    const csi = csiPersistentSource(spec);
    if (spec.origin !== 'inline') info.pvName = spec.name;
    info.plugin = csi ? label(`${pluginName}:${csi.driver}`) : pluginName;
    // The spec's own source object (it has both fields): no second object.
    if (csi) info.csi = csi;
    info.accessModes = spec.accessModes;
    info.migrated = spec.migrated;
  }
  if (lastError) info.lastError = lastError;
  return info;
}

/**
 * Equal specs: same scalar fields, access modes and source fields. Object-valued fields (CSI
 * volumeAttributes, a migrated inline spec) are compared as JSON: the world state hands back
 * a decoded copy of the spec it keeps, never the object it was given.
 */
function sameSpec(a: VolumeSpec, b: VolumeSpec): boolean {
  if (a === b) return true;
  if (a.name !== b.name || a.origin !== b.origin || a.readOnly !== b.readOnly || a.migrated !== b.migrated) return false;
  if (a.accessModes.length !== b.accessModes.length || a.accessModes.some((m, i) => m !== b.accessModes[i])) return false;
  return sameFields(a.source, b.source) && sameFields(a, b, ['name', 'origin', 'readOnly', 'migrated', 'accessModes', 'source']);
}

function sameFields(a: object, b: object, skip: readonly string[] = []): boolean {
  // A field set to undefined is no field: the world state's copy (JSON) has none.
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let na = 0;
  let nb = 0;
  for (const k of Object.keys(ra)) {
    const x = ra[k];
    if (x === undefined) continue;
    na++;
    if (skip.includes(k)) continue;
    const y = rb[k];
    if (x !== y && (typeof x !== 'object' || typeof y !== 'object' || JSON.stringify(x) !== JSON.stringify(y))) return false;
  }
  for (const k of Object.keys(rb)) if (rb[k] !== undefined) nb++;
  return na === nb;
}
