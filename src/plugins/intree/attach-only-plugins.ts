/**
 * The in-tree iSCSI and Fibre Channel plugins, as the attach/detach controller has them
 * (upstream `ProbeAttachableVolumePlugins` registers fc, iscsi and csi). Both are attachable
 * and their attach and detach do nothing on the controller's side (the kubelet logs in to the
 * target or scans the HBA), but the controller still puts their volumes in the actual state and
 * in `node.status.volumesAttached`: the kubelet treats them as attachable and waits for them
 * there before mounting. Verification (M2) has nothing to ask, so they stay attached.
 */
import type { AttachableVolumePlugin, AttachResult } from '../volume-plugin.js';
import type { FcSource, IscsiSource, VolumeSpec } from '../volume-spec.js';

export const ISCSI_PLUGIN_NAME = 'kubernetes.io/iscsi';
export const FC_PLUGIN_NAME = 'kubernetes.io/fc';

/** Go's `%v` of a string slice: `[a b c]`. */
const goList = (xs: readonly string[]) => `[${xs.join(' ')}]`;

/** Upstream iscsi `GetVolumeName`: `<targetPortal>:<iqn>:<lun>`. */
export function iscsiVolumeName(src: IscsiSource): string {
  return `${src.targetPortal}:${src.iqn}:${src.lun ?? 0}`;
}

/** Upstream fc `GetVolumeName`: `[wwn …]:<lun>` with target WWNs and a LUN, else `[wwid …]`, else none. */
export function fcVolumeName(src: FcSource): string | undefined {
  if (src.targetWWNs?.length && src.lun !== undefined) return `${goList(src.targetWWNs)}:${src.lun}`;
  if (src.wwids?.length) return goList(src.wwids);
  return undefined;
}

const NO_DEVICE: AttachResult = Object.freeze({ devicePath: '' });

function attachOnly<T extends IscsiSource | FcSource>(name: string, type: T['type'], volumeName: (src: T) => string | undefined): AttachableVolumePlugin {
  const sourceOf = (spec: VolumeSpec) => (spec.source.type === type ? (spec.source as T) : undefined);
  return {
    name,
    canSupport: (spec) => sourceOf(spec) !== undefined,
    getVolumeName: (spec) => {
      const src = sourceOf(spec);
      return src ? volumeName(src) : undefined;
    },
    canAttach: () => true,
    attach: async () => NO_DEVICE,
    detach: async () => undefined,
    volumesAreAttached: (specs) => specs.map(() => true),
  };
}

/** Both plugins, to register beside the CSI plugin. */
export function createAttachOnlyPlugins(): AttachableVolumePlugin[] {
  return [attachOnly<IscsiSource>(ISCSI_PLUGIN_NAME, 'iscsi', iscsiVolumeName), attachOnly<FcSource>(FC_PLUGIN_NAME, 'fc', fcVolumeName)];
}
