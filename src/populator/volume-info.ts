/**
 * VolumeInfo: the cold, host-side facts the controller keeps per volume id in the world state
 * (`state.setVolumeInfo`): the resolved spec the operations need, and the last operation
 * error for the inspection API. Volumes loaded at start-up from node status or a
 * VolumeAttachment have no spec until a pod wants them (A4/A5).
 */
import { csiPersistentSource, type AccessMode, type VolumeSpec } from '../plugins/index.js';
import type { WorldState, VolumeId } from '../cache/world-state.js';

export interface VolumeInfo {
  uniqueName: string;
  /** The fields below are the inspection API's VolumeInfo (src/http/inspection-view.ts). */
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

/** The VolumeInfo of a resolved spec; keeps the previous lastError. */
export function volumeInfoFor(uniqueName: string, spec: VolumeSpec, pluginName: string, prior?: VolumeInfo): VolumeInfo {
  const csi = csiPersistentSource(spec);
  return {
    uniqueName,
    spec,
    pluginName,
    specName: spec.name,
    ...(spec.origin !== 'inline' ? { pvName: spec.name } : {}),
    plugin: csi ? `${pluginName}:${csi.driver}` : pluginName,
    ...(csi ? { csi: { driver: csi.driver, volumeHandle: csi.volumeHandle } } : {}),
    accessModes: spec.accessModes,
    migrated: spec.migrated,
    ...(prior?.lastError ? { lastError: prior.lastError } : {}),
  };
}
