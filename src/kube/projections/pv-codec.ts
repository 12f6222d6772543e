/**
 * The PV projection in a packed record (record-codec.ts). Shared ids: phase, access modes, the
 * claim's namespace, the CSI driver, the zone label and the other source type; bytes: the
 * claim's name and uid, the volume handle and in-tree fields; the name by reference to the key.
 * Access modes decode to the pooled frozen list (string-pool.ts), as the projection holds them.
 */
import { decodeInTree, encodeInTree } from './in-tree-codec.js';
import type { PvRecord } from './pv.js';
import type { ProjectionCodec } from './record-codec.js';
import { sharedList } from './string-pool.js';

const CLAIM = 1;
const CSI = 2;
const CSI_READ_ONLY = 4;
const INTREE = 8;
const ZONE = 16;
const OTHER = 32;

export const PV_CODEC: ProjectionCodec<PvRecord> = {
  encode(pv, w) {
    w.uint(
      (pv.claimRef ? CLAIM : 0) | (pv.csi ? CSI : 0) | (pv.csi?.readOnly ? CSI_READ_ONLY : 0) | (pv.intree ? INTREE : 0)
        | (pv.zoneLabel !== undefined ? ZONE : 0) | (pv.otherSourceType !== undefined ? OTHER : 0),
    );
    w.name(pv.name);
    w.shared(pv.phase);
    w.uint(pv.accessModes.length);
    for (const m of pv.accessModes) w.shared(m);
    if (pv.claimRef) {
      w.shared(pv.claimRef.namespace);
      w.str(pv.claimRef.name);
      w.uid(pv.claimRef.uid);
    }
    if (pv.csi) {
      w.shared(pv.csi.driver);
      w.str(pv.csi.volumeHandle);
    }
    if (pv.intree) encodeInTree(pv.intree, w);
    if (pv.zoneLabel !== undefined) w.shared(pv.zoneLabel);
    if (pv.otherSourceType !== undefined) w.shared(pv.otherSourceType);
  },
  decode(r) {
    const flags = r.uint();
    const name = r.name();
    const phase = r.shared();
    const n = r.uint();
    const modes = new Array<string>(n);
    for (let i = 0; i < n; i++) modes[i] = r.shared();
    const pv: PvRecord = { name, phase, accessModes: sharedList(modes) };
    if (flags & CLAIM) pv.claimRef = { namespace: r.shared(), name: r.str(), uid: r.uid() };
    if (flags & CSI) pv.csi = { driver: r.shared(), volumeHandle: r.str(), readOnly: (flags & CSI_READ_ONLY) !== 0 };
    if (flags & INTREE) pv.intree = decodeInTree(r);
    if (flags & ZONE) pv.zoneLabel = r.shared();
    if (flags & OTHER) pv.otherSourceType = r.shared();
    return pv;
  },
};
