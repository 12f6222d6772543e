import type { VolumeInfo } from '../../src/http/inspection-view.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createFleet, csiName } from './fleet-fixture.js';

describe('/api/v1/conflicts', () => {
  it('lists multi-attach conflicts with the holders, pods and reason', async () => {
    const f = createFleet();
    const v = f.volume('rwo');
    const a = f.node('node-a', { healthy: false, inUse: [csiName('rwo')] });
    const b = f.node('node-b');
    f.attach(v, a);
    f.want(v, b, 'uid-1', { namespace: 'ns', name: 'app-0' });
    const rwx = f.volume('shared', { accessModes: ['ReadWriteMany'] });
    f.attach(rwx, a);
    f.want(rwx, b, 'uid-2');

    const r = await f.get('/api/v1/conflicts');
    assert.equal(r.status, 200);
    assert.equal(r.json.total, 1);
    const [c] = r.json.items;
    assert.equal(c.volume, csiName('rwo'));
    assert.equal(c.node, 'node-b');
    assert.equal(c.specName, 'pv-rwo');
    assert.deepEqual(c.attachedTo, ['node-a']);
    assert.deepEqual(c.pods, [{ uid: 'uid-1', namespace: 'ns', name: 'app-0' }]);
    assert.equal(c.multiAttachErrorReported, false);
    assert.match(c.waitingFor, /; detach from node-a: still mounted, node unhealthy, force detach 6m00s after the next pass starts the timer$/);

    assert.equal((await f.get('/api/v1/conflicts?limit=0')).status, 400);
    f.state.removeDesiredPod(v, b, 'uid-1');
    assert.deepEqual((await f.get('/api/v1/conflicts')).json, { total: 0, items: [] });
    await f.close();
  });
});

describe('/api/v1/operations', () => {
  it('lists pending operations and backoff windows, oldest first, filtered by state', async () => {
    const f = createFleet();
    const n1 = f.node('node-1');
    const n2 = f.node('node-2');
    const v1 = f.volume('v1', { accessModes: ['ReadWriteMany'] });
    const v2 = f.volume('v2');
    const t0 = f.view.now();
    f.state.tryStartOperation(v1, n1, 'attach', t0);
    f.state.completeOperation(v1, n1, 'attach', false, t0);
    f.state.tryStartOperation(v2, n2, 'detach', t0 + 100);
    f.state.tryStartOperation(v1, n2, 'attach', t0 + 200);
    f.view.setNow(t0 + 300);

    const all = (await f.get('/api/v1/operations')).json;
    assert.deepEqual(all.total, { pending: 2, backoff: 1 });
    assert.deepEqual(all.items, [
      { state: 'backoff', op: 'attach', volume: csiName('v1'), node: 'node-1', volumeWide: false, ageMs: 300, retryInMs: 201, durationMs: 500, attempt: 1 },
      { state: 'pending', op: 'detach', volume: csiName('v2'), node: 'node-2', volumeWide: true, ageMs: 200 },
      { state: 'pending', op: 'attach', volume: csiName('v1'), node: 'node-2', volumeWide: false, ageMs: 100 },
    ]);
    const pending = (await f.get('/api/v1/operations?state=pending&limit=1')).json;
    assert.deepEqual(pending.items.map((o: { state: string; node: string }) => `${o.state}:${o.node}`), ['pending:node-2']);
    assert.equal(pending.items[0].op, 'detach');
    const backoff = (await f.get('/api/v1/operations?state=backoff')).json;
    assert.deepEqual(backoff.items.map((o: { state: string }) => o.state), ['backoff']);

    const bad = await f.get('/api/v1/operations?state=running');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.code, 'FA_ERR_HTTP_BAD_REQUEST');
    await f.close();
  });

  it('counts the failures behind a backoff window and shows the error when it is this operation on this node', async () => {
    const f = createFleet();
    const v = f.volume('flaky', { accessModes: ['ReadWriteMany'] });
    const n = f.node('node-1');
    let t = f.view.now();
    const fail = () => {
      f.state.tryStartOperation(v, n, 'attach', t);
      f.state.completeOperation(v, n, 'attach', false, t);
    };
    fail();
    const info = f.state.volumeInfo(v) as VolumeInfo;
    f.state.setVolumeInfo(v, { ...info, lastError: { op: 'attach', node: 'node-1', message: 'rpc error: code = Internal', at: t } });
    const first = (await f.get('/api/v1/operations?state=backoff')).json.items[0];
    assert.deepEqual([first.attempt, first.durationMs, first.lastError], [1, 500, 'rpc error: code = Internal']);
    for (const _ of [2, 3]) {
      t += 10_000;
      f.view.setNow(t);
      fail();
    }
    const third = (await f.get('/api/v1/operations?state=backoff')).json.items[0];
    assert.deepEqual([third.attempt, third.durationMs], [3, 2000]);
    // The volume's last error on another node is not this row's.
    f.state.setVolumeInfo(v, { ...(f.state.volumeInfo(v) as VolumeInfo), lastError: { op: 'attach', node: 'node-2', message: 'elsewhere', at: t } });
    assert.equal((await f.get('/api/v1/operations?state=backoff')).json.items[0].lastError, undefined);
    await f.close();
  });
});
