import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDashboardModel } from '../../src/dashboard/dashboard-model.js';
import { REASON_CODES } from '../../src/dashboard/reason-codes.js';
import { buildServer } from '../../src/http/server.js';
import { createFleet, csiName } from '../http/fleet-fixture.js';

function setup() {
  const f = createFleet();
  const model = createDashboardModel({ state: f.state, view: f.view });
  const app = buildServer({ state: f.state, view: f.view, metrics: f.metrics, listenHost: '127.0.0.1', dashboard: model });
  const get = async (url: string) => {
    const r = await app.inject({ method: 'GET', url });
    return { status: r.statusCode, json: r.json() };
  };
  return { f, model, get, close: async () => { await app.close(); await f.close(); } };
}

describe('dashboard routes', () => {
  it('/api/v1/reasons lists the vocabulary', async () => {
    const s = setup();
    const r = await s.get('/api/v1/reasons');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.items.map((i: { code: string }) => i.code), [...REASON_CODES]);
    assert.deepEqual(r.json.items.find((i: { code: string }) => i.code === 'mounted-node-healthy'), {
      code: 'mounted-node-healthy', side: 'detach', title: 'Still mounted on a healthy node (never forced)', rule: ['F6'],
    });
    await s.close();
  });

  it('/api/v1/dashboard, /not-converged and the pair views share reasons and sentences', async () => {
    const s = setup();
    const { f } = s;
    const v = f.volume('rwo');
    const a = f.node('node-a', { inUse: [csiName('rwo')] });
    const b = f.node('node-b');
    f.attach(v, a);
    f.want(v, b, 'uid-1', { namespace: 'shop', name: 'web-0' });
    s.model.index.sweepNow();

    const d = (await s.get('/api/v1/dashboard')).json;
    assert.deepEqual(d.tiles.notConverged, { total: 2, attach: 1, detach: 1 });
    assert.equal(d.tiles.conflicts, 1);
    assert.deepEqual(d.tiles.nodes, { total: 2, ready: 2, notReady: 0, outOfService: 0 });
    assert.deepEqual(d.byReason.map((r: { code: string }) => r.code).sort(), ['mounted-node-healthy', 'multi-attach']);
    assert.deepEqual(d.ageHistogram, { lt10s: 2, lt1m: 0, lt6m: 0, ge6m: 0 });

    const w = (await s.get('/api/v1/not-converged?side=attach')).json;
    assert.equal(w.total, 1);
    const [item] = w.items;
    assert.equal(item.reason, 'multi-attach');
    assert.equal(item.namespace, 'shop');
    assert.equal(item.driver, 'ebs.csi.aws.com');
    assert.deepEqual(item.rule, ['G3', 'H1']);
    const node = (await s.get('/api/v1/nodes/node-b')).json;
    assert.equal(node.volumes[0].waitingFor, item.waitingFor);
    assert.equal(node.volumes[0].reason, 'multi-attach');
    assert.match(item.waitingFor, /; detach from node-a: still mounted, node healthy, will not force$/);
    assert.match(item.etaWhy, /never forced on a healthy node/);

    const groups = (await s.get('/api/v1/not-converged?groupBy=reason')).json;
    assert.equal(groups.groups.length, 2);
    assert.equal((await s.get('/api/v1/not-converged?limit=501')).status, 400);
    assert.equal((await s.get('/api/v1/not-converged?reason=nope')).status, 400);

    const c = (await s.get('/api/v1/conflicts')).json.items[0];
    assert.equal(c.reason, 'multi-attach');
    assert.equal(c.class, 'rollout-race', 'holder healthy, no pod there, timer under a minute');
    assert.deepEqual(c.holder, {
      node: 'node-a', healthy: true, outOfService: false, mounted: true, desired: false, podCount: 0, reason: 'mounted-node-healthy',
      detachWhyNot: 'waits for the kubelet to unmount; never forced on a healthy node',
    });
    await s.close();
  });

  it('conflict classes follow the holder side', async () => {
    const s = setup();
    const { f } = s;
    const v = f.volume('rwo');
    const a = f.node('node-a', { healthy: false, inUse: [csiName('rwo')] });
    const b = f.node('node-b');
    f.attach(v, a);
    f.want(v, b, 'uid-1');
    let c = (await s.get('/api/v1/conflicts')).json.items[0];
    assert.equal(c.class, 'holder-node-down');
    assert.equal(c.holder.detachInMs, 360_000);
    f.state.setNodeHealthy(a, true);
    f.want(v, a, 'uid-0');
    c = (await s.get('/api/v1/conflicts')).json.items[0];
    assert.equal(c.class, 'two-live-consumers');
    await s.close();
  });

  it('history, timeline (encoded and raw) and search', async () => {
    const s = setup();
    const { f, model } = s;
    const v = f.volume('h1');
    f.node('node-a');
    f.node('node-b');
    model.sample();
    f.view.advance(1000);
    model.sample();
    const h = (await s.get('/api/v1/history?range=15m&points=900')).json;
    assert.equal(h.t.length, 2);
    assert.deepEqual(Object.keys(h.series).sort(), ['attached', 'backoff', 'conflicts', 'desired', 'notConverged', 'pending']);
    assert.equal((await s.get('/api/v1/history?range=2d')).status, 400);

    const name = f.state.volumeName(v);
    model.observer.observe({ kind: 'attach-started', volume: name, node: 'node-a' });
    model.observer.observe({ kind: 'detach-started', volume: name, node: 'node-a', forced: 'out-of-service' });
    const encoded = (await s.get(`/api/v1/volumes/${encodeURIComponent(name)}/timeline`)).json;
    assert.deepEqual(encoded.items.map((e: { kind: string }) => e.kind), ['attach-started', 'detach-started']);
    const raw = await s.get(`/api/v1/volumes/${name}/timeline`);
    assert.equal(raw.status, 200);
    assert.deepEqual(raw.json.items, encoded.items);
    assert.equal((await s.get(`/api/v1/volumes/${name}`)).json.name, name, 'the raw volume detail still answers');
    assert.equal((await s.get('/api/v1/volumes/nope/timeline')).status, 404);
    const d = (await s.get('/api/v1/dashboard')).json;
    assert.deepEqual(d.tiles.forcedDetachesLastHour, { timeout: 0, outOfService: 1 });
    assert.ok((await s.get('/api/v1/history')).json.annotations.some((a: { kind: string }) => a.kind === 'forced-detach'));

    const found = (await s.get('/api/v1/search?q=node-')).json;
    assert.deepEqual(found.nodes.map((n: { name: string }) => n.name), ['node-a', 'node-b']);
    assert.deepEqual((await s.get('/api/v1/search?q=kubernetes.io/csi/')).json.volumes.map((x: { name: string }) => x.name), [name]);
    assert.deepEqual((await s.get('/api/v1/search?q=pv-h1')).json.volumes.map((x: { name: string }) => x.name), [name]);
    await s.close();
  });
});
