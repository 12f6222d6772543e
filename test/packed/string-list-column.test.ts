import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { StringListColumn } from '../../src/packed/string-list-column.js';

const short = fc.string({ unit: fc.constantFrom('a', 'b', '/', '^', 'é', '€', '😀'), maxLength: 6 });
// Entries front-code against the one before: shared prefixes that end inside a multi-byte
// character, and lengths that take two LEB128 bytes.
const word = fc.oneof(
  short,
  short.map((w) => `kubernetes.io/csi/d^😀${w}`),
  fc.tuple(fc.integer({ min: 120, max: 300 }), short).map(([n, w]) => 'é'.repeat(n) + w),
);

test('StringListColumn agrees with a Map of arrays: set, clear, get, count, commonPrefix, includes', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('set', 'set', 'clear', 'read'), fc.nat(80), fc.array(word, { maxLength: 6 })), { maxLength: 200 }), (ops) => {
      const col = new StringListColumn();
      const model = new Map<number, string[]>();
      for (const [k, slot, list] of ops) {
        if (k === 'set') {
          col.set(slot, list);
          model.set(slot, [...list]);
        } else if (k === 'clear') {
          col.clear(slot);
          model.delete(slot);
        }
        const held = model.get(slot);
        assert.equal(col.has(slot), held !== undefined);
        assert.deepEqual(col.get(slot), held);
        assert.equal(col.count(slot), held?.length ?? 0);
        let p = 0;
        while (held && p < held.length && p < list.length && held[p] === list[p]) p++;
        assert.equal(col.commonPrefix(slot, list), p);
        // includes: the matcher sees each entry's bytes; here it compares them with list[0].
        const probe = list[0] ?? '';
        const bytes = Buffer.from(probe, 'utf8');
        const matcher = { nameEquals: (_id: number, b: Uint8Array, start: number, len: number) => len === bytes.length && Buffer.compare(b.subarray(start, start + len), bytes) === 0 };
        assert.equal(col.includes(slot, matcher, 0), held?.includes(probe) ?? false);
      }
      for (const [slot, list] of model) assert.deepEqual(col.get(slot), list);
    }),
    { numRuns: 150 },
  );
});

test('a list of CSI unique names holds each driver prefix about once', () => {
  const col = new StringListColumn();
  const names = Array.from({ length: 1000 }, (_, i) => `kubernetes.io/csi/ebs.csi.aws.com^vol-${String(i).padStart(6, '0')}`);
  col.set(0, names);
  assert.deepEqual(col.get(0), names);
  const whole = names.reduce((sum, s) => sum + s.length, 0);
  // Each entry: two length bytes and the digits that differ from the entry before (at most 6).
  assert.ok(col.bytes <= 4 + 1000 * 8 + 64, `${col.bytes} bytes for ${whole} bytes of names`);
});
