import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SharedStrings } from '../../src/packed/shared-strings.js';

test('SharedStrings: one id per distinct string, stable, and back to an equal string', () => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: fc.constantFrom('a', 'b', 'é', '😀', '-'), maxLength: 20 }), { maxLength: 200 }), (values) => {
      const table = new SharedStrings();
      const ref = new Map<string, number>();
      for (const s of values) {
        const id = table.id(s);
        if (ref.has(s)) assert.equal(id, ref.get(s));
        else {
          assert.equal(id, ref.size, 'ids are dense, in order of first sight');
          ref.set(s, id);
        }
      }
      assert.equal(table.size, ref.size);
      for (const [s, id] of ref) assert.equal(table.at(id), s);
    }),
  );
});

test('SharedStrings: an unknown id throws rather than reading as some string', () => {
  const table = new SharedStrings();
  table.id('x');
  assert.throws(() => table.at(1), RangeError);
});
