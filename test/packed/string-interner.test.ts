import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { StringInterner } from '../../src/packed/string-interner.js';

/** Names with non-ASCII characters too (their byte and char lengths differ), and the empty name. */
const name = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'b', '/', '^', 'é', '€', '😀'), maxLength: 12 }),
  fc.nat(400).map((n) => `kubernetes.io/csi/d^vol-${n}`),
);

test('StringInterner agrees with a Map model: ids, names, reuse of freed ids, dormant bindings', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('intern', 'intern', 'release', 'find'), name), { maxLength: 600 }), (ops) => {
      const ids = new StringInterner();
      const live = new Map<string, number>();
      /** Every id's last name, live or dormant (a dormant name interned again gets its id back). */
      const bound = new Map<number, string>();
      for (const [k, n] of ops) {
        if (k === 'intern') {
          const dormant = [...bound].find(([id, b]) => b === n && !ids.isLive(id))?.[0];
          const id = ids.intern(n);
          assert.equal(ids.created, !live.has(n));
          if (live.has(n)) assert.equal(id, live.get(n));
          else if (dormant !== undefined) assert.equal(id, dormant, 'a dormant binding is revived');
          else assert.ok(![...live.values()].includes(id), 'a new name takes a free id');
          for (const [other, oid] of live) assert.ok(oid !== id || other === n, 'id bound twice');
          live.set(n, id);
          bound.set(id, n);
        } else if (k === 'release') {
          const id = live.get(n);
          if (id !== undefined) {
            ids.release(id);
            live.delete(n);
          }
        }
        assert.equal(ids.find(n), live.get(n));
      }
      assert.equal(ids.size, live.size);
      assert.ok(ids.highWater <= bound.size, 'ids stay dense: no id without a name');
      for (const [n, id] of live) {
        assert.equal(ids.find(n), id);
        assert.equal(ids.name(id), n);
        const bytes = Buffer.from(n, 'utf8');
        assert.ok(ids.nameEquals(id, bytes, 0, bytes.length));
      }
      for (const [id, n] of bound) if (!ids.isLive(id)) assert.equal(ids.name(id), undefined, `dormant ${n} is invisible`);
    }),
    { numRuns: 150 },
  );
});

test('StringInterner: wouldExtend tells when intern would take a new id', () => {
  const ids = new StringInterner();
  assert.equal(ids.wouldExtend('a'), true);
  const a = ids.intern('a');
  assert.equal(ids.wouldExtend('a'), false);
  assert.equal(ids.wouldExtend('b'), true);
  ids.release(a);
  assert.equal(ids.wouldExtend('b'), false, 'the freed id is taken first');
  assert.equal(ids.intern('b'), a);
  assert.equal(ids.highWater, 1);
});
