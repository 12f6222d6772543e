import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import {
  NODE_KIND,
  POD_KIND,
  PV_KIND,
  PVC_KIND,
  RecordReader,
  RecordWriter,
  VOLUME_ATTACHMENT_KIND,
  type NodeRecord,
  type PodRecord,
  type ProjectionCodec,
  type ResourceKind,
} from '../../src/kube/projections/index.js';
import { node, pod, pv, pvc, volumeAttachment } from './projection-arbitraries.js';

/** The store key of a projection (`namespace/name` or `name`). */
function keyOf(value: unknown): string {
  const o = value as { namespace?: string; name: string };
  return o.namespace !== undefined ? `${o.namespace}/${o.name}` : o.name;
}

/** Encodes `value` after `key` (its own key unless told), and decodes it from inside a larger buffer, as the store reads an arena record. */
function roundTrip<T>(codec: ProjectionCodec<T>, value: T, key = keyOf(value)): { decoded: T; bytes: Buffer } {
  const w = new RecordWriter();
  w.reset();
  w.key(key);
  const keyLen = w.pos;
  codec.encode(value, w);
  const bytes = Buffer.from(w.bytes.subarray(0, w.pos));
  const host = Buffer.concat([Buffer.from('prefix'), bytes, Buffer.from('suffix')]);
  const r = new RecordReader();
  r.reset(host, 6, keyLen);
  const decoded = codec.decode(r);
  assert.equal(r.pos, 6 + bytes.length, 'the decoder reads the whole record and no further');
  return { decoded, bytes };
}

const KINDS: Array<[string, ResourceKind<unknown>, fc.Arbitrary<unknown>]> = [
  ['pod', POD_KIND as ResourceKind<unknown>, pod],
  ['pvc', PVC_KIND as ResourceKind<unknown>, pvc],
  ['pv', PV_KIND as ResourceKind<unknown>, pv],
  ['volume attachment', VOLUME_ATTACHMENT_KIND as ResourceKind<unknown>, volumeAttachment],
  ['node', NODE_KIND as ResourceKind<unknown>, node],
];

describe('projection codecs', () => {
  for (const [name, kind, arb] of KINDS) {
    it(`${name}: decodes to an equal projection, and equal projections encode to equal bytes`, () => {
      const codec = kind.codec!;
      fc.assert(
        fc.property(arb, (value) => {
          const { decoded, bytes } = roundTrip(codec, value);
          assert.deepStrictEqual(decoded, value);
          // A structured clone has fresh strings and objects: the bytes must not depend on identity.
          assert.deepStrictEqual(roundTrip(codec, structuredClone(value)).bytes, bytes);
        }),
        { numRuns: 300 },
      );
    });

    it(`${name}: decodes to an equal projection under a key that does not hold its name`, () => {
      const codec = kind.codec!;
      fc.assert(
        fc.property(arb, fc.constantFrom('', 'x', 'ns/x', 'a/b/c', 'é/😀'), (value, key) => {
          assert.deepStrictEqual(roundTrip(codec, value, key).decoded, value);
        }),
        { numRuns: 300 },
      );
    });

    it(`${name}: different projections encode to different bytes`, () => {
      const codec = kind.codec!;
      fc.assert(
        fc.property(arb, arb, (a, b) => {
          fc.pre(!isDeepStrictEqual(a, b));
          assert.notDeepStrictEqual(roundTrip(codec, a).bytes, roundTrip(codec, b).bytes);
        }),
        { numRuns: 300 },
      );
    });
  }

  it('carries huge lists and long strings', () => {
    const many = Array.from({ length: 20_000 }, (_, i) => `kubernetes.io/csi/ebs.csi.aws.com^vol-${i}-é😀`);
    const n: NodeRecord = { name: 'n'.repeat(5000), uid: '', managed: true, ready: false, outOfService: true, volumesInUse: many, volumesAttached: many.slice(0, 9999), devicePaths: many.map(() => '') };
    assert.deepStrictEqual(roundTrip(NODE_KIND.codec!, n).decoded, n);
    const p: PodRecord = {
      uid: 'u'.repeat(70_000), namespace: '', name: '名前'.repeat(1000), nodeName: '', phase: '', allContainersNotRunning: false,
      volumes: Array.from({ length: 3000 }, (_, i) => ({ name: `v${i % 7}`, kind: 'pvc' as const, claimName: `c${i}`, sourceType: 'persistentVolumeClaim' })),
    };
    assert.deepStrictEqual(roundTrip(POD_KIND.codec!, p).decoded, p);
  });

  it("a node's CSI volume names hold their driver prefix once, as a shared id", () => {
    const names = Array.from({ length: 10 }, (_, i) => `kubernetes.io/csi/ebs.csi.aws.com^vol-${i}`);
    const n: NodeRecord = { name: 'n', uid: '', managed: true, ready: true, outOfService: false, volumesInUse: names, volumesAttached: names };
    const { bytes, decoded } = roundTrip(NODE_KIND.codec!, n);
    assert.deepStrictEqual(decoded, n);
    // Whole, the two lists' names are 720 bytes; each entry here is its 5-byte handle and at most 4 bytes more.
    const whole = 2 * names.reduce((sum, s) => sum + s.length, 0);
    assert.ok(bytes.length <= 20 * (5 + 4) + 20, `${bytes.length} bytes against ${whole} of names`);
  });

  it('a PV decodes its access modes to the pooled frozen list the projection holds', () => {
    const projected = PV_KIND.project({ metadata: { name: 'pv' }, spec: { accessModes: ['ReadWriteOnce'] }, status: { phase: 'Bound' } });
    assert.ok(projected.ok);
    const { decoded } = roundTrip(PV_KIND.codec!, projected.value);
    assert.equal(decoded.accessModes, projected.value.accessModes);
    assert.ok(Object.isFrozen(decoded.accessModes));
  });
});
