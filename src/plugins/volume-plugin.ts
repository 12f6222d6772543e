/**
 * Volume plugins as the attach/detach controller sees them: something that recognises a spec,
 * names the volume, and (if attachable) attaches it to and detaches it from a node. This is the
 * controller-side subset of upstream's `VolumePlugin` / `AttachableVolumePlugin`; mounting is the
 * kubelet's business and absent here.
 */
import type { VolumeSpec } from './volume-spec.js';

export interface VolumePlugin {
  /** Registered name, e.g. `kubernetes.io/csi`; the first part of every unique name it produces. */
  readonly name: string;
  /** True when this plugin handles the spec's source (attachable or not). */
  canSupport(spec: VolumeSpec): boolean;
  /** The plugin volume name (`<driver>^<handle>` for CSI), or undefined when the spec cannot be named. */
  getVolumeName(spec: VolumeSpec): string | undefined;
}

/** The result of a successful attach. */
export interface AttachResult {
  /** Reported in `node.status.volumesAttached[].devicePath`; always `""` for CSI (L3). */
  readonly devicePath: string;
}

export interface AttachableVolumePlugin extends VolumePlugin {
  /** C7: whether a supported spec needs attaching at all (CSI: CSIDriver attachRequired). */
  canAttach(spec: VolumeSpec): boolean;
  /**
   * Attaches the volume to the node and resolves once the attachment is confirmed.
   * Rejects with an error whose message is the upstream failure text (it lands verbatim in the
   * FailedAttachVolume event, J2). Never blocks the event loop while waiting.
   */
  attach(spec: VolumeSpec, nodeName: string): Promise<AttachResult>;
  /**
   * Detaches by plugin volume name (as returned by {@link VolumePlugin.getVolumeName}, or split
   * from a unique name during start-up recovery, A5) and resolves once the detach is confirmed.
   */
  detach(volumeName: string, nodeName: string): Promise<void>;
  /**
   * M2 / L6: for each spec (same order), whether it is still attached to the node. Answered
   * from caches, never one API request per volume (upstream issue 84169).
   */
  volumesAreAttached(specs: readonly VolumeSpec[], nodeName: string): boolean[];
  /**
   * L6's second look, for specs {@link volumesAreAttached} answered "not attached": whether each
   * is attached after all, asked of the API server where the cache had no object to answer from.
   * Optional: a plugin whose caches are the whole truth leaves it out.
   */
  recheckAttached?(specs: readonly VolumeSpec[], nodeName: string): Promise<boolean[]>;
}

/** Narrows a plugin to an attachable one. */
export function isAttachablePlugin(plugin: VolumePlugin): plugin is AttachableVolumePlugin {
  const p = plugin as Partial<AttachableVolumePlugin>;
  return typeof p.canAttach === 'function' && typeof p.attach === 'function' && typeof p.detach === 'function';
}
