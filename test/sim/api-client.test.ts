/** The simulated API server through @kubernetes/client-node 1.4 over HTTPS, with the generated kubeconfig. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { collectWatch, pod, raw, until, withSim } from './sim-helpers.js';

const codeOf = (err: unknown) => (err as { code?: number }).code;

test('list then watch from the list resourceVersion sees every change in commit order', () =>
  withSim({}, async (sim, kc) => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    for (let i = 0; i < 5; i++) await core.createNamespacedPod({ namespace: 'default', body: pod(`pre-${i}`) });
    const list = await core.listNamespacedPod({ namespace: 'default' });
    assert.equal(list.items.length, 5);
    const w = await collectWatch(kc, '/api/v1/namespaces/default/pods', { resourceVersion: list.metadata?.resourceVersion });
    const committed: string[] = [];
    const unsubscribe = sim.store.subscribe((ev) => {
      if (ev.resource === 'pods' && ev.namespace === 'default') committed.push(`${ev.type} ${ev.name} ${ev.rv}`);
    });
    // A mix of API writes and direct store writes (as the actors make them).
    for (let i = 0; i < 20; i++) {
      await core.createNamespacedPod({ namespace: 'default', body: pod(`p-${i}`) });
      sim.store.mutate('pods', 'default', `pre-${i % 5}`, (p) => { p.metadata.labels = { round: String(i) }; });
      if (i % 3 === 0) await core.deleteNamespacedPod({ namespace: 'default', name: `p-${i}` });
    }
    sim.store.create('pods', pod('other-ns', 'kube-system'));
    unsubscribe();
    await until('all events', () => w.events.length >= committed.length);
    w.stop();
    assert.deepEqual(w.events.map((e) => `${e.type} ${e.name} ${e.rv}`), committed);
    const rvs = w.events.map((e) => e.rv);
    assert.ok(rvs.every((rv, i) => i === 0 || rv > rvs[i - 1]), 'resourceVersions increase');
    assert.ok(rvs[0] > Number(list.metadata?.resourceVersion));
  }));

test('a watch from a resourceVersion older than the window gets an ERROR event with a 410 Status', () =>
  withSim({ watchWindow: 10 }, async (sim, kc) => {
    const start = sim.store.resourceVersion();
    for (let i = 0; i < 30; i++) sim.store.create('nodes', { metadata: { name: `n${i}` } });
    const w = await collectWatch(kc, '/api/v1/nodes', { resourceVersion: String(start) });
    await until('watch end', () => w.isDone());
    assert.equal(w.events.length, 1);
    assert.equal(w.events[0].type, 'ERROR');
    assert.equal(w.events[0].obj.code, 410);
    assert.equal(w.events[0].obj.kind, 'Status');
  }));

test('an informer that hits 410 Gone relists and ends with the right cache', () =>
  withSim({ watchWindow: 10 }, async (sim, kc) => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const staleRv = String(sim.store.resourceVersion());
    for (let i = 0; i < 30; i++) sim.store.create('nodes', { metadata: { name: `n${i}` } });
    let lists = 0;
    // The first list claims a resourceVersion that has left the window: the watch from it gets 410.
    const listFn = async () => {
      const l = await core.listNode();
      if (lists++ === 0) l.metadata = { ...l.metadata, resourceVersion: staleRv };
      return l;
    };
    const informer = k8s.makeInformer(kc, '/api/v1/nodes', listFn);
    const errors: unknown[] = [];
    informer.on('error', (e) => errors.push(e));
    await informer.start();
    try {
      await until('relist', () => lists >= 2);
      sim.store.create('nodes', { metadata: { name: 'after-relist' } });
      await until('informer sees the new node', () => informer.list().some((n) => n.metadata?.name === 'after-relist'));
      assert.equal(informer.list().length, 31);
      assert.deepEqual(errors, []);
    } finally {
      await informer.stop();
    }
  }));

test('bookmarks arrive when asked for and carry only a resourceVersion', () =>
  withSim({ bookmarkIntervalMs: 100 }, async (sim, kc) => {
    const rv = String(sim.store.resourceVersion());
    const plain = await collectWatch(kc, '/api/v1/nodes', { resourceVersion: rv });
    const w = await collectWatch(kc, '/api/v1/nodes', { resourceVersion: rv, allowWatchBookmarks: true });
    sim.store.create('nodes', { metadata: { name: 'n1' } });
    const bm = await until('a bookmark after the change', () => w.events.find((e) => e.type === 'BOOKMARK' && e.rv >= sim.store.resourceVersion()));
    assert.deepEqual(Object.keys(bm.obj.metadata as object), ['resourceVersion']);
    assert.equal(bm.obj.kind, 'Node');
    await until('plain watch event', () => plain.events.length >= 1);
    w.stop();
    plain.stop();
    assert.ok(plain.events.every((e) => e.type !== 'BOOKMARK'));
  }));

test('a delete of an object with finalizers waits for them to be removed', () =>
  withSim({}, async (sim, kc) => {
    const storage = kc.makeApiClient(k8s.StorageV1Api);
    await storage.createVolumeAttachment({ body: { metadata: { name: 'va1', finalizers: ['external-attacher/x'] }, spec: { attacher: 'x', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } } } });
    const w = await collectWatch(kc, '/apis/storage.k8s.io/v1/volumeattachments', { resourceVersion: String(sim.store.resourceVersion()) });
    await storage.deleteVolumeAttachment({ name: 'va1' });
    const held = await storage.readVolumeAttachment({ name: 'va1' });
    assert.ok(held.metadata?.deletionTimestamp, 'deletionTimestamp set');
    await storage.patchVolumeAttachment({ name: 'va1', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    await assert.rejects(storage.readVolumeAttachment({ name: 'va1' }), (e) => codeOf(e) === 404);
    await until('DELETED', () => w.events.some((e) => e.type === 'DELETED'));
    w.stop();
    assert.deepEqual(w.events.map((e) => e.type), ['MODIFIED', 'DELETED']);
  }));

test('a stale update and a duplicate create are 409 Conflict and AlreadyExists', () =>
  withSim({}, async (_sim, kc) => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const n = await core.createNode({ body: { metadata: { name: 'n1' } } });
    await core.replaceNode({ name: 'n1', body: { ...n, metadata: { ...n.metadata, labels: { a: '1' } } } });
    await assert.rejects(core.replaceNode({ name: 'n1', body: { ...n, metadata: { ...n.metadata, labels: { a: '2' } } } }), (e) => codeOf(e) === 409 && JSON.parse(String((e as { body: string }).body)).reason === 'Conflict');
    await assert.rejects(core.createNode({ body: { metadata: { name: 'n1' } } }), (e) => codeOf(e) === 409 && JSON.parse(String((e as { body: string }).body)).reason === 'AlreadyExists');
  }));

test('pagination with continue returns every object exactly once while writes happen', () =>
  withSim({}, async (sim, kc) => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    for (let i = 0; i < 300; i++) sim.store.create('pods', pod(`p-${String(i).padStart(3, '0')}`, i % 2 ? 'a' : 'b'));
    const stable = new Set(sim.store.list('pods').map((p) => `${p.metadata.namespace}/${p.metadata.name}`));
    const seen: string[] = [];
    let cont: string | undefined;
    let round = 0;
    let firstRv: string | undefined;
    do {
      const page = await core.listPodForAllNamespaces({ limit: 40, _continue: cont });
      firstRv ??= page.metadata?.resourceVersion;
      assert.equal(page.metadata?.resourceVersion, firstRv, 'every page reports the list resourceVersion');
      for (const p of page.items) seen.push(`${p.metadata?.namespace}/${p.metadata?.name}`);
      cont = page.metadata?._continue;
      // Writes between pages: new objects on both sides of the cursor, updates, deletions of new objects.
      round++;
      sim.store.create('pods', pod(`new-${round}`, 'a'));
      sim.store.create('pods', pod(`zz-${round}`, 'b'));
      sim.store.mutate('pods', 'a', 'p-001', (p) => { p.metadata.labels = { round: String(round) }; });
      if (round > 2) sim.store.delete('pods', 'a', `new-${round - 1}`);
    } while (cont);
    assert.equal(new Set(seen).size, seen.length, 'no object twice');
    for (const k of stable) assert.ok(seen.includes(k), `${k} listed`);
    assert.ok(round >= 8);
  }));

test('label and field selectors filter lists and watches', () =>
  withSim({}, async (sim, kc) => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    sim.store.create('pods', pod('a1', 'default', { labels: { app: 'a', tier: 'web' }, nodeName: 'n1', phase: 'Running' }));
    sim.store.create('pods', pod('a2', 'default', { labels: { app: 'a' }, nodeName: 'n2', phase: 'Pending' }));
    sim.store.create('pods', pod('b1', 'default', { labels: { app: 'b', tier: 'db' }, nodeName: 'n1' }));
    sim.store.create('pods', pod('c1', 'other', { nodeName: 'n1' }));
    const names = async (q: { labelSelector?: string; fieldSelector?: string }) =>
      (await core.listPodForAllNamespaces(q)).items.map((p) => p.metadata?.name).sort().join(',');
    assert.equal(await names({ labelSelector: 'app=a' }), 'a1,a2');
    assert.equal(await names({ labelSelector: 'app!=a' }), 'b1,c1');
    assert.equal(await names({ labelSelector: 'app in (a,b),tier' }), 'a1,b1');
    assert.equal(await names({ labelSelector: 'tier notin (web)' }), 'a2,b1,c1');
    assert.equal(await names({ labelSelector: '!tier' }), 'a2,c1');
    assert.equal(await names({ fieldSelector: 'spec.nodeName=n1' }), 'a1,b1,c1');
    assert.equal(await names({ fieldSelector: 'spec.nodeName=n1,metadata.namespace=default' }), 'a1,b1');
    assert.equal(await names({ fieldSelector: 'status.phase=Running' }), 'a1');
    assert.equal(await names({ fieldSelector: 'metadata.name=a2' }), 'a2');
    assert.equal(await names({ fieldSelector: 'spec.nodeName=n1', labelSelector: 'app=b' }), 'b1');
    await assert.rejects(core.listPodForAllNamespaces({ fieldSelector: 'spec.bogus=1' }), (e) => codeOf(e) === 400);
    await assert.rejects(core.listPodForAllNamespaces({ labelSelector: 'app in a' }), (e) => codeOf(e) === 400);
    // A watch with a selector sees an object entering as ADDED and leaving as DELETED.
    const w = await collectWatch(kc, '/api/v1/pods', { labelSelector: 'app=a', resourceVersion: String(sim.store.resourceVersion()) });
    sim.store.mutate('pods', 'default', 'b1', (p) => { p.metadata.labels = { app: 'a' }; });
    sim.store.mutate('pods', 'default', 'a1', (p) => { p.metadata.labels = { app: 'z' }; });
    sim.store.mutate('pods', 'default', 'a2', (p) => { p.metadata.labels = { app: 'a', x: '1' }; });
    sim.store.mutate('pods', 'other', 'c1', (p) => { p.metadata.labels = { app: 'q' }; });
    await until('3 events', () => w.events.length >= 3);
    w.stop();
    assert.deepEqual(w.events.map((e) => `${e.type} ${e.name}`), ['ADDED b1', 'DELETED a1', 'MODIFIED a2']);
  }));

test('401 without a valid token, except on health and version paths', () =>
  withSim({}, async (sim, kc) => {
    const r = await raw(sim, 'GET', '/api/v1/nodes', { token: null });
    assert.equal(r.status, 401);
    assert.equal(r.json().kind, 'Status');
    assert.equal(r.json().reason, 'Unauthorized');
    assert.equal((await raw(sim, 'GET', '/api/v1/nodes', { token: 'wrong' })).status, 401);
    for (const p of ['/healthz', '/livez', '/readyz', '/version']) assert.equal((await raw(sim, 'GET', p, { token: null })).status, 200, p);
    const bad = new k8s.KubeConfig();
    bad.loadFromString(sim.kubeconfig);
    bad.users = [{ name: bad.users[0]!.name, token: 'not-the-token' }]; // a wrong token and no client certificate
    await assert.rejects(bad.makeApiClient(k8s.CoreV1Api).listNode(), (e) => codeOf(e) === 401);
    assert.equal((await kc.makeApiClient(k8s.CoreV1Api).listNode()).items.length, 0);
  }));

test('malformed JSON is 400, unknown paths and resources 404, kind mismatch 422', () =>
  withSim({}, async (sim) => {
    const bad = await raw(sim, 'POST', '/api/v1/namespaces/default/pods', { body: '{"metadata": {' });
    assert.equal(bad.status, 400);
    assert.equal(bad.json().reason, 'BadRequest');
    for (const p of ['/api/v1/foos', '/apis/nope.example.com/v1/things', '/api/v2/pods', '/nothing', '/api/v1/nodes/missing', '/api/v1/namespaces/default/nodes']) {
      const r = await raw(sim, 'GET', p);
      assert.equal(r.status, 404, p);
      assert.equal(r.json().reason, 'NotFound', p);
    }
    const wrongKind = await raw(sim, 'POST', '/api/v1/nodes', { body: JSON.stringify({ kind: 'Pod', apiVersion: 'v1', metadata: { name: 'x' } }) });
    assert.equal(wrongKind.status, 422);
    assert.equal(wrongKind.json().reason, 'Invalid');
    const badName = await raw(sim, 'POST', '/api/v1/nodes', { body: JSON.stringify({ metadata: { name: 'UPPER' } }) });
    assert.equal(badName.status, 422);
    const gen = await raw(sim, 'POST', '/api/v1/namespaces/default/pods', { body: JSON.stringify({ metadata: { generateName: 'web-' }, spec: {} }) });
    assert.equal(gen.status, 201);
    assert.match(String((gen.json().metadata as { name: string }).name), /^web-.{5}$/);
  }));

test('a Table is served when the Accept header asks for one (kubectl human output)', () =>
  withSim({}, async (sim) => {
    sim.store.create('pods', pod('t1', 'default', { nodeName: 'n1', phase: 'Running' }));
    const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
    const get = (path: string) => new Promise<Record<string, unknown>>((resolve, reject) => {
      https.get(new URL(path, sim.url), { ca: sim.caPem, agent: false, headers: { authorization: `Bearer ${sim.token}`, accept } }, (res) => {
        let b = '';
        res.on('data', (d) => (b += d));
        res.on('end', () => resolve(JSON.parse(b) as Record<string, unknown>));
      }).on('error', reject);
    });
    const t = await get('/api/v1/namespaces/default/pods');
    assert.equal(t.kind, 'Table');
    assert.deepEqual((t.columnDefinitions as Array<{ name: string }>).map((c) => c.name), ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node']);
    const rows = t.rows as Array<{ cells: unknown[]; object: { metadata: { name: string } } }>;
    assert.deepEqual(rows[0].cells.slice(0, 4), ['t1', '0/1', 'Running', 0]);
    assert.equal(rows[0].object.metadata.name, 't1');
    assert.equal((await raw(sim, 'GET', '/api/v1/namespaces/default/pods')).json().kind, 'PodList');
  }));
