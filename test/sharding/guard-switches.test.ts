/**
 * The test-only switches of the sharding guards (ControllerOptions.unsafeShardGuardsOff): read
 * from FLEET_ATTACH_UNSAFE_SHARD_GUARDS by `fleet-attach run` (exit 2 on a wrong value), each
 * guard on by default and actually gone when switched off. Also the refusal of a ReadWriteOnce
 * volume attached before sharding (a VolumeAttachment without a lock).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { main } from '../../src/cli/main.js';
import { CONTROLLER_FLAGS, controllerOptionsFromFlags, UNSAFE_SHARD_GUARDS_ENV, unsafeShardGuardsFromEnv } from '../../src/cli/controller-flags.js';
import { parseFlags } from '../../src/cli/flags.js';
import { createWorldState } from '../../src/cache/world-state.js';
import { isFleetError, isNotOwner } from '../../src/errors/index.js';
import { createFakeEventRecorder } from '../../src/events/fake-event-recorder.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import { createOperationExecutor } from '../../src/operations/operation-executor.js';
import { createFakeAttachablePlugin } from '../../src/plugins/fake-attachable-plugin.js';
import { createVolumePluginManager, type VolumeSpec } from '../../src/plugins/index.js';
import { volumeInfoFor } from '../../src/populator/volume-info.js';
import { lockValue } from '../../src/sharding/volume-lock.js';
import { EPOCH, pvMeta, shardWritesFixture } from './shard-writes-fixture.js';
import type { ShardGuard } from '../../src/manager/controller-options.js';

const invalid = (name: RegExp) => (err: unknown) => isFleetError(err) && err.code === 'FA_ERR_FLAG_INVALID' && name.test(err.message) && err.message.includes(UNSAFE_SHARD_GUARDS_ENV);

describe('FLEET_ATTACH_UNSAFE_SHARD_GUARDS', () => {
  it('reads a comma list of the guards; unset or blank is none', () => {
    assert.equal(unsafeShardGuardsFromEnv(undefined, true), undefined);
    assert.equal(unsafeShardGuardsFromEnv(' ', false), undefined);
    assert.deepEqual(unsafeShardGuardsFromEnv('ownership, live-in-use,ownership', true), ['ownership', 'live-in-use']);
    assert.deepEqual(unsafeShardGuardsFromEnv('volume-lock,status-cas,status-version,live-in-use,ownership', true), ['volume-lock', 'status-cas', 'status-version', 'live-in-use', 'ownership']);
  });

  it('refuses an unknown guard, and the variable without --sharding, naming the variable', () => {
    assert.throws(() => unsafeShardGuardsFromEnv('ownership,fencing', true), invalid(/"fencing"/));
    assert.throws(() => unsafeShardGuardsFromEnv('ownership', false), invalid(/--sharding/));
  });

  it('the lock sweep timings are flags (a mutation run shortens the hold)', () => {
    const opts = (argv: string[]) => controllerOptionsFromFlags(parseFlags(CONTROLLER_FLAGS, argv).flags);
    assert.deepEqual([opts([]).shardLockSweepMs, opts([]).shardLockSweepHoldMs], [30_000, 120_000]);
    const set = opts(['--shard-lock-sweep-period', '2s', '--shard-lock-hold', '20s']);
    assert.deepEqual([set.shardLockSweepMs, set.shardLockSweepHoldMs], [2_000, 20_000]);
  });

  describe('fleet-attach run', () => {
    const saved = process.env[UNSAFE_SHARD_GUARDS_ENV];
    const errors: string[] = [];
    const consoleError = console.error;
    beforeEach(() => {
      errors.length = 0;
      console.error = (...args: unknown[]) => void errors.push(args.join(' '));
    });
    afterEach(() => {
      console.error = consoleError;
      if (saved === undefined) delete process.env[UNSAFE_SHARD_GUARDS_ENV];
      else process.env[UNSAFE_SHARD_GUARDS_ENV] = saved;
    });

    // Both are refused before anything starts (no kubeconfig is read).
    it('exits 2 on an unknown guard', async () => {
      process.env[UNSAFE_SHARD_GUARDS_ENV] = 'volume-lock,no-such-guard';
      assert.equal(await main(['run', '--sharding', '--kubeconfig', '/nonexistent', '--listen', '127.0.0.1:0']), 2);
      assert.match(errors.join('\n'), new RegExp(`${UNSAFE_SHARD_GUARDS_ENV}: unknown guard "no-such-guard"`));
    });

    it('exits 2 when set without --sharding', async () => {
      process.env[UNSAFE_SHARD_GUARDS_ENV] = 'ownership';
      assert.equal(await main(['run', '--kubeconfig', '/nonexistent', '--listen', '127.0.0.1:0']), 2);
      assert.match(errors.join('\n'), new RegExp(`${UNSAFE_SHARD_GUARDS_ENV} is set`));
    });
  });
});

const UNIQUE = 'kubernetes.io/csi/test.csi.k8s.io^h1';

/** A detach of a volume attached to a healthy node whose live Node still lists it in volumesInUse. */
async function detachWhileLiveInUse(skipLiveVolumesInUse: boolean) {
  const state = createWorldState();
  const plugin = createFakeAttachablePlugin({ autoSucceed: true });
  const lookups: string[] = [];
  const executor = createOperationExecutor({
    state, plugins: createVolumePluginManager({ plugins: [plugin] }), metrics: createControllerMetrics({ processMetrics: false }),
    events: createFakeEventRecorder(), podName: () => undefined, now: () => 1_000,
    liveVolumesInUse: async (n) => {
      lookups.push(n);
      return [UNIQUE];
    },
    ...(skipLiveVolumesInUse ? { skipLiveVolumesInUse } : {}),
  });
  const spec: VolumeSpec = { name: 'pv-1', origin: 'pv', source: { type: 'csi', driver: 'test.csi.k8s.io', volumeHandle: 'h1' }, accessModes: ['ReadWriteOnce'], readOnly: false, migrated: false };
  const v = state.internVolume(UNIQUE);
  state.setVolumeInfo(v, volumeInfoFor(UNIQUE, spec, 'kubernetes.io/csi'));
  const n = state.internNode('node-a');
  state.setNodeManaged(n);
  state.setNodeHealthy(n, true);
  state.setVolumesInUse(n, []);
  state.markAttached(v, n);
  assert.equal(executor.startDetach(v, n, true), 'started');
  await executor.idle();
  return { lookups, detaches: plugin.calls.filter((c) => c.op === 'detach').length, state: state.attachState(v, n) };
}

describe("the 'live-in-use' guard", () => {
  it('by default, a detach reads the live Node and does not go ahead while it lists the volume in use', async () => {
    assert.deepEqual(await detachWhileLiveInUse(false), { lookups: ['node-a'], detaches: 0, state: 'uncertain' });
  });

  it('switched off, the detach goes ahead without reading the Node', async () => {
    assert.deepEqual(await detachWhileLiveInUse(true), { lookups: [], detaches: 1, state: 'detached' });
  });
});

describe("the 'status-version' guard", () => {
  const sent = async (guardsOff?: ShardGuard[]) => {
    const { api, writes } = shardWritesFixture({ owned: ['n1'], node: { volumesAttached: ['v1'], resourceVersion: '42' }, ...(guardsOff ? { guardsOff } : {}) });
    api.nodes.set('n1', { name: 'n1', uid: 'u', managed: true, ready: true, outOfService: false, volumesInUse: [], volumesAttached: ['v1'] });
    await writes.nodeStatus.patchNodeStatus('n1', { status: { volumesAttached: [] } });
    return api.callsOf('patchNodeStatus')[0][2];
  };

  it("by default, the node status write tests the list and the Node's resourceVersion as the cache read them", async () => {
    assert.deepEqual(await sent(), { expected: [{ name: 'v1', devicePath: '' }], resourceVersion: '42' });
  });

  it('switched off, it tests the list only; status-cas off, nothing', async () => {
    assert.deepEqual(await sent(['status-version']), { expected: [{ name: 'v1', devicePath: '' }] });
    assert.equal(await sent(['status-cas']), undefined);
  });
});

const VA = (node: string) => ({ apiVersion: 'storage.k8s.io/v1' as const, kind: 'VolumeAttachment' as const, metadata: { name: `csi-${node}` }, spec: { attacher: 'd', nodeName: node, source: { persistentVolumeName: 'pv-1' } } });

describe("the 'ownership' guard", () => {
  it('by default, the writes for a node whose bucket this replica does not hold are refused unsent', async () => {
    const { api, writes } = shardWritesFixture({ owned: ['n2'] });
    api.persistentVolumes.set('pv-1', pvMeta('pv-1'));
    await assert.rejects(writes.volumeAttachments.create(VA('n1')), isNotOwner);
    await assert.rejects(writes.attachLock!.take('pv-1', 'n1'), isNotOwner);
    await assert.rejects(writes.nodeStatus.patchNodeStatus('n1', { status: { volumesAttached: [] } }), isNotOwner);
    assert.deepEqual(api.calls, []);
  });

  it('switched off, this replica writes for every node', async () => {
    const { api, writes, holderOf } = shardWritesFixture({ owned: ['n2'], guardsOff: ['ownership'] });
    api.persistentVolumes.set('pv-1', pvMeta('pv-1'));
    assert.equal(await writes.volumeAttachments.create(VA('n1')), 'created');
    await writes.attachLock!.take('pv-1', 'n1');
    assert.equal(holderOf('pv-1'), lockValue('n1', EPOCH));
    assert.deepEqual(api.calls.map((c) => c.method).filter((m) => m !== 'getPersistentVolume'), ['createVolumeAttachment', 'patchPersistentVolume']);
  });
});

describe('a ReadWriteOnce volume attached before sharding (a VolumeAttachment, no lock)', () => {
  it('is not attached to a second node: the lock just taken is given back and the attach refused as a Multi-Attach', async () => {
    const { api, attached, writes, holderOf } = shardWritesFixture({ owned: ['n1', 'n2'] });
    api.persistentVolumes.set('pv-1', pvMeta('pv-1'));
    attached.set('pv-1', new Set(['n2']));
    await assert.rejects(writes.attachLock!.take('pv-1', 'n1'), (err: unknown) => isFleetError(err) && err.code === 'FA_ERR_VOLUME_LOCKED' && /Multi-Attach.*pv-1.*node n2/.test(err.message));
    assert.equal(holderOf('pv-1'), undefined, 'the lock is free again');
    // Its own node may have it: the VolumeAttachment is there already.
    await writes.attachLock!.take('pv-1', 'n2');
    assert.equal(holderOf('pv-1'), lockValue('n2', EPOCH));
  });

  it('a VolumeAttachment on the node taking the lock does not refuse it', async () => {
    const { api, attached, writes, holderOf } = shardWritesFixture({ owned: ['n1', 'n2'] });
    api.persistentVolumes.set('pv-1', pvMeta('pv-1'));
    attached.set('pv-1', new Set(['n1']));
    await writes.attachLock!.take('pv-1', 'n1');
    assert.equal(holderOf('pv-1'), lockValue('n1', EPOCH));
  });
});
