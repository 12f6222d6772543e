/**
 * The pod projection in a packed record (record-codec.ts). Shared ids: namespace, node name,
 * phase, and each volume's name, source type and CSI driver; bytes: uid, deletion timestamp,
 * claim names and in-tree fields; the name by reference to the key.
 */
import { decodeInTree, encodeInTree } from './in-tree-codec.js';
import type { PodRecord, PodVolume, PodVolumeKind } from './pod.js';
import type { ProjectionCodec, RecordReader, RecordWriter } from './record-codec.js';

const KINDS: readonly PodVolumeKind[] = ['pvc', 'ephemeral', 'csi-inline', 'intree', 'other'];

const ALL_NOT_RUNNING = 1;
const DELETING = 2;

// Per volume: the kind in the low 3 bits, then which optional fields follow.
const V_CLAIM = 8;
const V_READ_ONLY_SET = 16;
const V_READ_ONLY = 32;
const V_INTREE = 64;
const V_DRIVER = 128;

function encodeVolume(v: PodVolume, w: RecordWriter): void {
  let flags = KINDS.indexOf(v.kind);
  if (flags < 0) throw new Error(`pod codec: unknown volume kind ${v.kind}`);
  if (v.claimName !== undefined) flags |= V_CLAIM;
  if (v.readOnly !== undefined) flags |= V_READ_ONLY_SET | (v.readOnly ? V_READ_ONLY : 0);
  if (v.intree !== undefined) flags |= V_INTREE;
  if (v.driver !== undefined) flags |= V_DRIVER;
  w.uint(flags);
  w.shared(v.name);
  if (v.claimName !== undefined) w.str(v.claimName);
  if (v.driver !== undefined) w.shared(v.driver);
  if (v.intree !== undefined) encodeInTree(v.intree, w);
  w.shared(v.sourceType);
}

function decodeVolume(r: RecordReader): PodVolume {
  const flags = r.uint();
  const v: PodVolume = { name: r.shared(), kind: KINDS[flags & 7]!, sourceType: '' };
  if (flags & V_CLAIM) v.claimName = r.str();
  if (flags & V_READ_ONLY_SET) v.readOnly = (flags & V_READ_ONLY) !== 0;
  if (flags & V_DRIVER) v.driver = r.shared();
  if (flags & V_INTREE) v.intree = decodeInTree(r);
  v.sourceType = r.shared();
  return v;
}

export const POD_CODEC: ProjectionCodec<PodRecord> = {
  encode(p, w) {
    w.uint((p.allContainersNotRunning ? ALL_NOT_RUNNING : 0) | (p.deletionTimestamp !== undefined ? DELETING : 0));
    w.uid(p.uid);
    w.shared(p.namespace);
    w.name(p.name);
    w.shared(p.nodeName);
    w.shared(p.phase);
    if (p.deletionTimestamp !== undefined) w.str(p.deletionTimestamp);
    w.uint(p.volumes.length);
    for (const v of p.volumes) encodeVolume(v, w);
  },
  decode(r) {
    const flags = r.uint();
    const pod: PodRecord = {
      uid: r.uid(),
      namespace: r.shared(),
      name: r.name(),
      nodeName: r.shared(),
      phase: r.shared(),
      allContainersNotRunning: (flags & ALL_NOT_RUNNING) !== 0,
      volumes: [],
    };
    if (flags & DELETING) pod.deletionTimestamp = r.str();
    const n = r.uint();
    const volumes = new Array<PodVolume>(n);
    for (let i = 0; i < n; i++) volumes[i] = decodeVolume(r);
    pod.volumes = volumes;
    return pod;
  },
};
