/** The committed-write log: records, attribution, the ring's bounds, and its HTTP path. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import fc from 'fast-check';
import { createSimStore } from '../../src/sim/store/index.js';
import { createWriteLog, SIMULATOR_USER } from '../../src/sim/server/write-log.js';
import { raw, withSim } from './sim-helpers.js';

const node = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name } });
const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [] } });

test('every commit is recorded in order with its writer; a request write is attributed once, reactions to it are the simulator\'s', () => {
  const store = createSimStore({ namespaces: [] });
  const log = createWriteLog({ store, capacity: 100 });
  // An actor-like subscriber that reacts to a pod's creation with a write of its own.
  store.subscribe((ev) => {
    if (ev.type === 'ADDED' && ev.resource === 'pods') store.create('nodes', node(`for-${ev.name}`));
  });
  log.attribute('replica-a', 'create', undefined, () => store.create('pods', pod('p')));
  log.attribute('replica-b', 'patch', 'status', () => store.mutate('nodes', undefined, 'for-p', (o) => void (o.status = { phase: 'x' })));
  log.attribute('replica-b', 'update', undefined, () => store.mutate('nodes', undefined, 'for-p', () => undefined)); // a no-op commits nothing
  store.delete('pods', 'default', 'p');
  const recs = log.since(0);
  assert.deepEqual(recs.map((r) => [r.rv, r.type, r.verb, r.resource, r.namespace ?? null, r.name, r.subresource ?? null, r.user]), [
    [1, 'ADDED', 'create', 'pods', 'default', 'p', null, 'replica-a'],
    [2, 'ADDED', 'create', 'nodes', null, 'for-p', null, SIMULATOR_USER],
    [3, 'MODIFIED', 'patch', 'nodes', null, 'for-p', 'status', 'replica-b'],
    [4, 'DELETED', 'delete', 'pods', 'default', 'p', null, SIMULATOR_USER],
  ]);
  assert.deepEqual(log.since(2).map((r) => r.rv), [3, 4]);
  assert.deepEqual(log.since(1, 1).map((r) => r.rv), [2]);
  log.refused('replica-a', 409);
  log.refused('replica-a', 409);
  log.refused('replica-b', 422);
  assert.deepEqual(log.refusals(), { 'replica-a': { 409: 2 }, 'replica-b': { 422: 1 } });
  log.close();
});

test('the ring keeps the newest records within its count and its name bytes (model: the last records that fit)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 20 }), fc.array(fc.string({ minLength: 1, maxLength: 12 }).map((s) => s.toLowerCase().replace(/[^a-z0-9]/g, 'x')), { minLength: 1, maxLength: 120 }), (capacity, names) => {
      const store = createSimStore({ namespaces: [] });
      const log = createWriteLog({ store, capacity, nameBytesPerRecord: 1 }); // the arena's floor: 4096 bytes
      const written: Array<{ rv: number; name: string }> = [];
      names.forEach((n, i) => {
        const name = `${n}-${i}`;
        store.create('nodes', node(name));
        written.push({ rv: store.resourceVersion(), name });
      });
      const kept = log.since(0);
      const expected = written.slice(-Math.min(capacity, written.length));
      assert.deepEqual(kept.map((r) => [r.rv, r.name]), expected.map((w) => [w.rv, w.name]));
      assert.equal(log.dropped(), written.length - kept.length);
      assert.equal(log.oldestRv(), expected[0].rv);
      log.close();
    }),
  );
});

test('names past the name ring evict the oldest records, and what is kept still reads back whole', () => {
  const store = createSimStore({ namespaces: [] });
  const log = createWriteLog({ store, capacity: 1000, nameBytesPerRecord: 1 }); // 4096 name bytes
  const long = (i: number) => `${String(i).padStart(4, '0')}-${'x'.repeat(95)}`; // 100 bytes each
  for (let i = 0; i < 200; i++) store.create('nodes', node(long(i)));
  const kept = log.since(0);
  assert.ok(kept.length >= 39 && kept.length <= 41, `about 4096/100 records kept, got ${kept.length}`);
  assert.deepEqual(kept.map((r) => r.name), kept.map((_, j) => long(200 - kept.length + j)));
  log.close();
});

test('over HTTP: users by token, JSON lines after a resourceVersion, refusals by user', () =>
  withSim({ users: [{ name: 'replica-a', token: 'token-a' }, { name: 'replica-b', token: 'token-b' }], writeLog: { capacity: 1000 } }, async (sim) => {
    const start = sim.store.resourceVersion();
    const a = await raw(sim, 'POST', '/api/v1/nodes', { token: 'token-a', body: JSON.stringify(node('n1')) });
    assert.equal(a.status, 201);
    const stale = (a.json().metadata as { resourceVersion: string }).resourceVersion;
    assert.equal((await raw(sim, 'PATCH', '/api/v1/nodes/n1', { token: 'token-b', contentType: 'application/merge-patch+json', body: '{"metadata":{"labels":{"owner":"b"}}}' })).status, 200);
    const refused = await raw(sim, 'PATCH', '/api/v1/nodes/n1', { token: 'token-a', contentType: 'application/merge-patch+json', body: JSON.stringify({ metadata: { resourceVersion: stale, labels: { owner: 'a' } } }) });
    assert.equal(refused.status, 409);
    assert.equal((await raw(sim, 'DELETE', '/api/v1/nodes/n1')).status, 200);
    const page = await raw(sim, 'GET', `/debug/write-log?since=${start}`);
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-type'], 'application/x-ndjson');
    const lines = page.body.trim().split('\n').map((l) => JSON.parse(l) as { rv: number; verb: string; user: string; name: string });
    assert.deepEqual(lines.map((r) => [r.verb, r.user, r.name]), [['create', 'replica-a', 'n1'], ['patch', 'replica-b', 'n1'], ['delete', 'fleet-attach', 'n1']]);
    assert.deepEqual(lines.map((r) => r.rv), [start + 1, start + 2, start + 3]);
    const paged = await raw(sim, 'GET', `/debug/write-log?since=${start + 1}&limit=1`);
    assert.equal(JSON.parse(paged.body.trim()).rv, start + 2);
    assert.deepEqual((await raw(sim, 'GET', '/debug/write-log/refusals')).json(), { 'replica-a': { 409: 1 } });
    assert.equal((await raw(sim, 'GET', '/debug/write-log', { token: null })).status, 401, 'the debug paths need authentication');
    assert.equal((await raw(sim, 'GET', '/api/v1/nodes', { token: 'wrong' })).status, 401);
  }));

test('a client-node client from kubeconfigFor acts as its user', () =>
  withSim({ users: [{ name: 'replica-a', token: 'token-a' }], writeLog: true }, async (sim) => {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(sim.kubeconfigFor('replica-a'));
    const api = kc.makeApiClient(k8s.CoreV1Api);
    const start = sim.store.resourceVersion();
    await api.createNode({ body: node('from-a') });
    assert.deepEqual(sim.writeLog?.since(start).map((r) => [r.user, r.verb, r.name]), [['replica-a', 'create', 'from-a']]);
    assert.throws(() => sim.kubeconfigFor('nobody'));
  }));

test('without the option there is no write log', () =>
  withSim({}, async (sim) => {
    assert.equal(sim.writeLog, undefined);
    assert.equal((await raw(sim, 'GET', '/debug/write-log')).status, 404);
  }));
