/**
 * Unique volume names (vocabulary §1): `"<plugin name>/<plugin volume name>"`, for CSI
 * `kubernetes.io/csi/<driver>^<volumeHandle>`. The unique name is the identity of a volume in
 * desired and actual state, in `node.status.volumesAttached` and in the plan kernel.
 *
 * The reverse split exists for start-up recovery (A5): an attachment read from node status has
 * no spec, so detach must recover the plugin, driver and handle from the name alone, as upstream's
 * `SplitUniqueName` and the CSI detacher do.
 */

export const CSI_PLUGIN_NAME = 'kubernetes.io/csi';
/** Separator between driver and handle in a CSI plugin volume name (upstream `volNameSep`). */
export const CSI_VOLUME_NAME_SEPARATOR = '^';

/** `"<pluginName>/<volumeName>"` (upstream `GetUniqueVolumeName`). */
export function uniqueVolumeName(pluginName: string, volumeName: string): string {
  return `${pluginName}/${volumeName}`;
}

/** The CSI plugin volume name `<driver>^<volumeHandle>` (upstream csiPlugin `GetVolumeName`). */
export function csiVolumeName(driver: string, volumeHandle: string): string {
  return `${driver}${CSI_VOLUME_NAME_SEPARATOR}${volumeHandle}`;
}

/** `kubernetes.io/csi/<driver>^<volumeHandle>`. */
export function csiUniqueVolumeName(driver: string, volumeHandle: string): string {
  return uniqueVolumeName(CSI_PLUGIN_NAME, csiVolumeName(driver, volumeHandle));
}

/**
 * Splits a unique name into plugin name (its first two `/` components) and plugin volume name
 * (the rest, which may itself contain `/`), as upstream `SplitUniqueName`. Undefined when the
 * name has fewer than three components.
 */
export function splitUniqueVolumeName(unique: string): { pluginName: string; volumeName: string } | undefined {
  const first = unique.indexOf('/');
  if (first < 0) return undefined;
  const second = unique.indexOf('/', first + 1);
  if (second < 0) return undefined;
  return { pluginName: unique.slice(0, second), volumeName: unique.slice(second + 1) };
}

/**
 * Splits a CSI plugin volume name `<driver>^<handle>`. Like upstream's CSI detacher it requires
 * exactly one separator: a handle containing `^` cannot be recovered (undefined).
 */
export function splitCsiVolumeName(volumeName: string): { driver: string; volumeHandle: string } | undefined {
  const parts = volumeName.split(CSI_VOLUME_NAME_SEPARATOR);
  if (parts.length !== 2) return undefined;
  const [driver, volumeHandle] = parts as [string, string];
  if (driver === '' || volumeHandle === '') return undefined;
  return { driver, volumeHandle };
}

/** A5: unique name → CSI driver and handle; undefined for non-CSI or malformed names. */
export function splitCsiUniqueVolumeName(unique: string): { driver: string; volumeHandle: string } | undefined {
  const split = splitUniqueVolumeName(unique);
  if (!split || split.pluginName !== CSI_PLUGIN_NAME) return undefined;
  return splitCsiVolumeName(split.volumeName);
}
