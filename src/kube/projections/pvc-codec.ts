/** The PVC projection in a packed record (record-codec.ts): namespace and phase as shared ids. */
import type { PvcRecord } from './pvc.js';
import type { ProjectionCodec } from './record-codec.js';

const CONTROLLER = 1;

export const PVC_CODEC: ProjectionCodec<PvcRecord> = {
  encode(c, w) {
    w.uint(c.controllerUid !== undefined ? CONTROLLER : 0);
    w.uid(c.uid);
    w.shared(c.namespace);
    w.name(c.name);
    w.shared(c.phase);
    w.str(c.volumeName);
    if (c.controllerUid !== undefined) w.uid(c.controllerUid);
  },
  decode(r) {
    const flags = r.uint();
    const c: PvcRecord = { uid: r.uid(), namespace: r.shared(), name: r.name(), phase: r.shared(), volumeName: r.str() };
    if (flags & CONTROLLER) c.controllerUid = r.uid();
    return c;
  },
};
