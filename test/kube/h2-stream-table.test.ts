import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COMPACT_AFTER, PendingStreams, StreamTable, probeStreamState, streamTableInstaller } from '../../src/kube/h2-stream-table.js';
import { withH2Loopback } from './h2-loopback.js';

describe('StreamTable', () => {
  it('behaves as the Map it replaces for get, has, set, delete and size', () => {
    const t = new StreamTable<string>();
    assert.equal(t.size, 0);
    t.set(1, 'a').set(3, 'b');
    assert.equal(t.size, 2);
    assert.equal(t.get(3), 'b');
    assert.equal(t.has(1), true);
    assert.equal(t.delete(1), true);
    assert.equal(t.delete(1), false, 'a second delete finds nothing');
    assert.equal(t.delete(99), false);
    assert.equal(t.has(1), false);
    assert.equal(t.get(1), undefined);
    assert.equal(t.size, 1);
    t.set(1, 'again');
    assert.equal(t.size, 2, 'an id set again after its delete counts once');
    t.set(1, 'replaced');
    assert.equal(t.size, 2, 'replacing a live entry does not count it twice');
    assert.equal(t.get(1), 'replaced');
  });

  it('visits only live entries, in insertion order, and lets the callback delete', () => {
    const t = new StreamTable<string>();
    for (const id of [1, 3, 5, 7]) t.set(id, `s${id}`);
    t.delete(3);
    const seen: Array<[number, string]> = [];
    t.forEach((v, id, table) => {
      seen.push([id, v]);
      table.delete(id); // what session.destroy() does to each stream it destroys
    });
    assert.deepEqual(seen, [[1, 's1'], [5, 's5'], [7, 's7']]);
    assert.equal(t.size, 0);
  });

  it('keeps every live entry across the compaction that drops the tombstones', () => {
    const t = new StreamTable<number>();
    const live = [1, 3, 5];
    for (const id of live) t.set(id, id);
    let next = 7;
    for (let i = 0; i < COMPACT_AFTER * 2 + 5; i++) {
      t.set(next, next);
      assert.equal(t.delete(next), true);
      next += 2;
    }
    assert.equal(t.size, live.length);
    for (const id of live) assert.equal(t.get(id), id);
    const seen: number[] = [];
    t.forEach((v) => seen.push(v));
    assert.deepEqual(seen, live);
  });
});

describe('PendingStreams', () => {
  it('is the Set it replaces for add, delete, size and forEach', () => {
    const a = { id: 'a' }, b = { id: 'b' }, c = { id: 'c' };
    const set = new PendingStreams<{ id: string }>();
    set.add(a).add(b).add(a).add(c);
    assert.equal(set.size, 3, 'a second add of the same stream counts once');
    assert.equal(set.delete(a), true);
    assert.equal(set.delete(a), false);
    assert.equal(set.size, 2);
    const seen: string[] = [];
    set.forEach((v, again, s) => {
      assert.equal(v, again);
      seen.push(v.id);
      s.delete(v); // what destroying a pending stream does
    });
    assert.deepEqual(seen.sort(), ['b', 'c']);
    assert.equal(set.size, 0);
  });
});

describe('the Map and Set surface Node does not use today', () => {
  it('StreamTable iterates, lists and clears only live entries', () => {
    const t = new StreamTable<string>();
    for (const id of [1, 3, 5]) t.set(id, `s${id}`);
    t.delete(3);
    assert.deepEqual([...t], [[1, 's1'], [5, 's5']]);
    assert.deepEqual([...t.entries()], [[1, 's1'], [5, 's5']]);
    assert.deepEqual([...t.keys()], [1, 5]);
    assert.deepEqual([...t.values()], ['s1', 's5']);
    t.clear();
    assert.equal(t.size, 0);
    assert.deepEqual([...t], []);
    t.set(3, 'back');
    assert.deepEqual([...t], [[3, 'back']]);
  });

  it('PendingStreams answers has, iterates over a snapshot and clears', () => {
    const a = { id: 'a' }, b = { id: 'b' };
    const set = new PendingStreams<{ id: string }>();
    set.add(a).add(b);
    assert.equal(set.has(a), true);
    const seen: string[] = [];
    for (const v of set) {
      seen.push(v.id);
      set.delete(v);
    }
    assert.deepEqual(seen, ['a', 'b'], 'deleting while iterating skips nothing');
    set.add(a);
    set.clear();
    assert.equal(set.size, 0);
    assert.equal(set.has(a), false);
  });
});

describe('probeStreamState', () => {
  const state = Symbol('state');
  const cases: Array<[string, object, string]> = [
    ['no state symbol', {}, '0 own symbol properties described "state"'],
    ['two state symbols', { [state]: {}, [Symbol('state')]: {} }, '2 own symbol properties'],
    ['a state that is no object', { [state]: 1 }, 'not an object'],
    ['streams no Map', { [state]: { streams: {}, pendingStreams: new Set() } }, 'state.streams is not a Map'],
    ['pendingStreams no Set', { [state]: { streams: new Map(), pendingStreams: [] } }, 'state.pendingStreams is not a Set'],
    ['streams already open', { [state]: { streams: new Map([[1, {}]]), pendingStreams: new Set() } }, 'already has streams'],
  ];
  for (const [name, session, reason] of cases) {
    it(`leaves a session alone when it finds ${name}`, () => {
      const probe = probeStreamState(session);
      assert.equal(probe.kind, 'unknown');
      assert.match((probe as { reason: string }).reason, new RegExp(reason));
    });
  }

  it('finds the Node 20 layout, and the tables once they are in place', () => {
    const inner = { streams: new Map(), pendingStreams: new Set(), other: 1 };
    const session = { [Symbol('state')]: inner, [Symbol('type')]: 0 };
    assert.deepEqual(probeStreamState(session), { kind: 'found', state: inner });
    inner.streams = new StreamTable() as unknown as Map<never, never>;
    inner.pendingStreams = new PendingStreams() as unknown as Set<never>;
    assert.deepEqual(probeStreamState(session), { kind: 'installed' });
  });
});

describe('installStreamTables on Node HTTP/2 sessions', () => {
  it('takes over both sessions on this Node, whose requests then complete and which close cleanly', async () => {
    const logged: string[] = [];
    const install = streamTableInstaller(probeStreamState, (r) => logged.push(r));
    const installed: boolean[] = [];
    await withH2Loopback(async ({ client, post }) => {
      installed.push(install(client));
      installed.push(install(client)); // already replaced: left alone
      // The first round is requested before the session connects: every stream waits in the
      // pending set, then moves to the table.
      // Enough streams, many at a time, to take the tables through a compaction.
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all(Array.from({ length: COMPACT_AFTER / 4 }, (_, i) => post('x'.repeat(i % 7))));
        answers.forEach((a, i) => assert.equal(a, `POST ${i % 7}`));
      }
      assert.equal(probeStreamState(client).kind, 'installed');
    }, (s) => installed.push(install(s)));
    // The close in withH2Loopback only completes once the table reports no open stream.
    assert.deepEqual(installed, [true, false, true], 'client installed once, then the server session');
    assert.deepEqual(logged, [], 'no fallback on this Node');
  });

  it('leaves sessions with Node\'s own Map where the probe does not recognise the layout, logging that once', async () => {
    const logged: string[] = [];
    // A Node whose session state looks otherwise, as the probe would report it.
    const install = streamTableInstaller(() => ({ kind: 'unknown', reason: 'state.streams is not a Map' }), (r) => logged.push(r));
    await withH2Loopback(async ({ client, post }) => {
      assert.equal(install(client), false);
      assert.equal(probeStreamState(client).kind, 'found', 'the session was left as Node made it');
      const answers = await Promise.all(Array.from({ length: 64 }, (_, i) => post('x'.repeat(i % 7))));
      answers.forEach((a, i) => assert.equal(a, `POST ${i % 7}`));
      assert.notEqual(probeStreamState(client).kind, 'installed', 'Node\'s own Map and Set are still in place');
    }, (s) => assert.equal(install(s), false));
    assert.deepEqual(logged, ['state.streams is not a Map'], 'two sessions left alone, one log line');
  });
});
