/** Per-client faults: one replica partitioned (denied, black-holed, delayed) while the others carry on. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { Simulator } from '../../src/sim/server/index.js';
import { parseClientFaultRule } from '../../src/sim/server/client-faults.js';
import { raw, until, withSim } from './sim-helpers.js';

const USERS = [{ name: 'replica-a', token: 'token-a' }, { name: 'replica-b', token: 'token-b' }];
const node = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name } });

interface OpenWatch { frames: Array<{ type: string; object: { metadata: { name: string } } }>; ended: boolean; close(): void }

function openWatch(sim: Simulator, token: string, path: string): OpenWatch {
  const w: OpenWatch = { frames: [], ended: false, close: () => req.destroy() };
  const req = https.request(new URL(path, sim.url), { headers: { authorization: `Bearer ${token}` }, ca: sim.caPem, agent: false }, (res) => {
    let buf = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => {
      buf += c;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) w.frames.push(JSON.parse(line));
      }
    });
    res.on('end', () => (w.ended = true));
    res.on('close', () => (w.ended = true));
  });
  req.on('error', () => (w.ended = true));
  req.end();
  return w;
}

test('deny: the user\'s requests get the status, its watches end, other users are served', () =>
  withSim({ users: USERS }, async (sim) => {
    const rv = sim.store.resourceVersion();
    const w = openWatch(sim, 'token-a', `/api/v1/nodes?watch=true&resourceVersion=${rv}`);
    await until('watch open', () => sim.server.watchCount() === 1);
    sim.clientFaults.set({ user: 'replica-a', action: { kind: 'deny', code: 503 } });
    await until('the denied watch ends', () => w.ended);
    const denied = await raw(sim, 'GET', '/api/v1/nodes', { token: 'token-a' });
    assert.equal(denied.status, 503);
    assert.equal(denied.json().reason, 'ServiceUnavailable');
    assert.equal((await raw(sim, 'POST', '/api/v1/nodes', { token: 'token-b', body: node('b1') })).status, 201);
    sim.clientFaults.clear({ user: 'replica-a' });
    assert.equal((await raw(sim, 'GET', '/api/v1/nodes', { token: 'token-a' })).status, 200);
  }));

test('black hole: a request is held until the rule is lifted, then served; a watch gets nothing meanwhile, then ends', () =>
  withSim({ users: USERS }, async (sim) => {
    const rv = sim.store.resourceVersion();
    const w = openWatch(sim, 'token-a', `/api/v1/nodes?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`);
    await until('watch open', () => sim.server.watchCount() === 1);
    sim.clientFaults.set({ user: 'replica-a', action: { kind: 'blackhole' } });
    let answered = false;
    const held = raw(sim, 'POST', '/api/v1/nodes', { token: 'token-a', body: node('late') }).then((r) => {
      answered = true;
      return r;
    });
    // Another user's writes commit and the partitioned watch must not see them.
    for (let i = 0; i < 3; i++) assert.equal((await raw(sim, 'POST', '/api/v1/nodes', { token: 'token-b', body: node(`b${i}`) })).status, 201);
    // The other user's answers went through the same loop turns as the held request would have.
    assert.equal(answered, false);
    assert.equal(sim.store.get('nodes', undefined, 'late'), undefined, 'the held write is not committed');
    assert.deepEqual(w.frames, []);
    assert.equal(w.ended, false, 'held, not ended');
    sim.clientFaults.clear();
    const r = await held;
    assert.equal(r.status, 201, 'served once the partition heals');
    await until('the held watch ends so the client resumes', () => w.ended);
    assert.deepEqual(w.frames, [], 'nothing was delivered while held');
  }));

test('a user-agent rule matches by substring; a delay still serves', () =>
  withSim({ users: USERS }, async (sim) => {
    sim.clientFaults.set({ userAgent: 'replica-x/', action: { kind: 'deny', code: 429 } });
    assert.equal(sim.clientFaults.actionFor({ user: 'anyone', userAgent: 'fleet-attach replica-x/1.0' })?.kind, 'deny');
    assert.equal(sim.clientFaults.actionFor({ user: 'anyone', userAgent: 'kubectl/v1' }), undefined);
    sim.clientFaults.set({ user: 'replica-b', action: { kind: 'delay', ms: 5 } });
    assert.equal((await raw(sim, 'GET', '/api/v1/nodes', { token: 'token-b' })).status, 200);
    assert.deepEqual(sim.clientFaults.rules().map((r) => r.action.kind), ['deny', 'delay']);
  }));

test('over HTTP: POST /debug/faults sets rules, GET lists them, DELETE clears; bad rules are 400', () =>
  withSim({ users: USERS }, async (sim) => {
    const set = await raw(sim, 'POST', '/debug/faults', { body: JSON.stringify({ rules: [{ user: 'replica-a', action: { kind: 'deny', code: 500 } }] }) });
    assert.equal(set.status, 200);
    assert.equal((await raw(sim, 'GET', '/api/v1/nodes', { token: 'token-a' })).status, 500);
    assert.deepEqual((await raw(sim, 'GET', '/debug/faults')).json(), { rules: [{ user: 'replica-a', action: { kind: 'deny', code: 500 } }] });
    assert.equal((await raw(sim, 'POST', '/debug/faults', { body: JSON.stringify({ action: { kind: 'blackhole' } }) })).status, 400);
    assert.equal((await raw(sim, 'POST', '/debug/faults', { body: JSON.stringify({ user: 'x', action: { kind: 'deny', code: 200 } }) })).status, 400);
    assert.equal((await raw(sim, 'DELETE', '/debug/faults?user=replica-a')).status, 200);
    assert.equal((await raw(sim, 'GET', '/api/v1/nodes', { token: 'token-a' })).status, 200);
    // The debug paths themselves are never partitioned: a black-holed user can still lift its rule.
    await raw(sim, 'POST', '/debug/faults', { body: JSON.stringify({ user: 'replica-a', action: { kind: 'blackhole' } }) });
    assert.equal((await raw(sim, 'DELETE', '/debug/faults', { token: 'token-a' })).status, 200);
    assert.deepEqual(sim.clientFaults.rules(), []);
  }));

test('parseClientFaultRule keeps only what a rule means', () => {
  assert.deepEqual(parseClientFaultRule({ user: 'u', userAgent: '', action: { kind: 'delay', ms: 10, extra: 1 } }), { user: 'u', action: { kind: 'delay', ms: 10 } });
  assert.throws(() => parseClientFaultRule({ user: 'u', action: { kind: 'delay', ms: -1 } }));
});
