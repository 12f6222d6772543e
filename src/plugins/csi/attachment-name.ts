/**
 * VolumeAttachment naming (rule L1, upstream `getAttachmentName`): one VolumeAttachment per
 * (volume handle, driver, node), named deterministically so that a restarted controller finds the
 * object it created before (A3, Q5) instead of creating a duplicate.
 */
import { createHash } from 'node:crypto';

/** `"csi-" + lowercase hex(SHA-256(volumeHandle + driver + nodeName))`: plain concatenation, 68 characters. */
export function attachmentName(volumeHandle: string, driver: string, nodeName: string): string {
  return 'csi-' + createHash('sha256').update(volumeHandle + driver + nodeName, 'utf8').digest('hex');
}
