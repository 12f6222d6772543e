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
  type Item = [string, number, string];
  /** A store holding `before`, then replaced with `after` (and `present`) in chunks: what it emitted, counted and holds. */
  function replaced(before: Item[], after: Item[], present: string[], chunk: number) {
    const store = new ProjectionStore<Rec>(logger('test'));
    store.replace(list(...before), new Set());
    const seen = recorded(store);
    let steps = 0;
    const it = store.replaceInChunks(list(...after), new Set(present), chunk);
    let r = it.next();
    for (; !r.done; r = it.next()) steps++;
    return { seen, counts: r.value, steps, contents: [...store.keys()].sort().map((k) => `${k}@${store.get(k)!.v}`) };
  }

  it('emits, changes and counts what a relist means, for random stores, lists and chunk sizes', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const chunks = new Set<number>();
    for (let round = 0; round < 300; round++) {
      const names = Array.from({ length: rand(40) }, (_, i) => `o${i}`);
      const before = names.filter(() => rand(3) > 0).map((n): Item => [n, 1, String(rand(3))]);
      const after = names.filter(() => rand(3) > 0).map((n): Item => [n, 2, String(rand(3))]);
      const present = names.filter(() => rand(5) === 0);
      const chunk = 1 + rand(8);
      chunks.add(chunk);
      // Independent of the store: listed objects first (adds, then updates where the version
      // changed, in list order), deletions last (unlisted, not present, in store order).
      const old = new Map(before.map(([n, , rv]) => [n, rv]));
      const listedNames = new Set(after.map(([n]) => n));
      const events: string[] = [];
      for (const [n, , rv] of after) {
        if (!old.has(n)) events.push(`add ${n}@2`);
        else if (old.get(n) !== rv) events.push(`update ${n}@1->2`);
      }
      const gone = before.filter(([n]) => !listedNames.has(n) && !present.includes(n)).map(([n]) => n);
      for (const n of gone) events.push(`delete ${n}@1`);
      const kept = new Map<string, number>();
      for (const [n] of before) if (!gone.includes(n)) kept.set(n, 1);
      for (const [n, , rv] of after) kept.set(n, old.get(n) === rv ? 1 : 2);
      const got = replaced(before, after, present, chunk);
      assert.deepEqual(got.seen, events, `round ${round}`);
      assert.deepEqual(got.contents, [...kept.keys()].sort().map((n) => `${n}@${kept.get(n)}`));
      assert.deepEqual(got.counts, {
        added: events.filter((e) => e.startsWith('add')).length,
        updated: events.filter((e) => e.startsWith('update')).length,
        deleted: gone.length,
      });
      // One step per `chunk` objects walked: the listed ones, then the store's when something is unlisted.
      const union = new Set([...before.map(([n]) => n), ...listedNames]).size;
      assert.equal(got.steps, Math.floor((after.length + (union > after.length ? union : 0)) / chunk));
    }
    assert.equal(chunks.size, 8, 'every chunk size from 1 to 8 was tried');
  });

  it('adds the listed objects before it deletes, so a state between chunks never lacks both the vanished and the new object', () => {
    const { seen } = replaced([['a', 1, '1']], [['b', 1, '1']], [], 1);
    assert.deepEqual(seen, ['add b@1', 'delete a@1']);
  });
});
