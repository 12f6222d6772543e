/**
 * The VolumeAttachment projection in a packed record (record-codec.ts): attacher and node name
 * as shared ids; the uid as 16 bytes; PV name, error messages and deletion timestamp as bytes;
 * the name by reference to the key.
 */
import type { ProjectionCodec } from './record-codec.js';
import type { VolumeAttachmentRecord } from './volume-attachment.js';

const PV = 1;
const INLINE = 2;
const ATTACHED = 4;
const ATTACH_ERROR = 8;
const DETACH_ERROR = 16;
const DELETION = 32;
const DELETING = 64;
const UID = 128;

export const VOLUME_ATTACHMENT_CODEC: ProjectionCodec<VolumeAttachmentRecord> = {
  encode(va, w) {
    w.uint(
      (va.pvName !== undefined ? PV : 0) | (va.inline ? INLINE : 0) | (va.attached ? ATTACHED : 0) | (va.attachError !== undefined ? ATTACH_ERROR : 0)
        | (va.detachError !== undefined ? DETACH_ERROR : 0) | (va.deletionTimestamp !== undefined ? DELETION : 0) | (va.deleting ? DELETING : 0) | (va.uid !== undefined ? UID : 0),
    );
    w.name(va.name);
    if (va.uid !== undefined) w.uid(va.uid);
    w.shared(va.attacher);
    w.shared(va.nodeName);
    if (va.pvName !== undefined) w.str(va.pvName);
    if (va.attachError !== undefined) w.str(va.attachError);
    if (va.detachError !== undefined) w.str(va.detachError);
    if (va.deletionTimestamp !== undefined) w.str(va.deletionTimestamp);
  },
  decode(r) {
    const flags = r.uint();
    const name = r.name();
    const uid = flags & UID ? r.uid() : undefined;
    const va: VolumeAttachmentRecord = { name, ...(uid !== undefined ? { uid } : {}), attacher: r.shared(), nodeName: r.shared(), inline: (flags & INLINE) !== 0, attached: (flags & ATTACHED) !== 0, deleting: (flags & DELETING) !== 0 };
    if (flags & PV) va.pvName = r.str();
    if (flags & ATTACH_ERROR) va.attachError = r.str();
    if (flags & DETACH_ERROR) va.detachError = r.str();
    if (flags & DELETION) va.deletionTimestamp = r.str();
    return va;
  },
};
