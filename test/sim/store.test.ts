import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSimStore, StoreError, type CommittedEvent, type KubeObject } from '../../src/sim/store/index.js';
import { haveSameHiddenClass, warmPair } from '../support/hidden-class.js';
import { stringShape } from '../support/string-shape.js';

const pod = (name: string, nodeName?: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  metadata: { name, namespace: 'default' },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'i' }] },
  ...extra,
});

function storeError(reason: string, code: number) {
  return (err: unknown) => err instanceof StoreError && err.reason === reason && err.code === code;
}

test('create assigns uid, creationTimestamp, type meta and increasing resourceVersions', () => {
  const s = createSimStore({ namespaces: [] });
  const a = s.create('pods', pod('a'));
  const b = s.create('nodes', { metadata: { name: 'n1' } });
  assert.equal(a.kind, 'Pod');
  assert.equal(a.apiVersion, 'v1');
  assert.match(String(a.metadata.uid), /^[0-9a-f-]{36}$/);
  assert.match(String(a.metadata.creationTimestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.ok(Number(b.metadata.resourceVersion) > Number(a.metadata.resourceVersion));
  assert.equal(s.resourceVersion(), Number(b.metadata.resourceVersion));
  assert.equal(s.get('nodes', 'ignored', 'n1')?.metadata.namespace, undefined);
  assert.equal(s.count('pods'), 1);
});

test('create rejects duplicates, bad names, wrong kinds and missing namespaces', () => {
  const s = createSimStore();
  s.create('pods', pod('a'));
  assert.throws(() => s.create('pods', pod('a')), storeError('AlreadyExists', 409));
  assert.throws(() => s.create('pods', pod('Bad_Name')), storeError('Invalid', 422));
  assert.throws(() => s.create('pods', { kind: 'Node', metadata: { name: 'x', namespace: 'default' } }), storeError('Invalid', 422));
  assert.throws(() => s.create('pods', { metadata: { name: 'x' } }), storeError('Invalid', 422));
  assert.throws(() => s.create('pods', { metadata: { namespace: 'default' } } as unknown as KubeObject), storeError('Invalid', 422));
});

test('generateName produces a unique name with the prefix', () => {
  const s = createSimStore();
  const names = new Set<string>();
  for (let i = 0; i < 20; i++) names.add(s.create('pods', { metadata: { name: '', generateName: 'web-', namespace: 'default' } }).metadata.name);
  assert.equal(names.size, 20);
  for (const n of names) assert.match(n, /^web-[a-z0-9]{5}$/);
});

test('returned objects are copies', () => {
  const s = createSimStore();
  const a = s.create('pods', pod('a'));
  a.metadata.labels = { changed: 'yes' };
  const got = s.get('pods', 'default', 'a');
  assert.equal(got?.metadata.labels, undefined);
  if (got) got.spec = {};
  assert.deepEqual((s.get('pods', 'default', 'a')?.spec as { containers: unknown[] }).containers.length, 1);
});

test('update enforces the resourceVersion precondition and keeps server-owned metadata', () => {
  const s = createSimStore();
  const a = s.create('pods', pod('a'));
  const stale = { ...a };
  const b = s.update('pods', { ...a, metadata: { ...a.metadata, labels: { x: '1' }, uid: undefined, creationTimestamp: 'bogus' } });
  assert.equal(b.metadata.uid, a.metadata.uid);
  assert.equal(b.metadata.creationTimestamp, a.metadata.creationTimestamp);
  assert.throws(() => s.update('pods', { ...stale, metadata: { ...stale.metadata, labels: { y: '2' } } }), storeError('Conflict', 409));
  assert.throws(() => s.update('pods', pod('missing')), storeError('NotFound', 404));
  // An unconditional update (no resourceVersion) succeeds.
  const c = s.update('pods', { ...b, metadata: { ...b.metadata, resourceVersion: undefined, labels: { z: '3' } } });
  assert.deepEqual(c.metadata.labels, { z: '3' });
});

test('status subresource: main writes keep status, status writes keep everything else', () => {
  const s = createSimStore();
  s.create('pods', pod('a', undefined, { status: { phase: 'Pending' } }));
  const cur = s.get('pods', 'default', 'a') as KubeObject;
  const main = s.update('pods', { ...cur, spec: { nodeName: 'n1' }, status: { phase: 'Running' } });
  assert.deepEqual(main.status, { phase: 'Pending' });
  assert.deepEqual(main.spec, { nodeName: 'n1' });
  const st = s.update('pods', { ...main, metadata: { ...main.metadata, labels: { l: '1' } }, spec: {}, status: { phase: 'Running' } }, { subresource: 'status' });
  assert.deepEqual(st.status, { phase: 'Running' });
  assert.deepEqual(st.spec, { nodeName: 'n1' });
  assert.equal(st.metadata.labels, undefined);
  // Resources without a status subresource write the whole object.
  s.create('leases', { metadata: { name: 'l', namespace: 'kube-node-lease' }, spec: { holderIdentity: 'a' } });
  assert.throws(() => s.update('leases', s.get('leases', 'kube-node-lease', 'l') as KubeObject, { subresource: 'status' }), storeError('NotFound', 404));
});

test('a no-op change commits nothing', () => {
  const s = createSimStore();
  s.create('nodes', { metadata: { name: 'n' }, status: { conditions: [] } });
  const rv = s.resourceVersion();
  s.mutate('nodes', undefined, 'n', () => undefined);
  s.update('nodes', s.get('nodes', undefined, 'n') as KubeObject);
  assert.equal(s.resourceVersion(), rv);
  s.mutate('nodes', undefined, 'n', (n) => { n.metadata.labels = { a: 'b' }; });
  assert.equal(s.resourceVersion(), rv + 1);
  assert.equal(s.mutate('nodes', undefined, 'missing', () => undefined), undefined);
});

test('subscribers see every change in commit order, including writes made by subscribers', () => {
  const s = createSimStore();
  const seen: Array<[string, string, number]> = [];
  s.subscribe((ev) => {
    if (ev.name === 'a' && ev.type === 'ADDED') s.create('pods', pod('b'));
  });
  s.subscribe((ev) => seen.push([ev.type, ev.name, ev.rv]));
  s.create('pods', pod('a'));
  s.delete('pods', 'default', 'a');
  assert.deepEqual(seen.map((x) => `${x[0]} ${x[1]}`), ['ADDED a', 'ADDED b', 'DELETED a']);
  const rvs = seen.map((x) => x[2]);
  assert.deepEqual(rvs, [...rvs].sort((x, y) => x - y));
  assert.equal(new Set(rvs).size, rvs.length);
});

test('finalizers hold a deletion until they are removed', () => {
  const s = createSimStore();
  const events: string[] = [];
  s.subscribe((ev) => events.push(ev.type));
  s.create('volumeattachments', { metadata: { name: 'va', finalizers: ['external-attacher/x'] }, spec: { attacher: 'x', nodeName: 'n', source: {} } });
  const held = s.delete('volumeattachments', undefined, 'va');
  assert.ok(held?.metadata.deletionTimestamp);
  assert.equal(held?.metadata.deletionGracePeriodSeconds, 0);
  assert.equal(s.count('volumeattachments'), 1);
  // A second delete changes nothing.
  const rv = s.resourceVersion();
  s.delete('volumeattachments', undefined, 'va');
  assert.equal(s.resourceVersion(), rv);
  s.mutate('volumeattachments', undefined, 'va', (va) => { va.metadata.finalizers = []; });
  assert.equal(s.count('volumeattachments'), 0);
  assert.deepEqual(events, ['ADDED', 'MODIFIED', 'DELETED']);
});

test('the metadata of every created object, and of every pod marked for deletion, share one hidden class', () => {
  // The store adds uid, creationTimestamp and resourceVersion (and the deletion fields) to a copy
  // of the metadata; made by a spread, each copy would get hidden classes of its own on Node 20
  // (src/kube/raw-write.ts, h2RequestOptions): ~1M of them in a 10k-node run.
  const s = createSimStore();
  const created = warmPair((i) => s.create('pods', pod(`p-${i}`, 'n1')).metadata);
  assert.ok(haveSameHiddenClass(created[0], created[1]));
  assert.equal(created[1].name, 'p-2999');
  const marked = warmPair((i) => s.delete('pods', 'default', `p-${i}`)!.metadata);
  assert.ok(haveSameHiddenClass(marked[0], marked[1]));
  assert.equal(marked[1].deletionGracePeriodSeconds, 30);
});

test('pods bound to a node are deleted gracefully; unbound pods and grace 0 are removed at once', () => {
  const s = createSimStore();
  s.create('pods', pod('unbound'));
  assert.equal(s.delete('pods', 'default', 'unbound')?.metadata.deletionTimestamp, undefined);
  assert.equal(s.get('pods', 'default', 'unbound'), undefined);

  s.create('pods', pod('bound', 'n1'));
  const g = s.delete('pods', 'default', 'bound');
  assert.equal(g?.metadata.deletionGracePeriodSeconds, 30);
  assert.ok(s.get('pods', 'default', 'bound'));
  const shorter = s.delete('pods', 'default', 'bound', { gracePeriodSeconds: 5 });
  assert.equal(shorter?.metadata.deletionGracePeriodSeconds, 5);
  const longer = s.delete('pods', 'default', 'bound', { gracePeriodSeconds: 60 });
  assert.equal(longer?.metadata.deletionGracePeriodSeconds, 5);
  s.delete('pods', 'default', 'bound', { gracePeriodSeconds: 0 });
  assert.equal(s.get('pods', 'default', 'bound'), undefined);

  s.create('pods', pod('done', 'n1', { status: { phase: 'Succeeded' } }));
  s.delete('pods', 'default', 'done');
  assert.equal(s.get('pods', 'default', 'done'), undefined);
  assert.equal(s.delete('pods', 'default', 'done'), undefined);
});

test('delete with a uid precondition fails on mismatch', () => {
  const s = createSimStore();
  s.create('nodes', { metadata: { name: 'n' } });
  assert.throws(() => s.delete('nodes', undefined, 'n', { uid: 'other' }), storeError('Conflict', 409));
});

test('listPage pages in key order, per namespace, and by node', () => {
  const s = createSimStore();
  for (const ns of ['a', 'a-b', 'b']) for (let i = 0; i < 5; i++) s.create('pods', { metadata: { name: `p${i}`, namespace: ns }, spec: { nodeName: `n${i % 2}` } });
  const seen: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = s.listPage('pods', { limit: 4, after });
    for (const j of page.items) seen.push(`${(JSON.parse(j) as KubeObject).metadata.namespace}/${(JSON.parse(j) as KubeObject).metadata.name}`);
    if (!page.more) break;
    after = page.lastKey;
  }
  assert.equal(seen.length, 15);
  assert.deepEqual(seen, [...seen].sort());
  assert.equal(s.listPage('pods', { namespace: 'a' }).items.length, 5);
  assert.equal(s.list('pods', 'a-b').length, 5);
  assert.equal(s.listPage('pods', { nodeName: 'n0' }).items.length, 9);
  assert.equal(s.listPage('pods', { nodeName: 'n1', namespace: 'b' }).items.length, 2);
  s.mutate('pods', 'b', 'p1', (p) => { (p.spec as { nodeName: string }).nodeName = 'n0'; });
  assert.equal(s.listPage('pods', { nodeName: 'n1', namespace: 'b' }).items.length, 1);
  assert.equal(s.listPage('pods', { filter: (j) => j.includes('"n1"') }).items.length, 5);
});

test('the event window serves watches from recent resourceVersions and reports older ones as gone', () => {
  const s = createSimStore({ watchWindow: 5, namespaces: [] });
  const start = s.resourceVersion();
  for (let i = 0; i < 3; i++) s.create('nodes', { metadata: { name: `n${i}` } });
  assert.deepEqual(s.eventsAfter('nodes', start)?.map((e: CommittedEvent) => e.name), ['n0', 'n1', 'n2']);
  for (let i = 3; i < 10; i++) s.create('nodes', { metadata: { name: `n${i}` } });
  assert.equal(s.eventsAfter('nodes', start), undefined);
  const oldest = s.oldestResumableRv('nodes');
  assert.equal(s.eventsAfter('nodes', oldest)?.length, 5);
  assert.equal(s.eventsAfter('nodes', s.resourceVersion())?.length, 0);
  const ev = (s.eventsAfter('nodes', oldest) as CommittedEvent[])[0];
  assert.equal(ev.frame().toString(), `{"type":"ADDED","object":${ev.json}}\n`);
  assert.notEqual(ev.frame(), ev.frame(), 'a replayed frame is built again, not held by the window');
});

test('each resource keeps its own window: a burst of lease renewals does not expire a pod watch', () => {
  const s = createSimStore({ watchWindow: 5, namespaces: [] });
  const start = s.resourceVersion();
  s.create('pods', { metadata: { name: 'p', namespace: 'default' } });
  for (let i = 0; i < 20; i++) s.create('leases', { metadata: { name: `l${i}`, namespace: 'kube-node-lease' } });
  assert.deepEqual(s.eventsAfter('pods', start)?.map((e: CommittedEvent) => e.name), ['p']);
  assert.equal(s.eventsAfter('leases', start), undefined, 'the lease window itself overflowed');
  assert.deepEqual(s.eventsAfter('nodes', start), [], 'a resource without events has nothing to replay');
});

test('an object written again is stored as one flat string, not a rope of the serialisation it was cut from', async () => {
  // As a rope (two slices of the first serialisation and the new resourceVersion) every
  // scavenge copied its parts while the object stayed stored or its event in the window.
  const s = createSimStore({ namespaces: [] });
  s.create('pods', pod('a'));
  s.mutate('pods', 'default', 'a', (o) => {
    o.metadata.labels = { x: 'y'.repeat(100) };
  });
  assert.equal(await stringShape(s.getJson('pods', 'default', 'a')!), 'string');
  // The DELETED event's text is made the same way from the last stored text.
  let last = '';
  s.subscribe((ev) => (last = ev.json));
  s.delete('pods', 'default', 'a');
  assert.match(last, /"resourceVersion":"3"/);
  assert.equal(await stringShape(last), 'string');
  // What the probe reports for a rope, so that the assertions above can fail.
  assert.equal(await stringShape(`${last.slice(0, 20)}-${last.slice(21)}`), 'concatenated string');
});

test('a label that repeats the resourceVersion text does not confuse the stored resourceVersion', () => {
  const s = createSimStore({ namespaces: [] });
  const n = s.create('nodes', { metadata: { name: 'n' } });
  const rv = String(n.metadata.resourceVersion);
  const upd = s.mutate('nodes', undefined, 'n', (o) => { o.metadata.labels = { resourceVersion: rv }; });
  const stored = s.get('nodes', undefined, 'n');
  assert.equal(stored?.metadata.resourceVersion, upd?.metadata.resourceVersion);
  assert.equal(stored?.metadata.labels?.resourceVersion, rv);
  assert.equal(stored?.metadata.resourceVersion, String(s.resourceVersion()));
});

test('a removal event carries the last stored object with the new resourceVersion, also when a label repeats the old one', () => {
  const s = createSimStore({ namespaces: [] });
  const frames: string[] = [];
  s.subscribe((ev) => { if (ev.type === 'DELETED') frames.push(ev.json); });
  s.create('pods', pod('a'));
  const stored = JSON.parse(String(s.getJson('pods', 'default', 'a'))) as KubeObject;
  s.create('pods', pod('b', undefined, { metadata: { name: 'b', namespace: 'default', labels: { resourceVersion: '' } } }));
  // The label repeats the resourceVersion this write commits, so the stored text has the field twice.
  const b = s.mutate('pods', 'default', 'b', (o) => { o.metadata.labels = { resourceVersion: String(s.resourceVersion() + 1) }; });
  const bStored = JSON.parse(String(s.getJson('pods', 'default', 'b'))) as KubeObject;
  s.delete('pods', 'default', 'a');
  s.delete('pods', 'default', 'b');
  assert.equal(frames.length, 2);
  const [a, bGone] = frames.map((f) => JSON.parse(f) as KubeObject);
  assert.deepEqual(a, { ...stored, metadata: { ...stored.metadata, resourceVersion: String(s.resourceVersion() - 1) } });
  assert.deepEqual(bGone, { ...bStored, metadata: { ...bStored.metadata, resourceVersion: String(s.resourceVersion()) } });
  assert.equal(bStored.metadata.labels?.resourceVersion, bStored.metadata.resourceVersion);
  assert.equal(bGone.metadata.labels?.resourceVersion, b?.metadata.resourceVersion, 'the label keeps its text');
  assert.equal(frames[0], JSON.stringify(a), 'the event text is the object in stored key order');
});

test('the …Json writes answer the committed JSON, the same bytes the store keeps and watchers get', () => {
  const s = createSimStore({ namespaces: [] });
  const frames: string[] = [];
  s.subscribe((ev) => frames.push(ev.json));
  const created = s.createJson('pods', pod('a', 'n1'));
  assert.equal(created, s.getJson('pods', 'default', 'a'));
  const updated = s.updateJson('pods', { ...(JSON.parse(created) as KubeObject), metadata: { ...(JSON.parse(created) as KubeObject).metadata, labels: { x: 'y' } } });
  assert.equal(updated, s.getJson('pods', 'default', 'a'));
  const deleted = s.deleteJson('pods', 'default', 'a');
  assert.equal((JSON.parse(String(deleted)) as KubeObject).metadata.deletionGracePeriodSeconds, 30);
  assert.deepEqual(frames, [created, updated, deleted]);
  assert.equal(s.deleteJson('pods', 'default', 'missing'), undefined);
});

test('patchJson writes with update rules: NotFound, the patched resourceVersion as precondition, status split', () => {
  const s = createSimStore({ namespaces: [] });
  s.create('nodes', { metadata: { name: 'n1' }, spec: {}, status: { phase: 'Running' } });
  assert.throws(() => s.patchJson('nodes', undefined, 'missing', (o) => o), storeError('NotFound', 404));
  const rv0 = String(s.get('nodes', undefined, 'n1')?.metadata.resourceVersion);
  const patched = JSON.parse(s.patchJson('nodes', undefined, 'n1', (o) => ({ ...o, spec: { unschedulable: true }, status: { phase: 'Gone' } }))) as KubeObject;
  assert.deepEqual(patched.spec, { unschedulable: true });
  assert.deepEqual(patched.status, { phase: 'Running' }, 'a main-resource patch keeps the stored status');
  assert.throws(() => s.patchJson('nodes', undefined, 'n1', (o) => ({ ...o, metadata: { ...o.metadata, resourceVersion: rv0 } })), storeError('Conflict', 409));
  const status = JSON.parse(s.patchJson('nodes', undefined, 'n1', (o) => ({ ...o, spec: {}, status: { phase: 'Ready' } }), { subresource: 'status' })) as KubeObject;
  assert.deepEqual(status.status, { phase: 'Ready' });
  assert.deepEqual(status.spec, { unschedulable: true }, 'a status patch keeps everything else');
});

test('subscribers get a view equal to the committed JSON, also for events written by a subscriber', () => {
  const s = createSimStore({ namespaces: [] });
  const seen: Array<[string, unknown, unknown]> = [];
  s.subscribe((ev) => {
    seen.push([ev.name, ev.view(), JSON.parse(ev.json)]);
    if (ev.name === 'a') s.mutate('pods', 'default', 'a', (o) => { o.metadata.labels = { by: 'subscriber' }; });
  });
  const returned = s.create('pods', pod('a'));
  s.create('pods', pod('b'));
  assert.equal(seen.length, 3);
  for (const [name, view, parsed] of seen) assert.deepEqual(view, parsed, name);
  returned.metadata.labels = { changed: 'after delivery' };
  assert.deepEqual(s.get('pods', 'default', 'a')?.metadata.labels, { by: 'subscriber' }, 'the caller changing its object changes nothing stored');
});

test('a delivered event keeps no frame bytes: subscribers share one frame, a later replay builds an identical one', () => {
  const s = createSimStore();
  const seen: Buffer[] = [];
  let delivered: CommittedEvent | undefined;
  s.subscribe((ev) => {
    delivered = ev;
    seen.push(ev.frame(), ev.frame());
  });
  s.subscribe((ev) => seen.push(ev.frame()));
  const start = s.resourceVersion();
  s.create('pods', pod('a', 'n1'));
  assert.equal(seen.length, 3);
  assert.ok(seen[0] === seen[1] && seen[1] === seen[2], 'one frame shared while the event is delivered');
  const replayed = s.eventsAfter('pods', start)?.[0];
  const fields = (e: CommittedEvent | undefined) => e && { type: e.type, resource: e.resource, rv: e.rv, namespace: e.namespace, name: e.name, json: e.json, prevJson: e.prevJson };
  assert.deepEqual(fields(replayed), fields(delivered), 'the window replays the delivered event, rebuilt from its packed record');
  const again = replayed!.frame();
  assert.notEqual(again, seen[0], 'the window does not hold the delivered frame');
  assert.notEqual(replayed!.frame(), again, 'nor a replayed one');
  assert.deepEqual(again, seen[0]);
  assert.match(again.toString(), /^\{"type":"ADDED","object":\{.*"name":"a".*\}\}\n$/);
});
