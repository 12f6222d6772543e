/**
 * fast-check arbitraries of the projections a packed store holds (pods, PVCs, PVs,
 * VolumeAttachments, nodes), with the odd inputs a codec must carry: non-ASCII and empty
 * strings, every optional field absent or present, long strings and lists.
 */
import fc from 'fast-check';
import type { InTreeSource, NodeRecord, PodRecord, PodVolume, PvcRecord, PvRecord, VolumeAttachmentRecord } from '../../src/kube/projections/index.js';

/** Short text with one-, two-, three- and four-byte UTF-8 characters, often empty. */
export const text = fc.oneof(
  fc.constantFrom('', 'a', 'default', 'kube-system', 'Bound'),
  fc.string({ unit: fc.constantFrom('a', 'z', '-', '/', '^', 'é', '€', '😀', '0'), maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
);
/** Text as long as a few hundred bytes (a length that takes two LEB128 bytes). */
const longText = fc.string({ unit: fc.constantFrom('x', 'é', '😀'), minLength: 40, maxLength: 400 });
const anyText = fc.oneof({ weight: 4, arbitrary: text }, { weight: 1, arbitrary: longText });
/** A UID: mostly a UUID as the API server writes it, sometimes in capitals, or any text. */
const uidText = fc.oneof({ weight: 3, arbitrary: fc.uuid() }, { weight: 1, arbitrary: fc.uuid().map((u) => u.toUpperCase()) }, { weight: 1, arbitrary: anyText });
/** A unique volume name: mostly CSI's `kubernetes.io/csi/<driver>^<handle>` (any handle, `^` included), or any text. */
const volumeName = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('ebs.csi.aws.com', 'd', ''), anyText).map(([d, h]) => `kubernetes.io/csi/${d}^${h}`) },
  { weight: 1, arbitrary: fc.constantFrom('kubernetes.io/csi/', 'kubernetes.io/csi/no-caret', 'kubernetes.io/aws-ebs/vol-1') },
  { weight: 1, arbitrary: anyText },
);
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

/**
 * `o` as a projection is: plain objects throughout (fast-check's records have no prototype), and
 * no member whose value is undefined.
 */
function defined<T extends object>(o: T): T {
  return plain(o) as T;
}

function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = plain(x);
  return out;
}

export const inTree: fc.Arbitrary<InTreeSource> = fc.record({
  type: fc.constantFrom('awsElasticBlockStore', 'gcePersistentDisk', 'azureDisk', 'cinder', 'iscsi', 'fc') as fc.Arbitrary<InTreeSource['type']>,
  fields: fc.dictionary(
    fc.constantFrom('volumeID', 'pdName', 'fsType', 'readOnly', 'partition', 'lun', 'targetWWNs', 'wwids', 'diskURI', 'é'),
    fc.oneof(text, fc.boolean(), fc.integer(), fc.double({ noNaN: true }), fc.array(text, { maxLength: 4 })),
    { maxKeys: 6 },
  ),
});

const podVolume: fc.Arbitrary<PodVolume> = fc
  .record({
    name: text,
    kind: fc.constantFrom('pvc', 'ephemeral', 'csi-inline', 'intree', 'other') as fc.Arbitrary<PodVolume['kind']>,
    claimName: opt(anyText),
    readOnly: opt(fc.boolean()),
    intree: opt(inTree),
    driver: opt(text),
    sourceType: text,
  })
  .map(defined);

export const pod: fc.Arbitrary<PodRecord> = fc
  .record({
    uid: uidText,
    namespace: text,
    name: anyText,
    nodeName: text,
    phase: text,
    deletionTimestamp: opt(text),
    allContainersNotRunning: fc.boolean(),
    volumes: fc.array(podVolume, { maxLength: 5 }),
  })
  .map(defined);

export const pvc: fc.Arbitrary<PvcRecord> = fc
  .record({ uid: uidText, namespace: text, name: anyText, phase: text, volumeName: text, controllerUid: opt(uidText) })
  .map(defined);

export const pv: fc.Arbitrary<PvRecord> = fc
  .record({
    name: anyText,
    phase: text,
    claimRef: opt(fc.record({ namespace: text, name: text, uid: uidText })),
    accessModes: fc.array(fc.constantFrom('ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod', 'é'), { maxLength: 3 }),
    csi: opt(fc.record({ driver: text, volumeHandle: anyText, readOnly: fc.boolean() })),
    intree: opt(inTree),
    zoneLabel: opt(text),
    otherSourceType: opt(text),
  })
  .map(defined);

/** A VolumeAttachment's name: mostly CSI's `csi-<sha256 hex>` (held packed), or near misses, or any text. */
const attachmentName = fc.oneof(
  { weight: 2, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `csi-${Buffer.from(b).toString('hex')}`) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `csi-${Buffer.from(b).toString('hex').toUpperCase()}`) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 31, maxLength: 33 }).map((b) => `csi-${Buffer.from(b).toString('hex').slice(1)}`) },
  { weight: 2, arbitrary: anyText },
);
export const volumeAttachment: fc.Arbitrary<VolumeAttachmentRecord> = fc
  .record({
    name: attachmentName,
    uid: opt(uidText),
    attacher: text,
    nodeName: text,
    pvName: opt(anyText),
    inline: fc.boolean(),
    attached: fc.boolean(),
    attachError: opt(text),
    detachError: opt(text),
    deletionTimestamp: opt(text),
    deleting: fc.boolean(),
  })
  .map(defined);

export const node: fc.Arbitrary<NodeRecord> = fc
  .record({
    name: text,
    uid: uidText,
    managed: fc.boolean(),
    ready: fc.boolean(),
    outOfService: fc.boolean(),
    volumesInUse: fc.option(fc.array(volumeName, { maxLength: 6 }), { nil: null }),
    volumesAttached: fc.array(volumeName, { maxLength: 6 }),
    devicePaths: opt(fc.array(text, { maxLength: 6 })),
    unreadable: opt(fc.array(text, { maxLength: 3 })),
  })
  .map(defined);
