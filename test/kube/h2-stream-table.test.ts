import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { COMPACT_AFTER, PendingStreams, StreamTable, installStreamTables } from '../../src/kube/h2-stream-table.js';

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

describe('installStreamTables on Node HTTP/2 sessions', () => {
  it('takes over both sessions, whose requests then complete and which close cleanly', async () => {
    const installed: boolean[] = [];
    const server = http2.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (body += d));
      req.on('end', () => res.end(`${req.method} ${body.length}`));
    });
    server.on('session', (s: http2.ServerHttp2Session) => installed.push(installStreamTables(s)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const client = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      installed.push(installStreamTables(client));
      installed.push(installStreamTables(client)); // already replaced: left alone
      // The first round is requested before the session connects: every stream waits in the
      // pending set, then moves to the table.
      const call = (i: number) => new Promise<string>((resolve, reject) => {
        const s = client.request({ ':method': 'POST', ':path': `/${i}` });
        let text = '';
        s.setEncoding('utf8');
        s.on('data', (d: string) => (text += d));
        s.on('end', () => resolve(text));
        s.on('error', reject);
        s.end('x'.repeat(i % 7));
      });
      // Enough streams, many at a time, to take the tables through a compaction.
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all(Array.from({ length: COMPACT_AFTER / 4 }, (_, i) => call(i)));
        answers.forEach((a, i) => assert.equal(a, `POST ${i % 7}`));
      }
      assert.deepEqual(installed, [true, false, true], 'client installed once, then the server session');
      const closed = new Promise<void>((r) => client.once('close', r));
      client.close();
      await closed; // the session only closes once its table reports no open stream
    } finally {
      client.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
