import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPlanner } from '../../src/kernel/planner.js';
import { createFleet, csiName } from './fleet-fixture.js';

async function pageAll(get: (url: string) => Promise<{ status: number; json: any }>, base: string): Promise<string[]> {
  const names: string[] = [];
  let token: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const r = await get(token === undefined ? base : `${base}&continue=${encodeURIComponent(token)}`);
    assert.equal(r.status, 200);
    names.push(...r.json.items.map((n: { name: string }) => n.name));
    token = r.json.continue;
    if (token === undefined) return names;
  }
  throw new Error('pagination did not end');
}

describe('/api/v1/nodes', () => {
  it('pages through every node exactly once, with and without a state filter', async () => {
    const f = createFleet();
    const all: string[] = [];
    for (let i = 0; i < 257; i++) {
      const name = `node-${i}`;
      f.node(name, { healthy: i % 3 !== 0, managed: i % 10 !== 0 });
      all.push(name);
    }
    const paged = await pageAll(f.get, '/api/v1/nodes?limit=50');
    assert.equal(paged.length, all.length);
    assert.deepEqual([...paged].sort(), [...all].sort());

    const unhealthy = all.filter((_, i) => i % 3 === 0);
    const filtered = await pageAll(f.get, '/api/v1/nodes?limit=7&state=unhealthy');
    assert.deepEqual([...filtered].sort(), [...unhealthy].sort());
    const unmanaged = await pageAll(f.get, '/api/v1/nodes?limit=500&state=unmanaged');
    assert.deepEqual([...unmanaged].sort(), all.filter((_, i) => i % 10 === 0).sort());

    const first = await f.get('/api/v1/nodes?limit=3');
    assert.equal(first.json.items.length, 3);
    assert.deepEqual(Object.keys(first.json.items[0]).sort(),
      ['attached', 'desired', 'healthy', 'managed', 'name', 'outOfService', 'statusUpdateNeeded', 'uncertain']);
    await f.close();
  });

  it('defaults to 100 per page', async () => {
    const f = createFleet();
    for (let i = 0; i < 120; i++) f.node(`n${i}`);
    const r = await f.get('/api/v1/nodes');
    assert.equal(r.json.items.length, 100);
    assert.ok(r.json.continue);
    await f.close();
  });

  it('rejects bad parameters with 400 {code, message}', async () => {
    const f = createFleet();
    f.node('a');
    const token = (await f.get('/api/v1/nodes?limit=1&state=healthy')).json.continue as string | undefined;
    f.node('b');
    const healthyToken = (await f.get('/api/v1/nodes?limit=1&state=healthy')).json.continue as string;
    assert.equal(token, undefined);
    const bad = [
      '/api/v1/nodes?limit=0', '/api/v1/nodes?limit=501', '/api/v1/nodes?limit=abc', '/api/v1/nodes?state=bogus',
      '/api/v1/nodes?continue=garbage', `/api/v1/nodes?continue=${healthyToken}`, // token of another filter
      `/api/v1/volumes?continue=${healthyToken}`, // token of another listing
    ];
    for (const url of bad) {
      const r = await f.get(url);
      assert.equal(r.status, 400, url);
      assert.equal(r.json.code, 'FA_ERR_HTTP_BAD_REQUEST', url);
      assert.equal(typeof r.json.message, 'string');
    }
    // Rejected by the router before any route: the same body, the router's status.
    for (const [url, status] of [['/api/v1/nodes/%', 400], ['/api/v1/volumes/%E0%A4%A', 400], [`/api/v1/nodes/${'x'.repeat(2000)}`, 414]] as const) {
      const r = await f.get(url);
      assert.equal(r.status, status, url.slice(0, 40));
      assert.equal(r.json.code, 'FA_ERR_HTTP_BAD_REQUEST', url.slice(0, 40));
    }
    await f.close();
  });

  it('404s an unknown node and serves a 253-character name', async () => {
    const f = createFleet();
    const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    assert.equal(long.length, 253);
    f.node(long);
    const ok = await f.get(`/api/v1/nodes/${long}`);
    assert.equal(ok.status, 200);
    assert.equal(ok.json.name, long);
    const missing = await f.get('/api/v1/nodes/nope');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json, { code: 'FA_ERR_HTTP_NODE_NOT_FOUND', message: 'node nope not found' });
    assert.equal((await f.get(`/api/v1/nodes/${long}x`)).status, 400);
    await f.close();
  });
});

describe('/api/v1/nodes/{name}', () => {
  it('shows desired vs actual volumes, pods, operations and why each pair waits', async () => {
    const f = createFleet();
    const vSettled = f.volume('settled');
    const vNew = f.volume('new');
    const vGone = f.volume('gone');
    const vFailing = f.volume('failing');
    const node = f.node('node-7', { inUse: [csiName('settled'), csiName('gone')] });
    f.want(vSettled, node, 'uid-1', { namespace: 'shop', name: 'web-0' });
    f.want(vSettled, node, 'uid-2');
    f.attach(vSettled, node);
    f.want(vNew, node, 'uid-3');
    f.attach(vGone, node); // attached, mounted, no pod wants it
    f.want(vFailing, node, 'uid-4');
    const now = f.view.now();
    assert.equal(f.state.tryStartOperation(vFailing, node, 'attach', now), 'started');
    f.state.completeOperation(vFailing, node, 'attach', false, now);
    f.state.markUncertain(vFailing, node);
    f.view.setPod('uid-2', undefined); // pod no longer known: uid only

    const r = await f.get('/api/v1/nodes/node-7');
    assert.equal(r.status, 200);
    const d = r.json;
    assert.equal(d.name, 'node-7');
    assert.equal(d.healthy, true);
    assert.equal(d.desired, 3);
    assert.equal(d.attached, 2);
    assert.equal(d.uncertain, 1);
    assert.deepEqual([...d.volumesInUse].sort(), [csiName('gone'), csiName('settled')].sort());
    const by = new Map<string, any>(d.volumes.map((p: { volume: string }) => [p.volume, p]));
    assert.equal(by.size, 4);

    const settled = by.get(csiName('settled'));
    assert.equal(settled.desired, true);
    assert.equal(settled.state, 'attached');
    assert.equal(settled.mounted, true);
    assert.equal(settled.reportedAsAttached, true);
    assert.equal(settled.podCount, 2);
    assert.deepEqual(settled.pods, [{ uid: 'uid-1', namespace: 'shop', name: 'web-0' }, { uid: 'uid-2' }]);
    assert.equal(settled.attachmentName, undefined); // volume responses only
    assert.equal(settled.waitingFor, undefined);

    assert.equal(by.get(csiName('new')).attachState, 'detached');
    assert.equal(by.get(csiName('new')).waitingFor, 'attach to node-7: attach starts on the next pass');

    const gone = by.get(csiName('gone'));
    assert.equal(gone.desired, false);
    assert.equal(gone.waitingFor, 'detach from node-7: still mounted, node healthy, will not force');

    const failing = by.get(csiName('failing'));
    assert.equal(failing.state, 'uncertain');
    assert.equal(failing.reportedAsAttached, false);
    assert.equal(failing.backoff.length, 1);
    assert.equal(failing.backoff[0].op, 'attach');
    assert.equal(failing.backoff[0].durationMs, 500);
    assert.match(failing.waitingFor, /^attach to node-7: last attach failed; retry in \d+ms$/);

    // An attach in flight shows as attaching, with its age.
    f.view.advance(1000);
    assert.equal(f.state.tryStartOperation(vNew, node, 'attach', f.view.now()), 'started');
    f.view.advance(2500);
    const again = (await f.get('/api/v1/nodes/node-7')).json;
    const attaching = again.volumes.find((p: { volume: string }) => p.volume === csiName('new'));
    assert.equal(attaching.state, 'attaching');
    assert.deepEqual(attaching.operation, { op: 'attach', node: 'node-7', volumeWide: true, ageMs: 2500 });
    assert.equal(attaching.waitingFor, 'attach to node-7: attach in progress for 2.5s');
    await f.close();
  });

  it('says when an attach waits for an uncertain attachment elsewhere, and what that one waits for', async () => {
    const f = createFleet();
    const v = f.volume('rwo'); // ReadWriteOnce: multi-attach forbidden
    const a = f.node('node-a');
    const b = f.node('node-b');
    f.want(v, a, 'uid-a');
    f.want(v, b, 'uid-b');
    const now = f.view.now();
    assert.equal(f.state.tryStartOperation(v, a, 'attach', now), 'started');
    f.state.completeOperation(v, a, 'attach', false, now); // J2: Uncertain on node-a, in backoff
    f.state.markUncertain(v, a);
    const r = await f.get('/api/v1/nodes/node-b');
    assert.equal(r.status, 200);
    assert.match(r.json.volumes[0].waitingFor,
      /^attach to node-b: attachment uncertain on node-a and multi-attach is forbidden, waiting until it is confirmed or detached there; attach to node-a: last attach failed; retry in \d+ms$/);
  });

  it('shows the detach timer started by a plan and the force-detach countdown on an unhealthy node', async () => {
    const f = createFleet();
    const v = f.volume('data');
    const node = f.node('node-9', { healthy: false, inUse: [csiName('data')] });
    f.attach(v, node);
    const planner = createPlanner({ state: f.state, workers: 0, build: 'debug' });
    try {
      const start = f.view.now();
      await planner.plan(start, { maxWaitForUnmountMs: f.view.options.maxWaitForUnmountMs, disableForceDetachOnTimeout: false });
      f.view.setNow(start + 60_000);
      const pair = (await f.get('/api/v1/nodes/node-9')).json.volumes[0];
      assert.equal(pair.detachRequestedAgeMs, 60_000);
      assert.equal(pair.waitingFor, 'detach from node-9: still mounted, node unhealthy, force detach in 5m00s');
    } finally {
      await planner.close();
    }
    await f.close();
  });
});
