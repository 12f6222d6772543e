/**
 * Multi-attach policy (rule H1, upstream `IsMultiAttachAllowed`): whether a volume may be
 * attached to several nodes at once. Forbidden volumes get one volume-wide operation lane (H2, I1)
 * and the Multi-Attach event (H3). Evaluate it on the spec after CSI translation (C6), as upstream
 * does: translation rewrites access modes (a translated inline disk is ReadWriteOnce).
 */
import type { VolumeSpec } from './volume-spec.js';

/**
 * False iff the spec is an inline azureDisk or cinder volume, or a PV-backed spec whose access
 * modes are non-empty and contain neither ReadWriteMany nor ReadOnlyMany. Undefined spec, a PV
 * without access modes and every other inline volume are allowed (the plugin must fail if it can't).
 */
export function isMultiAttachAllowed(spec: VolumeSpec | undefined): boolean {
  if (spec === undefined) return true;
  if (spec.origin === 'inline') {
    return spec.source.type !== 'azureDisk' && spec.source.type !== 'cinder';
  }
  if (spec.accessModes.length === 0) return spec.unknownAccessModes !== true;
  return spec.accessModes.some((m) => m === 'ReadWriteMany' || m === 'ReadOnlyMany');
}
