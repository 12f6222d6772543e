import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProjectionStore, type StoreEntry } from '../../src/kube/projection-store.js';
import { logger } from '../../src/log/logger.js';

interface Rec {
  name: string;
  v: number;
}

function recorded(store: ProjectionStore<Rec>): string[] {
  const seen: string[] = [];
  store.addHandler({
    add: (o) => seen.push(`add ${o.name}@${o.v}`),
    update: (o, old) => seen.push(`update ${o.name}@${old.v}->${o.v}`),
    delete: (o) => seen.push(`delete ${o.name}@${o.v}`),
  });
  return seen;
}

const list = (...items: Array<[string, number, string]>) => new Map<string, StoreEntry<Rec>>(items.map(([name, v, rv]) => [name, { value: { name, v }, rv }]));

describe('ProjectionStore', () => {
  it('relist updates exactly the objects whose resourceVersion string changed, whatever its form', () => {
    const store = new ProjectionStore<Rec>(logger('test'));
    const seen = recorded(store);
    // Versions that are canonical small integers, one with a leading zero, one beyond 2^31, one not numeric.
    store.replace(list(['a', 1, '10'], ['b', 1, '010'], ['c', 1, '4294967296'], ['d', 1, 'x7'], ['e', 1, '2147483647']), new Set());
    assert.deepEqual(seen.splice(0), ['add a@1', 'add b@1', 'add c@1', 'add d@1', 'add e@1']);
    // Same strings: nothing. '10' vs '010' must stay different versions.
    store.replace(list(['a', 2, '10'], ['b', 2, '010'], ['c', 2, '4294967296'], ['d', 2, 'x7'], ['e', 2, '2147483647']), new Set());
    assert.deepEqual(seen.splice(0), []);
    store.replace(list(['a', 3, '010'], ['b', 3, '10'], ['c', 3, '4294967297'], ['d', 3, 'x8'], ['e', 3, '2147483648']), new Set());
    assert.deepEqual(seen.splice(0), ['update a@1->3', 'update b@1->3', 'update c@1->3', 'update d@1->3', 'update e@1->3']);
    assert.equal(store.get('a')?.v, 3);
  });

  it('relist deletes what is neither listed nor present, and keeps present-but-unprojectable objects as last seen', () => {
    const store = new ProjectionStore<Rec>(logger('test'));
    store.upsert('a', { name: 'a', v: 1 }, '5');
    store.upsert('b', { name: 'b', v: 1 }, '6');
    store.upsert('c', { name: 'c', v: 1 }, '7');
    const seen = recorded(store);
    const r = store.replace(list(['a', 1, '5']), new Set(['b']));
    assert.deepEqual(r, { added: 0, updated: 0, deleted: 1 });
    assert.deepEqual(seen, ['delete c@1']);
    assert.deepEqual([...store.keys()].sort(), ['a', 'b']);
  });

  it('watch events: an upsert of a stored key is an update, remove of an unknown key is silent, remove delivers the final state', () => {
    const store = new ProjectionStore<Rec>(logger('test'));
    const seen = recorded(store);
    const key = ['ns', 'p'].join('/');
    store.upsert(key, { name: 'p', v: 1 }, '1');
    store.upsert('ns/p', { name: 'p', v: 2 }, '2');
    store.remove('ns/q');
    store.remove('ns/p', { name: 'p', v: 3 });
    assert.deepEqual(seen, ['add p@1', 'update p@1->2', 'delete p@3']);
    assert.equal(store.size, 0);
  });

  it('an update, by watch or relist, is stored as keepFrom(old, fresh) makes it, and handlers see that value', () => {
    const calls: string[] = [];
    // Keeps the old record when `v` is unchanged (as keepNodeFrom does when nothing kept changed).
    const keepFrom = (old: Rec, fresh: Rec) => {
      calls.push(`${old.v}->${fresh.v}`);
      return old.v === fresh.v ? old : fresh;
    };
    const store = new ProjectionStore<Rec>(logger('test'), keepFrom);
    const updates: Array<[Rec, Rec]> = [];
    store.addHandler({ update: (o, old) => updates.push([o, old]) });
    const first = { name: 'a', v: 1 };
    store.upsert('a', first, '1');
    assert.deepEqual(calls, [], 'not called for an add');
    store.upsert('a', { name: 'a', v: 1 }, '2');
    assert.equal(store.get('a'), first, 'an unchanged update keeps the stored object');
    assert.equal(updates[0]![0], first);
    store.replace(list(['a', 2, '3']), new Set());
    assert.equal(store.get('a')?.v, 2);
    assert.equal(updates[1]![1], first);
    store.replace(list(['a', 2, '3']), new Set());
    assert.deepEqual(calls, ['1->1', '1->2'], 'not called when the resourceVersion did not change');
  });
});


describe('ProjectionStore.replaceInChunks', () => {
  /** A store holding `before`, and what replacing it with `after` (and `present`) emits. */
  function replaced(before: Array<[string, number, string]>, after: Array<[string, number, string]>, present: string[], chunk?: number) {
    const store = new ProjectionStore<Rec>(logger('test'));
    store.replace(list(...before), new Set());
    const seen = recorded(store);
    let steps = 0;
    let counts;
    if (chunk === undefined) counts = store.replace(list(...after), new Set(present));
    else {
      const it = store.replaceInChunks(list(...after), new Set(present), chunk);
      for (let r = it.next(); ; r = it.next()) {
        if (r.done) {
          counts = r.value;
          break;
        }
        steps++;
      }
    }
    return { seen, counts, steps, contents: [...store.keys()].sort().map((k) => `${k}@${store.get(k)!.v}`) };
  }

  it('emits, changes and counts exactly what replace does, for random stores, lists and chunk sizes', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const names = Array.from({ length: rand(40) }, (_, i) => `o${i}`);
      const before = names.filter(() => rand(3) > 0).map((n): [string, number, string] => [n, 1, String(rand(3))]);
      const after = names.filter(() => rand(3) > 0).map((n): [string, number, string] => [n, 2, String(rand(3))]);
      const present = names.filter(() => rand(5) === 0);
      const whole = replaced(before, after, present);
      const chunk = 1 + rand(8);
      const inChunks = replaced(before, after, present, chunk);
      assert.deepEqual(inChunks.seen, whole.seen, `round ${round}`);
      assert.deepEqual(inChunks.counts, whole.counts);
      assert.deepEqual(inChunks.contents, whole.contents);
      // One step per `chunk` objects walked: the stored ones, then the listed ones.
      assert.equal(inChunks.steps, Math.floor((before.length + after.length) / chunk));
    }
  });

  it('deletes before it adds, so a handler never holds the vanished and the new object at once', () => {
    const { seen } = replaced([['a', 1, '1']], [['b', 1, '1']], [], 1);
    assert.deepEqual(seen, ['delete a@1', 'add b@1']);
  });
});
