import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { StringColumn } from '../../src/packed/string-column.js';

/** UUIDs (packed form) and near misses kept as text: uppercase, no dashes, non-ASCII, empty. */
const uid = fc.oneof(
  fc.uuid(),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.uuid().map((u) => u.replace(/-/g, '')),
  fc.uuid().map((u) => `${u.slice(0, 35)}é`),
  fc.string({ maxLength: 8 }),
);

test('StringColumn agrees with a Map model over set, clear, equals and get', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('set', 'set', 'clear', 'equals'), fc.nat(300), uid), { maxLength: 400 }), (ops) => {
      const col = new StringColumn();
      const model = new Map<number, string>();
      for (const [k, slot, s] of ops) {
        if (k === 'set') {
          col.set(slot, s);
          model.set(slot, s);
        } else if (k === 'clear') {
          col.clear(slot);
          model.delete(slot);
        } else {
          assert.equal(col.equals(slot, s), model.get(slot) === s);
          const held = model.get(slot);
          if (held !== undefined) assert.equal(col.equals(slot, held), true);
        }
        assert.equal(col.get(slot), model.get(slot));
        assert.equal(col.has(slot), model.has(slot));
      }
      assert.equal(col.size, model.size);
      for (const [slot, s] of model) assert.equal(col.get(slot), s);
    }),
    { numRuns: 150 },
  );
});
