// VolumeRecords and SpecShapes against plain models: a spec splits and joins back to an equal
// one, equal specs split alike, and a volume's info and its entries' specs read back equal to
// what was given (an entry keeps its first spec whatever happens to the info after).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SpecShapes } from '../../src/cache/spec-shapes.js';
import { VolumeRecords } from '../../src/cache/volume-records.js';
import { StringInterner } from '../../src/packed/string-interner.js';
import type { EntrySpec } from '../../src/cache/world-state.js';
import type { VolumeSpec } from '../../src/plugins/volume-spec.js';
import { volumeInfoFor } from '../../src/populator/volume-info.js';

// 'v0'..'v2' are the handles ending the volumes' unique names below (kept as part of the name).
const str = fc.oneof(fc.constantFrom('pv-1', 'pv-2', 'vol-a', 'v0', 'v1', 'v2', '', '\u0001', '\u0002', 'é€'), fc.string({ maxLength: 5 }));
const spec: fc.Arbitrary<VolumeSpec> = fc.record({
  name: str,
  origin: fc.constantFrom('pv', 'inline', 'inline-migrated'),
  source: fc.oneof(
    fc.record({ type: fc.constant('csi'), driver: fc.constantFrom('d1', 'd2'), volumeHandle: str, fsType: fc.option(str, { nil: undefined }) }, { requiredKeys: ['type', 'driver', 'volumeHandle'] }),
    fc.record({ type: fc.constant('gcePersistentDisk'), pdName: str }),
    fc.record({ type: fc.constant('csi'), driver: fc.constant('d1'), volumeHandle: str, volumeAttributes: fc.dictionary(fc.constantFrom('k', 'j'), str) }),
  ),
  accessModes: fc.subarray(['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany'] as const),
  readOnly: fc.boolean(),
  migrated: fc.boolean(),
}) as fc.Arbitrary<VolumeSpec>;
const entry: fc.Arbitrary<EntrySpec> = fc.oneof(spec, str);

test('SpecShapes: join(split(spec)) equals the spec; equal specs split alike', () => {
  fc.assert(
    fc.property(entry, entry, (a, b) => {
      const s = new SpecShapes();
      s.split(a);
      const [sa, na, ha] = [s.shape, s.name, s.handle];
      assert.deepEqual(s.join(sa, na, ha), JSON.parse(JSON.stringify(a)));
      s.split(JSON.parse(JSON.stringify(b)) as EntrySpec);
      const same = sa === s.shape && na === s.name && ha === s.handle;
      assert.equal(same, JSON.stringify(a) === JSON.stringify(b));
    }),
    { numRuns: 1000 },
  );
});

test('VolumeRecords: infos and entry specs read back as given, against a model', () => {
  const op = fc.oneof(
    fc.record({ k: fc.constant('info' as const), v: fc.nat(5), spec: fc.option(spec, { nil: undefined }), err: fc.boolean() }),
    fc.record({ k: fc.constant('entry' as const), v: fc.nat(5), slot: fc.nat(20), spec: fc.option(entry, { nil: undefined }) }),
    fc.record({ k: fc.constant('clear' as const), v: fc.nat(5) }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
      const name = (v: number) => `kubernetes.io/csi/d^v${v}`;
      const names = new StringInterner();
      for (let v = 0; v < 6; v++) names.intern(name(v));
      const r = new VolumeRecords(names);
      const infos = new Map<number, unknown>();
      const base = new Map<number, string>();
      const entries = new Map<number, { v: number; spec: string | undefined }>();
      for (const o of ops) {
        if (o.k === 'info') {
          const info = o.spec === undefined ? { uniqueName: name(o.v), pluginName: 'p' } : volumeInfoFor(name(o.v), o.spec, 'kubernetes.io/csi');
          if (o.err) (info as { lastError?: unknown }).lastError = { op: 'attach', node: 'n', message: 'm', at: 1 };
          r.setInfo(o.v, info);
          infos.set(o.v, JSON.parse(JSON.stringify(info)));
        } else if (o.k === 'entry') {
          // A slot belongs to one volume at a time: drop it from any other first, as the world state does.
          const old = entries.get(o.slot);
          if (old !== undefined && old.v !== o.v) r.setEntrySpec(old.v, o.slot, undefined);
          r.setEntrySpec(o.v, o.slot, o.spec);
          const text = o.spec === undefined ? undefined : JSON.stringify(o.spec);
          if (text !== undefined && !base.has(o.v)) base.set(o.v, text);
          entries.set(o.slot, { v: o.v, spec: text });
        } else {
          r.clearVolume(o.v);
          infos.delete(o.v);
          base.delete(o.v);
          for (const [slot, e] of entries) if (e.v === o.v) entries.delete(slot);
        }
        for (let v = 0; v < 6; v++) {
          const got = r.info(v);
          assert.deepEqual(got === undefined ? undefined : JSON.parse(JSON.stringify(got)), infos.get(v));
        }
        for (const [slot, e] of entries) {
          const want = e.spec ?? base.get(e.v);
          const got = r.entrySpec(e.v, slot);
          assert.equal(got === undefined ? undefined : JSON.stringify(got), want === undefined ? undefined : JSON.stringify(JSON.parse(want)));
        }
      }
    }),
    { numRuns: 400 },
  );
});
