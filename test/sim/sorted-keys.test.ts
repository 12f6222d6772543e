import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SortedKeys } from '../../src/sim/store/sorted-keys.js';

test('SortedKeys matches a sorted Set under random inserts and removes, and resumes after any key', () => {
  fc.assert(
    // Op 0–48 inserts, 49–97 removes, 98–99 reads: reads between writes sort the pending inserts in,
    // a few at a time into a large set (one by one) or many at once (one merge).
    fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 5000 })), { maxLength: 3000 }), fc.integer({ min: 0, max: 5000 }), (ops, probe) => {
      const sk = new SortedKeys();
      const ref = new Set<string>();
      for (const [op, n] of ops) {
        const k = `k${n}`;
        if (op < 49) { sk.insert(k); ref.add(k); } else if (op < 98) { sk.remove(k); ref.delete(k); } else assert.deepEqual(sk.range(undefined), [...ref].sort());
      }
      const expected = [...ref].sort();
      assert.equal(sk.size, ref.size);
      assert.deepEqual([...sk.range(undefined)], expected);
      const after = `k${probe}`;
      assert.deepEqual([...sk.range(after)], expected.filter((k) => k > after));
      assert.deepEqual([...sk.range(undefined, after)], expected.filter((k) => k < after));
      // visit walks the same keys as range and stops where its callback says.
      const visited = (from: string | undefined, end: string | undefined, stopAfter = Infinity) => {
        const out: string[] = [];
        sk.visit(from, end, (k) => out.push(k) < stopAfter);
        return out;
      };
      assert.deepEqual(visited(undefined, undefined), expected);
      assert.deepEqual(visited(after, undefined), expected.filter((k) => k > after));
      assert.deepEqual(visited(undefined, after), expected.filter((k) => k < after));
      assert.deepEqual(visited(after, undefined, 3), expected.filter((k) => k > after).slice(0, 3));
    }),
    { numRuns: 80 },
  );
});
