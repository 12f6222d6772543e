// F9: a detach that is not forced (verifySafeToDetach) first reads the Node live from the API
// server and fails, sending nothing, while the volume is still in its status.volumesInUse: the
// controller's own copy of volumesInUse may be stale (a watch behind), and this check is what
// keeps a mounted volume attached then. A forced detach (timeout, out-of-service) skips it, and
// so does a Node the API server no longer has (NotFound).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { createFakeEventRecorder } from '../../src/events/fake-event-recorder.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import { createOperationExecutor } from '../../src/operations/operation-executor.js';
import { createFakeAttachablePlugin } from '../../src/plugins/fake-attachable-plugin.js';
import { createVolumePluginManager, type VolumeSpec } from '../../src/plugins/index.js';
import { volumeInfoFor, volumeInfoOf } from '../../src/populator/volume-info.js';

const UNIQUE = 'kubernetes.io/csi/test.csi.k8s.io^h9';

/** An attached, reported volume on a healthy node whose cached volumesInUse says unmounted. */
function fixture(live: readonly string[] | 'not-found') {
  const state = createWorldState();
  const plugin = createFakeAttachablePlugin({ autoSucceed: true });
  const lookups: string[] = [];
  const executor = createOperationExecutor({
    state,
    plugins: createVolumePluginManager({ plugins: [plugin] }),
    metrics: createControllerMetrics({ processMetrics: false }),
    events: createFakeEventRecorder(),
    podName: () => undefined,
    liveVolumesInUse: async (nodeName) => {
      lookups.push(nodeName);
      return live;
    },
    now: () => 1_000,
  });
  const spec: VolumeSpec = { name: 'pv-9', origin: 'pv', source: { type: 'csi', driver: 'test.csi.k8s.io', volumeHandle: 'h9' }, accessModes: ['ReadWriteOnce'], readOnly: false, migrated: false };
  const v = state.internVolume(UNIQUE);
  state.setVolumeInfo(v, volumeInfoFor(UNIQUE, spec, 'kubernetes.io/csi'));
  state.setMultiAttachForbidden(v, true);
  const n = state.internNode('node-a');
  state.setNodeManaged(n);
  state.setNodeHealthy(n, true);
  state.setVolumesInUse(n, []); // the cached copy: not mounted (stale)
  state.markAttached(v, n);
  return { state, plugin, executor, lookups, v, n };
}

test('a safe detach of a volume the live Node still lists in volumesInUse fails without a detach call (F9, J3)', async () => {
  const { state, plugin, executor, lookups, v, n } = fixture([UNIQUE]);
  assert.equal(executor.startDetach(v, n, true), 'started');
  await executor.idle();
  assert.deepEqual(lookups, ['node-a'], 'the Node is read live');
  assert.deepEqual(plugin.calls.filter((c) => c.op === 'detach'), [], 'nothing is sent to the plugin');
  assert.equal(state.attachState(v, n), 'uncertain', 'J3: a failed detach leaves the entry Uncertain');
  assert.match(volumeInfoOf(state, v)?.lastError?.message ?? '', /still in use by node/);
  assert.deepEqual(state.pendingOperations(), []);
  assert.equal(state.isSafeToRetry(v, n, 'detach', 1_000), false, 'the failure backs the detach off (I3)');
});

test('a forced detach skips the live check; a Node the API server no longer has skips it too (F9)', async () => {
  {
    const { state, plugin, executor, lookups, v, n } = fixture([UNIQUE]);
    assert.equal(executor.startDetach(v, n, false), 'started');
    await executor.idle();
    assert.deepEqual(lookups, [], 'a forced detach reads no Node');
    assert.equal(plugin.calls.filter((c) => c.op === 'detach').length, 1);
    assert.equal(state.attachState(v, n), 'detached');
  }
  {
    const { state, plugin, executor, lookups, v, n } = fixture('not-found');
    assert.equal(executor.startDetach(v, n, true), 'started');
    await executor.idle();
    assert.deepEqual(lookups, ['node-a']);
    assert.equal(plugin.calls.filter((c) => c.op === 'detach').length, 1);
    assert.equal(state.attachState(v, n), 'detached');
  }
});
