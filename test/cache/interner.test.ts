// Interner: dense ids, reuse of freed ids, and dormant name bindings revived without a map write.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
