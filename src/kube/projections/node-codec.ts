/**
 * The Node projection in a packed record (record-codec.ts): the name as the key's, the flags in
 * one byte, the uid as bytes, the volume lists' unique names as a shared driver prefix and the handle's
 * bytes, device paths and unreadable parts as bytes.
 */
import type { NodeRecord } from './node.js';
import type { ProjectionCodec } from './record-codec.js';

const MANAGED = 1;
const READY = 2;
const OUT_OF_SERVICE = 4;
const IN_USE = 8;
const DEVICE_PATHS = 16;
const UNREADABLE = 32;

export const NODE_CODEC: ProjectionCodec<NodeRecord> = {
  encode(n, w) {
    w.uint(
      (n.managed ? MANAGED : 0) | (n.ready ? READY : 0) | (n.outOfService ? OUT_OF_SERVICE : 0) | (n.volumesInUse !== null ? IN_USE : 0)
        | (n.devicePaths !== undefined ? DEVICE_PATHS : 0) | (n.unreadable !== undefined ? UNREADABLE : 0),
    );
    w.name(n.name);
    w.uid(n.uid);
    if (n.volumesInUse !== null) w.volumeNameList(n.volumesInUse);
    w.volumeNameList(n.volumesAttached);
    if (n.devicePaths !== undefined) w.strList(n.devicePaths);
    if (n.unreadable !== undefined) w.strList(n.unreadable);
  },
  decode(r) {
    const flags = r.uint();
    const name = r.name();
    const uid = r.uid();
    const volumesInUse = flags & IN_USE ? r.volumeNameList() : null;
    const n: NodeRecord = { name, uid, managed: (flags & MANAGED) !== 0, ready: (flags & READY) !== 0, outOfService: (flags & OUT_OF_SERVICE) !== 0, volumesInUse, volumesAttached: r.volumeNameList() };
    if (flags & DEVICE_PATHS) n.devicePaths = r.strList();
    if (flags & UNREADABLE) n.unreadable = r.strList();
    return n;
  },
};
