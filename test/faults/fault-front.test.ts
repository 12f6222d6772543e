/**
 * The fault front in front of a simulator: each request fault, watch drops, the admin
 * endpoint, and what stays untouched. Fractions of 1 make every decision deterministic.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createFaultInjector, FAULTS_ADMIN_PATH, type FaultInjector } from '../../src/sim/faults/index.js';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import { node } from '../controller/harness.js';
import { settle, turns } from '../support/mock-clock.js';

describe('fault front', () => {
  let sim: Simulator;
  let faults: FaultInjector;
  let auth: Record<string, string>;
  const get = (path: string, headers: Record<string, string> = auth) => fetch(`${sim.url}${path}`, { headers });

  before(async () => {
    faults = createFaultInjector({ seed: 3 });
    sim = await startSimulator({ insecureHttp: true, faultInjection: faults });
    auth = { authorization: `Bearer ${sim.token}` };
    sim.store.create('nodes', node('node-a'));
  });
  after(() => sim.stop());

  it('serves everything untouched with no faults', async () => {
    faults.set('none');
    const r = await get('/api/v1/nodes');
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { items: unknown[] }).items.length, 1);
  });

  it('answers 429 with a Retry-After header and a TooManyRequests Status', async () => {
    faults.set('error429=1:retry-after=7');
    const r = await get('/api/v1/nodes/node-a');
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '7');
    const body = (await r.json()) as { kind: string; reason: string; details: { retryAfterSeconds: number } };
    assert.deepEqual([body.kind, body.reason, body.details.retryAfterSeconds], ['Status', 'TooManyRequests', 7]);
  });

  it('answers 500, and with committed=1 serves a write before failing it', async () => {
    faults.set('error500=1:committed=0');
    assert.equal((await get('/api/v1/nodes')).status, 500);
    faults.set('error500=1:committed=1');
    const r = await fetch(`${sim.url}/api/v1/namespaces/default/persistentvolumeclaims`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'committed' }, spec: {} }),
    });
    assert.equal(r.status, 500);
    assert.ok(sim.store.get('persistentvolumeclaims', 'default', 'committed'), 'the write happened although the client got a 500');
  });

  it('answers 409 on node status writes only', async () => {
    faults.set('conflict-node-status=1');
    const patch = (path: string) => fetch(`${sim.url}${path}`, { method: 'PATCH', headers: { ...auth, 'content-type': 'application/merge-patch+json' }, body: '{"metadata":{"labels":{"x":"y"}}}' });
    assert.equal((await patch('/api/v1/nodes/node-a/status')).status, 409);
    assert.equal((await patch('/api/v1/nodes/node-a')).status, 200);
    assert.equal((await get('/api/v1/nodes/node-a')).status, 200);
  });

  it('answers 410 on lists, and a 200 stream holding one ERROR event on watches', async () => {
    faults.set('gone=1');
    const list = await get('/api/v1/nodes');
    assert.equal(list.status, 410);
    assert.equal(((await list.json()) as { reason: string }).reason, 'Expired');
    const watch = await get('/api/v1/nodes?watch=1&resourceVersion=1');
    assert.equal(watch.status, 200);
    const ev = JSON.parse((await watch.text()).trim()) as { type: string; object: { code: number } };
    assert.deepEqual([ev.type, ev.object.code], ['ERROR', 410]);
    assert.equal((await get('/api/v1/nodes/node-a')).status, 200, 'gets are not lists');
  });

  it('cuts open watch streams after a random lifetime, abruptly or cleanly', async () => {
    faults.set('drop-watch=50ms');
    const before = faults.counts()['drop-watch'];
    const outcomes = await Promise.all(Array.from({ length: 8 }, async () => {
      const r = await get('/api/v1/nodes?watch=1');
      assert.equal(r.status, 200);
      try {
        await r.text();
        return 'clean';
      } catch {
        return 'reset';
      }
    }));
    assert.equal(faults.counts()['drop-watch'] - before, 8);
    assert.deepEqual([...new Set(outcomes)].sort(), ['clean', 'reset']);
    faults.set('none');
  });

  it('adds latency to resource requests', async (t) => {
    faults.set('latency=150ms..200ms');
    // The front's wait is the test's to end: the timer it sets for the latency it drew is held
    // (every other timer runs as usual; timers are not mocked wholesale, since a clearTimeout of
    // the front's earlier real timers would then miss them). The request is decided and served
    // only once that timer ends.
    const drawn = t.mock.method(faults, 'latencyMs');
    const decided = t.mock.method(faults, 'decide');
    const real = globalThis.setTimeout;
    let held: { ms: number; fire: () => void } | undefined;
    globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
      if (held === undefined && drawn.mock.callCount() === 1 && ms === drawn.mock.calls[0]!.result) {
        held = { ms: ms as number, fire: () => fn(...args) };
        return real(() => {}, 0);
      }
      return real(fn, ms, ...args);
    }) as typeof setTimeout;
    try {
      const res = get('/api/v1/nodes');
      await settle('the request waiting on its latency', () => held !== undefined);
      assert.ok(held!.ms >= 150 && held!.ms <= 200, `waits ${held!.ms} ms`);
      await turns();
      assert.equal(decided.mock.callCount(), 0, 'served before its latency');
      held!.fire();
      assert.equal((await res).status, 200);
      assert.equal(decided.mock.callCount(), 1);
      assert.equal(drawn.mock.callCount(), 1, 'one wait per request');
    } finally {
      globalThis.setTimeout = real;
    }
    faults.set('none');
  });

  it('leaves discovery, health and unauthenticated requests alone', async () => {
    faults.set('error500=1,gone=1');
    assert.equal((await get('/api')).status, 200);
    assert.equal((await get('/healthz', {})).status, 200);
    assert.equal((await get('/api/v1/nodes', {})).status, 401);
    faults.set('none');
  });

  it('serves the admin endpoint: read, change, refuse a bad spec or a missing token', async () => {
    const post = (body: string, type = 'text/plain', headers = auth) => fetch(`${sim.url}${FAULTS_ADMIN_PATH}`, { method: 'POST', headers: { ...headers, 'content-type': type }, body });
    let r = await post('error500=0.5,latency=1ms..2ms');
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { spec: string }).spec, 'error500=0.5:committed=0.5,latency=1ms..2ms');
    r = await post(JSON.stringify({ spec: 'none' }), 'application/json');
    assert.equal(((await r.json()) as { spec: string }).spec, 'none');
    r = await post('error500=7');
    assert.equal(r.status, 400);
    assert.match(((await r.json()) as { message: string }).message, /error500=7/);
    assert.equal((await post('none', 'text/plain', {})).status, 401);
    r = await get(FAULTS_ADMIN_PATH);
    const state = (await r.json()) as { spec: string; counts: Record<string, number> };
    assert.equal(state.spec, 'none');
    assert.ok(state.counts.error500 >= 1 && state.counts.error429 >= 1 && state.counts.gone >= 2);
  });
});
