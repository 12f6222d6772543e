/**
 * The lag client fault over HTTPS: one replica's watch streams trail the others'. Times are
 * only ever checked from below (a frame arrives no sooner than the lag after its commit).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { Simulator } from '../../src/sim/server/index.js';
import { raw, until, withSim } from './sim-helpers.js';

const USERS = [{ name: 'replica-a', token: 'token-a' }, { name: 'replica-b', token: 'token-b' }];
const LAG_MS = 600;
/** Slack between the commit and the test seeing the write's answer. */
const SLACK_MS = 100;
const node = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name } });

interface Frame {
  type: string;
  name: string;
  at: number;
}
interface OpenWatch {
  frames: Frame[];
  ended: boolean;
  names(): string[];
  close(): void;
}

function openWatch(sim: Simulator, token: string, path: string): OpenWatch {
  const w: OpenWatch = { frames: [], ended: false, names: () => w.frames.filter((f) => f.type !== 'BOOKMARK').map((f) => f.name), close: () => req.destroy() };
  const req = https.request(new URL(path, sim.url), { headers: { authorization: `Bearer ${token}` }, ca: sim.caPem, agent: false }, (res) => {
    let buf = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => {
      buf += c;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.trim()) continue;
        const ev = JSON.parse(line) as { type: string; object: { metadata: { name?: string } } };
        w.frames.push({ type: ev.type, name: ev.object.metadata.name ?? '', at: performance.now() });
      }
    });
    res.on('close', () => (w.ended = true));
  });
  req.on('error', () => (w.ended = true));
  req.end();
  return w;
}

/** Creates a node as replica-b; resolves to when its answer arrived (after the commit). */
async function create(sim: Simulator, name: string): Promise<number> {
  const r = await raw(sim, 'POST', '/api/v1/nodes', { token: 'token-b', body: node(name) });
  assert.equal(r.status, 201, r.body);
  return performance.now();
}

const arrival = (w: OpenWatch, name: string) => w.frames.find((f) => f.name === name)?.at;

test('a lagged client sees each event no sooner than the lag after its commit, in order; another client sees it first', () =>
  withSim({ users: USERS }, async (sim) => {
    const rv = sim.store.resourceVersion();
    const path = `/api/v1/nodes?watch=true&resourceVersion=${rv}`;
    const a = openWatch(sim, 'token-a', path);
    const b = openWatch(sim, 'token-b', path);
    await until('watches open', () => sim.server.watchCount() === 2);
    sim.clientFaults.set({ user: 'replica-a', action: { kind: 'lag', ms: LAG_MS } });
    // Requests of the lagged client are served as usual.
    assert.equal((await raw(sim, 'GET', '/api/v1/nodes', { token: 'token-a' })).status, 200);
    const committed = new Map<string, number>();
    for (const n of ['n1', 'n2', 'n3']) committed.set(n, await create(sim, n));
    await until('the other client has every event', () => b.names().length === 3);
    await until('the lagged client has every event', () => a.names().length === 3);
    assert.deepEqual(a.names(), ['n1', 'n2', 'n3']);
    assert.deepEqual(b.names(), ['n1', 'n2', 'n3']);
    for (const [n, at] of committed) {
      assert.ok((arrival(a, n) as number) - at >= LAG_MS - SLACK_MS, `${n} reached the lagged client ${(arrival(a, n) as number) - at} ms after its commit`);
      assert.ok((arrival(b, n) as number) <= (arrival(a, n) as number), `${n} reached the other client first`);
    }
    a.close();
    b.close();
  }));

test('a watch opened while the rule holds lags from its first frame: its replay and its bookmarks too', () =>
  withSim({ users: USERS, bookmarkIntervalMs: 50 }, async (sim) => {
    const rv = sim.store.resourceVersion();
    await create(sim, 'before');
    sim.clientFaults.set({ user: 'replica-a', action: { kind: 'lag', ms: LAG_MS } });
    const opened = performance.now();
    const a = openWatch(sim, 'token-a', `/api/v1/nodes?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`);
    await until('the replayed event and a bookmark', () => a.names().length === 1 && a.frames.some((f) => f.type === 'BOOKMARK'));
    assert.equal(a.frames[0].name, 'before', 'the replay comes first');
    assert.ok(a.frames[0].at - opened >= LAG_MS, `the first frame came ${a.frames[0].at - opened} ms after the watch began`);
    a.close();
  }));

test('lifting the rule delivers what waits at its due time, later events behind it, then live', () =>
  withSim({ users: USERS }, async (sim) => {
    const rv = sim.store.resourceVersion();
    const path = `/api/v1/nodes?watch=true&resourceVersion=${rv}`;
    const a = openWatch(sim, 'token-a', path);
    const b = openWatch(sim, 'token-b', path);
    await until('watches open', () => sim.server.watchCount() === 2);
    sim.clientFaults.set({ user: 'replica-a', action: { kind: 'lag', ms: LAG_MS } });
    const c1 = await create(sim, 'l1');
    sim.clientFaults.clear({ user: 'replica-a' });
    await create(sim, 'l2');
    await until('both lagged events', () => a.names().length === 2);
    assert.deepEqual(a.names(), ['l1', 'l2'], 'the event after the lift does not overtake the lagged one');
    assert.ok((arrival(a, 'l1') as number) - c1 >= LAG_MS - SLACK_MS, 'what was queued keeps its due time');
    await create(sim, 'l3');
    await until('the live event on both', () => a.names().length === 3 && b.names().length === 3);
    assert.deepEqual(a.names(), ['l1', 'l2', 'l3']);
    assert.equal(a.ended, false, 'lifting a lag does not end the stream');
    a.close();
    b.close();
  }));

test('over /debug/faults: a lag rule is set, listed and cleared; bad lags are 400', () =>
  withSim({ users: USERS }, async (sim) => {
    const set = await raw(sim, 'POST', '/debug/faults', { body: JSON.stringify({ user: 'replica-a', action: { kind: 'lag', ms: LAG_MS } }) });
    assert.equal(set.status, 200, set.body);
    assert.deepEqual((await raw(sim, 'GET', '/debug/faults')).json(), { rules: [{ user: 'replica-a', action: { kind: 'lag', ms: LAG_MS } }] });
    const a = openWatch(sim, 'token-a', `/api/v1/nodes?watch=true&resourceVersion=${sim.store.resourceVersion()}`);
    await until('watch open', () => sim.server.watchCount() === 1);
    const at = await create(sim, 'd1');
    await until('the lagged event', () => a.names().length === 1);
    assert.ok((arrival(a, 'd1') as number) - at >= LAG_MS - SLACK_MS);
    for (const ms of [-1, 'soon', 2 ** 31, null]) {
      const r = await raw(sim, 'POST', '/debug/faults', { body: JSON.stringify({ user: 'replica-a', action: { kind: 'lag', ms } }) });
      assert.equal(r.status, 400, `lag ${String(ms)}`);
    }
    assert.equal((await raw(sim, 'DELETE', '/debug/faults?user=replica-a')).status, 200);
    assert.deepEqual(sim.clientFaults.rules(), []);
    a.close();
  }));
