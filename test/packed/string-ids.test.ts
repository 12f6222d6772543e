import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { StringIds } from '../../src/packed/string-ids.js';

/** Strings with non-ASCII (two-, three- and four-byte UTF-8) characters, and the empty one. */
const text = fc.string({ unit: fc.constantFrom('a', 'b', '/', 'é', '€', '😀', '0'), maxLength: 6 });

test('StringIds: intern, find, text, is and release agree with a Map of string to id', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('intern', 'intern', 'find', 'release'), text), { maxLength: 400 }), (ops) => {
      // Small chunks: records move when the arena compacts, ids must not.
      const ids = new StringIds(128);
      const ref = new Map<string, number>();
      for (const [op, s] of ops) {
        if (op === 'intern') {
          const id = ids.intern(s);
          const had = ref.get(s);
          if (had !== undefined) assert.equal(id, had);
          else {
            assert.ok(![...ref.values()].includes(id), 'a live id is never issued twice');
            ref.set(s, id);
          }
        } else if (op === 'find') {
          assert.equal(ids.find(s), ref.get(s) ?? -1);
        } else {
          const id = ref.get(s);
          if (id !== undefined) {
            ids.release(id);
            ref.delete(s);
            assert.equal(ids.has(id), false);
          }
        }
        assert.equal(ids.size, ref.size);
        for (const [k, id] of ref) {
          assert.equal(ids.text(id), k);
          assert.ok(ids.is(id, k));
          assert.ok(id < ids.idLimit);
          if (k !== s) assert.equal(ids.is(id, s), false);
        }
      }
    }),
    { numRuns: 200 },
  );
});
