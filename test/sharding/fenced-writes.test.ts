/**
 * Fenced writes: every write asks `mayAct(node)` just before it is sent and is refused unsent
 * with FA_ERR_NOT_OWNER when the answer is no, the lock's write included when ownership ends
 * between its read and its write. Against the simulator: a zombie owner that still believes it
 * may act loses to the new owner's first status write (the data-level fence).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isNotLeader, isNotOwner } from '../../src/errors/index.js';
import { createKubeApiClient } from '../../src/kube/api-client.js';
import { loadKubeConfig } from '../../src/kube/kube-config.js';
import type { NodeRecord } from '../../src/kube/projections/node.js';
import { createFencedWrites } from '../../src/sharding/fenced-writes.js';
import { ATTACH_LOCK_ANNOTATION, createFakeVolumeLock, lockValue } from '../../src/sharding/volume-lock.js';
import { startSimulator } from '../../src/sim/server/index.js';
import { FakeKubeApiClient } from '../kube/fake-api-client.js';

const VA = { metadata: { name: 'csi-1' }, spec: { attacher: 'd', nodeName: 'n1', source: { persistentVolumeName: 'pv-1' } } };
const V = { name: 'kubernetes.io/csi/d^h', devicePath: '' };

function nodeRecord(name: string, volumesAttached: string[] = []): NodeRecord {
  return { name, uid: `uid-${name}`, managed: true, ready: true, outOfService: false, volumesInUse: [], volumesAttached };
}

function setup(owned: Set<string>) {
  const api = new FakeKubeApiClient();
  api.nodes.set('n1', nodeRecord('n1'));
  api.nodes.set('n2', nodeRecord('n2'));
  api.persistentVolumes.set('pv-1', { name: 'pv-1', uid: 'u', resourceVersion: '1', annotations: undefined, labels: undefined });
  const fenced = createFencedWrites({ api, mayAct: (node) => owned.has(node) });
  return { api, fenced };
}

describe('fenced writes', () => {
  it('refuses every write for a node this replica does not own, unsent, with FA_ERR_NOT_OWNER', async () => {
    const { api, fenced } = setup(new Set(['n2']));
    const refused = (err: unknown) => isNotOwner(err) && !isNotLeader(err) && /n1/.test((err as Error).message);
    await assert.rejects(fenced.createVolumeAttachment(VA), refused);
    await assert.rejects(fenced.deleteVolumeAttachment('csi-1', 'n1', { uid: 'x' }), refused);
    await assert.rejects(fenced.patchNodeStatus('n1', [V], { expected: [] }), refused);
    await assert.rejects(fenced.takeVolumeLock('pv-1', 'n1', { bucket: 1, epoch: 1 }), refused);
    await assert.rejects(fenced.releaseVolumeLock('pv-1', 'n1'), refused);
    assert.deepEqual(api.calls, []);
    assert.equal(api.persistentVolumes.get('pv-1')?.annotations, undefined);
  });

  it('forwards the writes for an owned node with their arguments and answers', async () => {
    const { api, fenced } = setup(new Set(['n1']));
    assert.equal(await fenced.createVolumeAttachment(VA), 'created');
    assert.equal(await fenced.patchNodeStatus('n1', [V], { expected: [] }), 'patched');
    assert.equal(await fenced.patchNodeStatus('n1', [], { expected: [] }), 'conflict');
    assert.equal(await fenced.patchNodeStatus('n1', null), 'patched');
    assert.equal(await fenced.deleteVolumeAttachment('csi-1', 'n1', { uid: 'u-1', resourceVersion: '7' }), 'deleted');
    assert.deepEqual(await fenced.takeVolumeLock('pv-1', 'n1', { bucket: 4, epoch: 2 }), { outcome: 'taken' });
    assert.equal(api.persistentVolumes.get('pv-1')?.annotations?.[ATTACH_LOCK_ANNOTATION], lockValue('n1', 2));
    assert.deepEqual(await fenced.releaseVolumeLock('pv-1', 'n1'), { outcome: 'released' });
    assert.deepEqual(
      api.calls.map((c) => [c.method, ...c.args.slice(0, 1)]),
      [
        ['createVolumeAttachment', VA],
        ['patchNodeStatus', 'n1'],
        ['patchNodeStatus', 'n1'],
        ['patchNodeStatus', 'n1'],
        ['deleteVolumeAttachment', 'csi-1'],
        ['getPersistentVolume', 'pv-1'],
        ['patchPersistentVolume', 'pv-1'],
        ['getPersistentVolume', 'pv-1'],
        ['patchPersistentVolume', 'pv-1'],
      ],
    );
    assert.deepEqual(api.callsOf('deleteVolumeAttachment'), [['csi-1', { uid: 'u-1', resourceVersion: '7' }]]);
    assert.deepEqual(api.callsOf('patchNodeStatus')[2], ['n1', null], 'no CAS asked: the plain merge patch');
  });

  it('asks again before the lock writes: ownership lost after the read sends no write', async () => {
    // Arrange: the lock's read waits; ownership ends meanwhile.
    const owned = new Set(['n1']);
    const { api, fenced } = setup(owned);
    api.hold('getPersistentVolume');
    const take = fenced.takeVolumeLock('pv-1', 'n1', { bucket: 1, epoch: 1 });
    await new Promise((r) => setImmediate(r));

    // Act
    owned.delete('n1');
    api.release('getPersistentVolume');

    // Assert
    await assert.rejects(take, isNotOwner);
    assert.deepEqual(api.callsOf('patchPersistentVolume'), []);
    assert.equal(api.persistentVolumes.get('pv-1')?.annotations, undefined);
  });

  it('uses the lock it is given', async () => {
    const lock = createFakeVolumeLock();
    const fenced = createFencedWrites({ api: new FakeKubeApiClient(), mayAct: () => true, lock });
    assert.deepEqual(await fenced.takeVolumeLock('pv-9', 'n1', { bucket: 3, epoch: 8 }), { outcome: 'taken' });
    assert.deepEqual(lock.holderOf('pv-9'), { node: 'n1', epoch: 8, bucket: 3 });
  });

  it('a zombie owner that still believes it may act loses to the new owner\'s first status write', async () => {
    const sim = await startSimulator({});
    const kcs = [loadKubeConfig({ yaml: sim.kubeconfig, env: {} }), loadKubeConfig({ yaml: sim.kubeconfig, env: {} })];
    try {
      sim.store.create('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: {}, status: { volumesAttached: [V] } });
      const zombieApi = createKubeApiClient({ kc: kcs[0]! });
      const ownerApi = createKubeApiClient({ kc: kcs[1]! });
      const zombie = createFencedWrites({ api: zombieApi, mayAct: () => true });
      const owner = createFencedWrites({ api: ownerApi, mayAct: () => true });
      const other = { name: 'kubernetes.io/csi/d^other', devicePath: '' };

      // Both read the list; the new owner writes first; the zombie's write, derived from its read, fails.
      const read = async (api: typeof zombieApi) => (await api.getNode('n1'))!.volumesAttached.map((name) => ({ name, devicePath: '' }));
      const zombieRead = await read(zombieApi);
      const ownerRead = await read(ownerApi);
      assert.equal(await owner.patchNodeStatus('n1', [...ownerRead, other], { expected: ownerRead }), 'patched');
      assert.equal(await zombie.patchNodeStatus('n1', [], { expected: zombieRead }), 'conflict');

      const stored = sim.store.get('nodes', undefined, 'n1')!.status as { volumesAttached: unknown };
      assert.deepEqual(stored.volumesAttached, [V, other]);
    } finally {
      for (const kc of kcs) kc.close();
      await sim.stop();
    }
  });
});
