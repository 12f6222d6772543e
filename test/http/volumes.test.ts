import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { VolumeInfo } from '../../src/http/inspection-view.js';
import { attachmentName } from '../../src/plugins/csi/attachment-name.js';
import { DRIVER, PLUGIN_LABEL, createFleet, csiName } from './fleet-fixture.js';

const enc = encodeURIComponent;

describe('/api/v1/volumes/{uniqueName}', () => {
  it('explains a multi-attach wait through the node holding the volume', async () => {
    const f = createFleet();
    const v = f.volume('disk-1');
    const a = f.node('node-a', { inUse: [csiName('disk-1')] });
    const b = f.node('node-b');
    f.attach(v, a);
    f.want(v, b, 'uid-b', { namespace: 'db', name: 'pg-0' });

    const r = await f.get(`/api/v1/volumes/${enc(csiName('disk-1'))}`);
    assert.equal(r.status, 200);
    const d = r.json;
    assert.equal(d.name, csiName('disk-1'));
    assert.equal(d.specName, 'pv-disk-1');
    assert.equal(d.pvName, 'pv-disk-1');
    assert.equal(d.plugin, PLUGIN_LABEL);
    assert.equal(d.driver, DRIVER);
    assert.deepEqual(d.accessModes, ['ReadWriteOnce']);
    assert.equal(d.multiAttach, 'forbidden');
    assert.deepEqual(d.attachedTo, ['node-a']);
    assert.equal(d.nodeCount, 2);
    const want = 'attach to node-b: attached to node-a and multi-attach is forbidden, waiting for detach there; '
      + 'detach from node-a: still mounted, node healthy, will not force';
    assert.equal(d.waitingFor, `${want} (+1 more)`);
    const nb = d.nodes.find((n: { node: string }) => n.node === 'node-b');
    assert.equal(nb.waitingFor, want);
    assert.deepEqual(nb.pods, [{ uid: 'uid-b', namespace: 'db', name: 'pg-0' }]);
    assert.equal(nb.attachmentName, attachmentName('disk-1', DRIVER, 'node-b'));

    // The raw name, slashes and all, reaches the same volume.
    const raw = await f.get(`/api/v1/volumes/${csiName('disk-1')}`);
    assert.equal(raw.status, 200);
    assert.equal(raw.json.name, csiName('disk-1'));

    // The holder unmounts: its detach goes first, and the attach waits for that.
    f.state.setVolumesInUse(a, []);
    const after = (await f.get(`/api/v1/volumes/${enc(csiName('disk-1'))}`)).json;
    assert.match(after.waitingFor, /^attach to node-b: .*; detach from node-a: not mounted, detach starts on the next pass, after removing it from node status/);
    await f.close();
  });

  it('shows the last error and the backoff of a failing volume', async () => {
    const f = createFleet();
    const v = f.volume('bad', { accessModes: ['ReadWriteMany'] });
    const n = f.node('node-1');
    f.want(v, n, 'u1');
    const now = f.view.now();
    f.state.tryStartOperation(v, n, 'attach', now);
    f.state.completeOperation(v, n, 'attach', false, now);
    const info = f.state.volumeInfo(v) as VolumeInfo;
    f.state.setVolumeInfo(v, { ...info, lastError: { op: 'attach', node: 'node-1', message: 'rpc error: code = Internal', at: now } });
    f.view.advance(100);

    const d = (await f.get(`/api/v1/volumes/${enc(csiName('bad'))}?limit=5`)).json;
    assert.equal(d.multiAttach, 'allowed');
    assert.deepEqual(d.lastError, { op: 'attach', node: 'node-1', message: 'rpc error: code = Internal', ageMs: 100 });
    assert.equal(d.backoffRetryInMs, 401);
    assert.equal(d.waitingFor, 'attach to node-1: last attach failed: rpc error: code = Internal; retry in 401ms');
    await f.close();
  });

  it('serves a volume known only from node status (no info) and 404s an unknown one', async () => {
    const f = createFleet();
    const name = 'kubernetes.io/csi/other.csi^h/with/slash';
    const v = f.state.internVolume(name);
    const n = f.node('node-1', { inUse: null });
    f.attach(v, n);
    const d = (await f.get(`/api/v1/volumes/${enc(name)}`)).json;
    assert.equal(d.specName, undefined);
    assert.deepEqual(d.accessModes, []);
    assert.equal(d.multiAttach, 'allowed');
    assert.equal(d.nodes[0].mounted, true); // volumesInUse never observed (D3)
    assert.equal(d.nodes[0].attachmentName, undefined);

    const missing = await f.get(`/api/v1/volumes/${enc(csiName('nope'))}`);
    assert.equal(missing.status, 404);
    assert.equal(missing.json.code, 'FA_ERR_HTTP_VOLUME_NOT_FOUND');
    assert.equal((await f.get(`/api/v1/volumes/${enc(name)}?limit=0`)).status, 400);
    await f.close();
  });
});

describe('/api/v1/volumes', () => {
  it('finds the volumes of a PV', async () => {
    const f = createFleet();
    f.volume('x', { pv: 'pv-x' });
    f.volume('y', { pv: 'pv-y' });
    const r = await f.get('/api/v1/volumes?pv=pv-x');
    assert.deepEqual(r.json.items.map((i: { name: string }) => i.name), [csiName('x')]);
    assert.equal(r.json.continue, undefined);
    assert.deepEqual((await f.get('/api/v1/volumes?pv=unknown')).json, { items: [] });
    assert.equal((await f.get('/api/v1/volumes?pv=')).status, 400);
    await f.close();
  });

  it('pages through every volume exactly once', async () => {
    const f = createFleet();
    const n = f.node('n');
    const names: string[] = [];
    for (let i = 0; i < 23; i++) {
      const v = f.volume(`v${i}`);
      f.want(v, n, `u${i}`);
      names.push(csiName(`v${i}`));
    }
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const r = await f.get(`/api/v1/volumes?limit=5${token ? `&continue=${token}` : ''}`);
      assert.equal(r.status, 200);
      seen.push(...r.json.items.map((i: { name: string }) => i.name));
      token = r.json.continue;
    } while (token !== undefined);
    assert.deepEqual(seen.sort(), names.sort());
    assert.equal((await f.get(`/api/v1/volumes?pv=a&continue=${(await f.get('/api/v1/volumes?limit=1')).json.continue}`)).status, 400);
    await f.close();
  });
});
