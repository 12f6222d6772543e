import assert from 'node:assert/strict';
import { it } from 'node:test';
import fc from 'fast-check';
import { StringTable } from '../../src/packed/string-table.js';

const word = fc.constantFrom('a', 'b', 'node-1', 'node-10', 'é', '\u00c3\u00a9', 'ns/claim', 'x'.repeat(300), '日本');
const op = fc.oneof(
  fc.record({ op: fc.constant('acquire' as const), s: word }),
  fc.record({ op: fc.constant('release' as const), s: word }),
);

it('StringTable: ids and reference counts as a Map of counts would have them', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
      const t = new StringTable({ chunkBytes: 256 });
      const model = new Map<string, number>();
      const ids = new Map<string, number>();
      for (const o of ops) {
        if (o.op === 'acquire') {
          const id = t.acquire(o.s);
          const had = model.get(o.s) ?? 0;
          if (had > 0) assert.equal(id, ids.get(o.s), 'a held string keeps its id');
          ids.set(o.s, id);
          model.set(o.s, had + 1);
        } else {
          const had = model.get(o.s) ?? 0;
          if (had === 0) continue;
          t.release(ids.get(o.s)!);
          if (had === 1) model.delete(o.s);
          else model.set(o.s, had - 1);
        }
        assert.equal(t.size, model.size);
      }
      for (const s of ['a', 'b', 'node-1', 'node-10', 'é', '\u00c3\u00a9', 'ns/claim', 'x'.repeat(300), '日本']) {
        const n = model.get(s) ?? 0;
        const id = t.find(s);
        assert.equal(id >= 0, n > 0);
        if (id < 0) continue;
        assert.equal(t.refCount(id), n);
        assert.equal(t.text(id), s);
        assert.equal(t.equals(id, s), true);
        for (const other of ['a', 'node-1', 'é', '\u00c3\u00a9']) if (other !== s) assert.equal(t.equals(id, other), false);
      }
    }),
    { numRuns: 200 },
  );
});

it('StringTable.equalsJoined compares with head + sep + tail, ASCII or not', () => {
  const t = new StringTable();
  const ascii = t.acquire('ns/claim');
  assert.equal(t.equalsJoined(ascii, 'ns', '/', 'claim'), true);
  assert.equal(t.equalsJoined(ascii, 'ns', '/', 'clain'), false);
  assert.equal(t.equalsJoined(ascii, 'n', '/', 'sclaim'), false);
  assert.equal(t.equalsJoined(ascii, 'ns', '/', 'claimx'), false);
  const wide = t.acquire('nś/é');
  assert.equal(t.equalsJoined(wide, 'nś', '/', 'é'), true);
  assert.equal(t.equalsJoined(wide, 'nś', '/', '\u00c3\u00a9'), false);
  const bytes = t.acquire('n/\u00c3\u00a9');
  assert.equal(t.equalsJoined(bytes, 'n', '/', 'é'), false);
  assert.equal(t.equalsJoined(bytes, 'n', '/', '\u00c3\u00a9'), true);
});

/** Strings with non-ASCII (two-, three- and four-byte UTF-8) characters, and the empty one. */
const text = fc.string({ unit: fc.constantFrom('a', 'b', '/', 'é', '€', '😀', '0'), maxLength: 6 });

it('StringTable, one reference per string: intern, find, text, equals and release agree with a Map of string to id', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('intern', 'intern', 'find', 'release'), text), { maxLength: 400 }), (ops) => {
      // Small chunks: records move when the arena compacts, ids must not.
      const ids = new StringTable({ chunkBytes: 128 });
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
          assert.ok(ids.equals(id, k));
          assert.ok(id < ids.idLimit);
          if (k !== s) assert.equal(ids.equals(id, s), false);
        }
      }
    }),
    { numRuns: 200 },
  );
});
