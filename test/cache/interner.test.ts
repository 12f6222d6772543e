// Interner: dense ids, reuse of freed ids, and dormant name bindings revived without a map write.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Interner } from '../../src/cache/interner.js';

describe('Interner', () => {
  it('hides a freed name and gives it its old id back while nobody took the id', () => {
    const ids = new Interner();
    const a = ids.intern('a');
    assert.equal(ids.created, true);
    ids.intern('b');
    ids.release(a);
    assert.equal(ids.find('a'), undefined);
    assert.equal(ids.name(a), undefined);
    assert.equal(ids.isLive(a), false);
    assert.equal(ids.size, 1);
    assert.equal(ids.intern('a'), a);
    assert.equal(ids.created, true);
    assert.equal(ids.intern('a'), a);
    assert.equal(ids.created, false);
    assert.equal(ids.size, 2);
  });

  it('rebinds a freed id to a new name and forgets the old binding', () => {
    const ids = new Interner();
    const a = ids.intern('a');
    ids.release(a);
    assert.equal(ids.intern('c'), a);
    assert.equal(ids.name(a), 'c');
    assert.equal(ids.find('a'), undefined);
    const again = ids.intern('a');
    assert.notEqual(again, a);
    assert.equal(ids.find('c'), a);
    assert.equal(ids.highWater, 2);
  });

  it('does not hand out an id revived after it was freed', () => {
    const ids = new Interner();
    const a = ids.intern('a');
    const b = ids.intern('b');
    ids.release(a);
    ids.release(b);
    ids.intern('a'); // revived, still on the free list
    ids.release(b);
    const fresh = [ids.intern('x'), ids.intern('y')];
    assert.deepEqual(fresh.sort(), [b, 2].sort());
    assert.equal(ids.find('a'), a);
    assert.equal(ids.size, 3);
  });
});

describe('Interner against a model', () => {
  it('agrees with a Map of live names over random interning, releasing and growth', () => {
    const op = fc.record({ k: fc.constantFrom('intern', 'intern', 'release', 'find'), name: fc.oneof(fc.nat(40), fc.nat(3000)) });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 800 }), (ops) => {
        const ids = new Interner();
        const model = new Map<string, number>();
        for (const o of ops) {
          const name = `kubernetes.io/csi/d^v-${o.name}`;
          if (o.k === 'intern') {
            const id = ids.intern(name);
            assert.equal(ids.created, !model.has(name));
            if (model.has(name)) assert.equal(id, model.get(name));
            assert.ok(![...model].some(([n, other]) => other === id && n !== name), 'id bound twice');
            model.set(name, id);
          } else if (o.k === 'release') {
            const id = model.get(name);
            if (id !== undefined) {
              ids.release(id);
              model.delete(name);
            }
          }
          assert.equal(ids.find(name), model.get(name));
        }
        assert.equal(ids.size, model.size);
        for (const [name, id] of model) {
          assert.equal(ids.find(name), id);
          assert.equal(ids.name(id), name);
        }
      }),
      { numRuns: 100 },
    );
  });
});
