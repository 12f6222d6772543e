import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { PackedStore } from '../../src/kube/packed-store.js';
import { ProjectionStore, type ProjectionCache, type StoreEntry } from '../../src/kube/projection-store.js';
import { keepEqual } from '../../src/kube/projections/keep-equal.js';
import { NODE_KIND, POD_KIND, PV_KIND, VOLUME_ATTACHMENT_KIND, type ResourceKind } from '../../src/kube/projections/index.js';
import { logger } from '../../src/log/logger.js';
import { node, pod, pv, volumeAttachment } from './projection-arbitraries.js';

const DIGEST = 'ab'.repeat(32);
// With a VolumeAttachment's `csi-<sha256 hex>` name, held packed, and near misses held as text.
const KEYS = ['ns/a', 'ns/b', 'other/c', 'd', 'ns/é', 'ns/😀', 'ns/a-rather-long-name-of-a-pod-0123456789', `csi-${DIGEST}`, `csi-${DIGEST.toUpperCase()}`, `csi-${DIGEST.slice(1)}`, `csi-${DIGEST.replace('a', '0')}`];
const RVS = ['1', '2', '01', '2147483648', 'x', ''];

type Op =
  | { op: 'upsert'; k: number; v: number; rv: string }
  | { op: 'remove'; k: number; v: number | undefined }
  | { op: 'replace'; items: Array<{ k: number; v: number; rv: string }>; present: number[]; chunk: number };

const ops = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ op: fc.constant('upsert' as const), k: fc.nat(KEYS.length - 1), v: fc.nat(3), rv: fc.constantFrom(...RVS) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('remove' as const), k: fc.nat(KEYS.length - 1), v: fc.option(fc.nat(3), { nil: undefined }) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        op: fc.constant('replace' as const),
        items: fc.uniqueArray(fc.record({ k: fc.nat(KEYS.length - 1), v: fc.nat(3), rv: fc.constantFrom(...RVS) }), { selector: (i) => i.k, maxLength: KEYS.length }),
        present: fc.uniqueArray(fc.nat(KEYS.length - 1), { maxLength: 3 }),
        chunk: fc.integer({ min: 1, max: 5 }),
      }),
    },
  ),
  { maxLength: 40 },
);

/** JSON with sorted keys: an order for objects whose members were set in different orders. */
function canon(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));
}

interface Seen {
  event: string;
  obj: unknown;
  old?: unknown;
  /** `update`: whether `obj === old` (the update changed nothing the projection keeps). */
  same?: boolean;
}

function recorder<T>(store: ProjectionCache<T>): Seen[] {
  const seen: Seen[] = [];
  store.addHandler({
    add: (obj) => seen.push({ event: 'add', obj }),
    update: (obj, old) => seen.push({ event: 'update', obj, old, same: obj === old }),
    delete: (obj) => seen.push({ event: 'delete', obj }),
  });
  return seen;
}

/** The events of one operation, deletions of a relist in a set order (the stores walk their objects in different orders). */
function normalised(events: Seen[]): Seen[] {
  const kept = events.filter((e) => e.event !== 'delete');
  const deletes = events.filter((e) => e.event === 'delete').sort((a, b) => (canon(a.obj) < canon(b.obj) ? -1 : 1));
  return [...kept, ...deletes];
}

function sameContents<T>(packed: ProjectionCache<T>, ref: ProjectionCache<T>): void {
  assert.equal(packed.size, ref.size);
  for (const k of KEYS) {
    assert.equal(packed.has(k), ref.has(k));
    assert.deepStrictEqual(packed.get(k), ref.get(k));
    assert.equal(packed.resourceVersionOf(k), ref.resourceVersionOf(k));
    if (!ref.has(k)) assert.equal(ref.resourceVersionOf(k), undefined);
  }
  assert.deepStrictEqual([...packed.keys()].sort(), [...ref.keys()].sort());
  assert.deepStrictEqual([...packed.values()].map(canon).sort(), [...ref.values()].map(canon).sort());
}

function checkAgainstMapStore<T>(kind: ResourceKind<T>, arb: fc.Arbitrary<T>): void {
  fc.assert(
    fc.property(fc.array(arb, { minLength: 4, maxLength: 4 }), ops, (values, run) => {
      const packed = new PackedStore<T>(logger('test'), kind.codec!);
      // The reference: a Map of the objects, whose keepEqual hands over the stored object for an unchanged update.
      const ref = new ProjectionStore<T>(logger('test'), keepEqual as (old: T, fresh: T) => T);
      const got = recorder(packed);
      const want = recorder(ref);
      // Each store gets its own copies: keepEqual completes `fresh` in place.
      const value = (v: number) => structuredClone(values[v]!);
      for (const o of run) {
        if (o.op === 'upsert') {
          packed.upsert(KEYS[o.k]!, value(o.v), o.rv);
          ref.upsert(KEYS[o.k]!, value(o.v), o.rv);
          assert.equal(packed.resourceVersionOf(KEYS[o.k]!), o.rv, 'the version as written');
        } else if (o.op === 'remove') {
          packed.remove(KEYS[o.k]!, o.v === undefined ? undefined : value(o.v));
          ref.remove(KEYS[o.k]!, o.v === undefined ? undefined : value(o.v));
        } else {
          const listed = () => new Map<string, StoreEntry<T>>(o.items.map((i) => [KEYS[i.k]!, { value: value(i.v), rv: i.rv }]));
          const present = new Set(o.present.map((k) => KEYS[k]!));
          const a = [...stepsOf(packed.replaceInChunks(listed(), present, o.chunk))];
          const b = [...stepsOf(ref.replaceInChunks(listed(), present, o.chunk))];
          assert.deepStrictEqual(a, b, 'same steps and counts');
        }
        assert.deepStrictEqual(normalised(got.splice(0)), normalised(want.splice(0)), JSON.stringify(o));
        sameContents(packed, ref);
      }
    }),
    { numRuns: 150 },
  );
}

/** A replace run to its end: one entry per step, then the counts. */
function* stepsOf<R>(g: Generator<void, R>): Generator<string | R> {
  for (;;) {
    const r = g.next();
    if (r.done) return yield r.value;
    yield 'step';
  }
}

describe('PackedStore against a Map of the objects', () => {
  it('pods: the same handler calls (an unchanged update with obj === old), and the same get, keys and values', () => {
    checkAgainstMapStore(POD_KIND, pod);
  });
  it('PVs', () => {
    checkAgainstMapStore(PV_KIND, pv);
  });
  it('nodes', () => {
    checkAgainstMapStore(NODE_KIND, node);
  });
  it('VolumeAttachments', () => {
    checkAgainstMapStore(VOLUME_ATTACHMENT_KIND, volumeAttachment);
  });
  it("holds a VolumeAttachment's csi-<sha256> name as its 32 bytes, and hands it back whole", () => {
    const store = new PackedStore(logger('test'), VOLUME_ATTACHMENT_KIND.codec!);
    const name = `csi-${DIGEST.replace('a', '0')}`;
    const va = { name, attacher: 'd', nodeName: 'n', inline: false, attached: true, deleting: false, pvName: 'pv' };
    store.upsert(name, va, '7');
    store.upsert('csi-short', { ...va, name: 'csi-short' }, '8');
    assert.deepStrictEqual(store.get(name), va);
    assert.deepStrictEqual([...store.keys()].sort(), [name, 'csi-short'].sort());
    assert.equal(store.has(`csi-${DIGEST}`), false);
    store.remove('csi-short');
    // The key's 33 bytes and a body of at most 10 (as text, the key alone is 68 bytes).
    const held = (store as unknown as { arena: { bytes: number } }).arena.bytes;
    assert.ok(held <= 33 + 10, `${held} bytes for the record`);
  });

  it('hands out a fresh copy on each read: what a caller does to one leaves the store as it was', () => {
    const store = new PackedStore(logger('test'), POD_KIND.codec!);
    const p = { uid: 'u1', namespace: 'ns', name: 'p', nodeName: 'n1', phase: 'Running', allContainersNotRunning: false, volumes: [{ name: 'data', kind: 'pvc' as const, claimName: 'c', sourceType: 'persistentVolumeClaim' }] };
    store.upsert('ns/p', structuredClone(p), '1');
    const a = store.get('ns/p')!;
    assert.notEqual(a, store.get('ns/p'));
    a.volumes.length = 0;
    a.nodeName = 'elsewhere';
    assert.deepStrictEqual(store.get('ns/p'), p);
  });

  it('keeps many objects through removal and slot reuse', () => {
    const store = new PackedStore(logger('test'), POD_KIND.codec!);
    const mk = (i: number) => ({ uid: `uid-${i}`, namespace: `ns-${i % 3}`, name: `pod-${i}`, nodeName: `node-${i % 10}`, phase: 'Running', allContainersNotRunning: false, volumes: [] });
    for (let i = 0; i < 5000; i++) store.upsert(`ns-${i % 3}/pod-${i}`, mk(i), String(i + 1));
    for (let i = 0; i < 5000; i += 2) store.remove(`ns-${i % 3}/pod-${i}`);
    for (let i = 5000; i < 6000; i++) store.upsert(`ns-${i % 3}/pod-${i}`, mk(i), String(i + 1));
    assert.equal(store.size, 3500);
    for (let i = 0; i < 6000; i++) assert.deepStrictEqual(store.get(`ns-${i % 3}/pod-${i}`), i < 5000 && i % 2 === 0 ? undefined : mk(i));
    assert.equal([...store.values()].length, 3500);
  });
});
