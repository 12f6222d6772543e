/** Watch edge cases and large lists of the simulated API server. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import type { Simulator } from '../../src/sim/server/index.js';
import { collectWatch, pod, until, withSim } from './sim-helpers.js';

/** A watch whose client reads nothing until `resume()` (a stalled consumer). */
function stalledWatch(sim: Simulator, path: string) {
  let body = '';
  let ended = false;
  let response: import('node:http').IncomingMessage | undefined;
  const req = https.get(new URL(path, sim.url), { ca: sim.caPem, headers: { authorization: `Bearer ${sim.token}` }, agent: false }, (res) => {
    response = res;
    res.pause();
    res.setEncoding('utf8');
    res.on('data', (d: string) => (body += d));
    res.on('end', () => (ended = true));
    res.on('error', () => (ended = true));
  });
  req.on('error', () => (ended = true));
  return {
    started: () => response !== undefined,
    resume: () => response?.resume(),
    lines: () => body.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { type: string; object: { metadata: { resourceVersion: string } } }),
    ended: () => ended,
    destroy: () => req.destroy(),
  };
}

test('a watcher that stops reading is cut off once its backlog exceeds the bound, and can resume', () =>
  withSim({ maxWatchBacklogBytes: 256 << 10 }, async (sim, kc) => {
    sim.store.create('pods', pod('big'));
    const rv = sim.store.resourceVersion();
    const w = stalledWatch(sim, `/api/v1/pods?watch=true&resourceVersion=${rv}`);
    await until('watch started', () => w.started() && sim.server.watchCount() === 1);
    const payload = 'x'.repeat(4096);
    let commits = 0;
    // Socket buffers absorb some megabytes first; keep writing until the server gives up on the watcher.
    while (sim.server.watchCutOffs() === 0 && commits < 20_000) {
      sim.store.mutate('pods', 'default', 'big', (p) => { p.metadata.annotations = { n: String(commits), payload }; });
      commits++;
      if (commits % 200 === 0) await new Promise((r) => setImmediate(r));
    }
    assert.equal(sim.server.watchCutOffs(), 1, 'cut off');
    assert.equal(sim.server.watchCount(), 0);
    w.resume();
    await until('stream end', () => w.ended());
    const got = w.lines();
    assert.ok(got.length > 0 && got.length < commits, `received ${got.length} of ${commits}`);
    const rvs = got.map((e) => Number(e.object.metadata.resourceVersion));
    assert.ok(rvs.every((x, i) => i === 0 || x > rvs[i - 1]));
    // Resuming from the last received resourceVersion delivers the rest, in order.
    const last = rvs[rvs.length - 1];
    const resumed = await collectWatch(kc, '/api/v1/pods', { resourceVersion: String(last) });
    await until('the rest', () => resumed.events.length >= commits - got.length);
    resumed.stop();
    assert.equal(resumed.events[0].rv, last + 1);
    assert.equal(resumed.events[resumed.events.length - 1].rv, sim.store.resourceVersion());
  }));

test('a list too large for one buffer streams every object', () =>
  withSim({}, async (sim, kc) => {
    const pad = 'p'.repeat(400);
    for (let i = 0; i < 12_000; i++) sim.store.create('pods', { metadata: { name: `p-${i}`, namespace: 'default', annotations: { pad } }, spec: {} });
    const list = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: 'default' });
    assert.equal(list.items.length, 12_000);
    assert.equal(new Set(list.items.map((p) => p.metadata?.name)).size, 12_000);
  }));

test('timeoutSeconds ends a watch; sendInitialEvents replays the state and marks its end with a bookmark', () =>
  withSim({}, async (sim, kc) => {
    sim.store.create('nodes', { metadata: { name: 'a' } });
    sim.store.create('nodes', { metadata: { name: 'b' } });
    const timed = await collectWatch(kc, '/api/v1/nodes', { resourceVersion: String(sim.store.resourceVersion()), timeoutSeconds: 1 });
    await until('timeout', () => timed.isDone(), 10_000);
    assert.equal(timed.endError(), null);
    const w = await collectWatch(kc, '/api/v1/nodes', { sendInitialEvents: true, allowWatchBookmarks: true, resourceVersionMatch: 'NotOlderThan' });
    await until('initial events', () => w.events.length >= 3);
    sim.store.create('nodes', { metadata: { name: 'c' } });
    await until('live event', () => w.events.length >= 4);
    w.stop();
    assert.deepEqual(w.events.slice(0, 4).map((e) => `${e.type} ${e.name}`), ['ADDED a', 'ADDED b', 'BOOKMARK ', 'ADDED c']);
    const ann = (w.events[2].obj.metadata as { annotations?: Record<string, string> }).annotations;
    assert.equal(ann?.['k8s.io/initial-events-end'], 'true');
    // Without a resourceVersion, a watch starts with the current state as ADDED events.
    const plain = await collectWatch(kc, '/api/v1/nodes', {});
    await until('state', () => plain.events.length >= 3);
    plain.stop();
    assert.deepEqual(plain.events.map((e) => e.type), ['ADDED', 'ADDED', 'ADDED']);
  }));

test('stop ends open watches and the server', async () => {
  let sim: Simulator | undefined;
  const done: unknown[] = [];
  await withSim({}, async (s, kc) => {
    sim = s;
    for (let i = 0; i < 3; i++) {
      await new k8s.Watch(kc).watch('/api/v1/pods', {}, () => undefined, (err) => done.push(err));
    }
    await until('watches open', () => s.server.watchCount() === 3);
  });
  await until('clients notified', () => done.length === 3);
  assert.equal(sim?.server.watchCount(), 0);
});
