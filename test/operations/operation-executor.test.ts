// A volume-wide operation (a ReadWriteOnce volume's attach or detach, I1-I2) is keyed by the
// volume alone, so nothing in the desired or actual state need keep its node while the call is
// on the wire. Its outcome must still land on the node it was sent for (J1-J3), and its key must
// be released (I2), even when that node was deleted meanwhile and a new node came along.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { createFakeEventRecorder } from '../../src/events/fake-event-recorder.js';
import { createControllerMetrics } from '../../src/metrics/controller-metrics.js';
import { createOperationExecutor, type AttachLock } from '../../src/operations/operation-executor.js';
import { createFakeAttachablePlugin } from '../../src/plugins/fake-attachable-plugin.js';
import { createVolumePluginManager, type VolumeSpec } from '../../src/plugins/index.js';
import { volumeInfoFor, volumeInfoOf } from '../../src/populator/volume-info.js';

const UNIQUE = 'kubernetes.io/csi/test.csi.k8s.io^h1';

/**
 * An executor over a ReadWriteOnce CSI volume; `live` is what the live Node read (F9) answers,
 * and every node it is asked for is recorded in `lookups`.
 */
function executorFixture(o: { live?: readonly string[] | 'not-found'; autoSucceed?: boolean; attachLock?: AttachLock } = {}) {
  const state = createWorldState();
  const plugin = createFakeAttachablePlugin({ autoSucceed: o.autoSucceed ?? false });
  const lookups: string[] = [];
  const executor = createOperationExecutor({
    state,
    plugins: createVolumePluginManager({ plugins: [plugin] }),
    metrics: createControllerMetrics({ processMetrics: false }),
    events: createFakeEventRecorder(),
    podName: () => undefined,
    liveVolumesInUse: async (nodeName) => {
      lookups.push(nodeName);
      return o.live ?? [];
    },
    now: () => 1_000,
    ...(o.attachLock ? { attachLock: o.attachLock } : {}),
  });
  const unique = UNIQUE;
  const spec: VolumeSpec = { name: 'pv-1', origin: 'pv', source: { type: 'csi', driver: 'test.csi.k8s.io', volumeHandle: 'h1' }, accessModes: ['ReadWriteOnce'], readOnly: false, migrated: false };
  const v = state.internVolume(unique);
  state.setVolumeInfo(v, volumeInfoFor(unique, spec, 'kubernetes.io/csi'));
  state.setMultiAttachForbidden(v, true);
  const node = (name: string) => {
    const n = state.internNode(name);
    state.setNodeManaged(n);
    state.setNodeHealthy(n, true);
    state.setVolumesInUse(n, []);
    return n;
  };
  return { state, plugin, executor, v, node, unique, lookups };
}

/** An attach to node-a whose pod is evicted and whose Node is deleted while the call runs. */
function fixture() {
  const f = executorFixture();
  const { state, executor, v } = f;
  const a = f.node('node-a');
  state.addDesiredPod(v, a, 'pod-1');
  assert.equal(executor.startAttach(v, a), 'started');
  state.removeDesiredPod(v, a, 'pod-1');
  assert.equal(state.removeNode(a), true);
  return { ...f, a };
}

test('a volume-wide attach that succeeds after its node was deleted is recorded on that node, not on a newcomer', async () => {
  const { state, plugin, executor, v, a, node } = fixture();
  const b = node('node-b'); // the deleted node's id must not be handed out while the call runs
  assert.notEqual(b, a);
  plugin.calls[0]!.finish();
  await executor.idle();
  assert.equal(state.attachState(v, b), 'detached');
  assert.deepEqual(state.volumesToReport(b), []);
  assert.equal(state.findNode('node-a'), a, 'the deleted node stays while it has an attachment');
  assert.equal(state.attachState(v, a), 'attached');
  assert.deepEqual(state.pendingOperations(), []);
  // Once detached and its status written (or found gone, K3), nothing holds the deleted node.
  assert.equal(executor.startDetach(v, a, false), 'started');
  plugin.calls[1]!.finish();
  await executor.idle();
  assert.equal(state.findNode('node-a'), a, 'its status write is still due');
  state.clearStatusUpdateNeeded(a);
  assert.equal(state.findNode('node-a'), undefined);
});

test('a volume-wide attach that fails after its node was deleted releases the volume for other nodes', async () => {
  const { state, plugin, executor, v, a, node } = fixture();
  plugin.calls[0]!.finish(new Error('attach timed out'));
  await executor.idle();
  assert.deepEqual(state.pendingOperations(), []);
  assert.equal(state.attachState(v, a), 'uncertain', 'J2: the failed attach may have happened');
  // An attach elsewhere waits out the attach backoff; the uncertain pair can be detached at once
  // (an attach failure does not delay a detach, I3).
  const c = node('node-c');
  state.addDesiredPod(v, c, 'pod-2');
  assert.equal(executor.startAttach(v, c), 'backoff');
  assert.equal(executor.startDetach(v, a, false), 'started');
  plugin.calls[1]!.finish();
  await executor.idle();
  assert.equal(state.attachState(v, a), 'detached');
  // The detach's success reset the volume's backoff (I3): the attach goes now.
  assert.equal(executor.startAttach(v, c), 'started');
  assert.equal(plugin.calls[2]?.nodeName, 'node-c');
});

test('the hold survives the pair table growing as the operation starts, and is released on the node it started on', () => {
  const state = createWorldState({ capacity: { volumes: 16, pairs: 16 } });
  const v = state.internVolume('kubernetes.io/csi/test.csi.k8s.io^h2');
  state.setMultiAttachForbidden(v, true);
  const node = (name: string) => {
    const n = state.internNode(name);
    state.setNodeManaged(n);
    state.setNodeHealthy(n, true);
    return n;
  };
  const a = node('node-a');
  const b = node('node-b');
  state.markAttached(v, a); // the volume's home slot: (v, b) goes to the overflow region, which grows the table
  assert.equal(state.tryStartOperation(v, b, 'attach', 0), 'started');
  state.addDesiredPod(v, b, 'pod-1');
  state.removeDesiredPod(v, b, 'pod-1');
  assert.equal(state.removeNode(b), true);
  assert.equal(state.findNode('node-b'), b, 'held while the attach is on the wire');
  assert.notEqual(node('node-c'), b);
  // A volume-wide key is matched by volume and operation alone: whatever node the caller names,
  // the hold released is the one on the node the operation started on.
  assert.equal(state.completeOperation(v, a, 'attach', false, 1), true);
  assert.deepEqual(state.pendingOperations(), []);
  assert.equal(state.findNode('node-b'), undefined);
  assert.equal(state.attachState(v, a), 'attached');
});

// Upstream's operation generator fails before an operation exists when no plugin matches the
// volume: nothing is called, the actual state and events are left alone, and nothing backs off.
test('an operation with no plugin for its volume leaves the actual state alone and does not back off', async () => {
  const state = createWorldState();
  const plugin = createFakeAttachablePlugin();
  plugin.attachable = () => false; // e.g. its CSIDriver stopped requiring attach after the pass planned it
  const events = createFakeEventRecorder();
  const metrics = createControllerMetrics({ processMetrics: false });
  const executor = createOperationExecutor({
    state,
    plugins: createVolumePluginManager({ plugins: [plugin] }),
    metrics,
    events,
    podName: (uid) => ({ namespace: 'ns', name: uid }),
    liveVolumesInUse: async () => [],
    now: () => 1_000,
  });
  const n = state.internNode('node-a');
  state.setNodeManaged(n);
  state.setNodeHealthy(n, true);
  state.setVolumesInUse(n, []);

  const unique = 'kubernetes.io/csi/test.csi.k8s.io^h3';
  const spec: VolumeSpec = { name: 'pv-3', origin: 'pv', source: { type: 'csi', driver: 'test.csi.k8s.io', volumeHandle: 'h3' }, accessModes: ['ReadWriteOnce'], readOnly: false, migrated: false };
  const v = state.internVolume(unique);
  state.setVolumeInfo(v, volumeInfoFor(unique, spec, 'kubernetes.io/csi'));
  state.setMultiAttachForbidden(v, true);
  state.addDesiredPod(v, n, 'pod-1');
  assert.equal(executor.startAttach(v, n), 'no-plugin');
  await executor.idle();
  assert.equal(state.attachState(v, n), 'detached', 'not Uncertain: nothing was sent');
  assert.deepEqual(state.pendingOperations(), []);
  assert.deepEqual(state.backoffOperations(1_000), []);
  assert.deepEqual(events.events, [], 'no FailedAttachVolume: the operation never ran');
  assert.equal(plugin.calls.length, 0);
  assert.match(volumeInfoOf(state, v)?.lastError?.message ?? '', /no attachable plugin/);
  assert.doesNotMatch(await metrics.registry.metrics(), /storage_operation_duration_seconds_count\{/);
  assert.equal(executor.startAttach(v, n), 'no-plugin', 'the next pass tries again');
  plugin.attachable = () => true;
  assert.equal(executor.startAttach(v, n), 'started', 'and goes once a plugin matches');
  plugin.calls[0]!.finish(new Error('attach timed out'));
  await executor.idle();
  assert.equal(volumeInfoOf(state, v)?.lastError?.message, 'attach timed out');
  // The plugin goes away again: the refusal is the last error again, not the stale failure.
  plugin.attachable = () => false;
  assert.equal(executor.startAttach(v, n), 'no-plugin');
  await executor.idle();
  assert.match(volumeInfoOf(state, v)?.lastError?.message ?? '', /no attachable plugin/);
  state.markDetached(v, n); // the failed attach left it Uncertain (J2)

  // A volume known only from node status, of a plugin this controller does not have.
  const other = state.internVolume('example.com/unknown/x1');
  state.markAttached(other, n);
  assert.equal(executor.checkDetachable(other, n), false);
  assert.equal(executor.startDetach(other, n, false), 'no-plugin');
  await executor.idle();
  assert.equal(state.attachState(other, n), 'attached', 'still attached as far as anyone knows');
  assert.deepEqual(state.pendingOperations(), []);
  assert.deepEqual(state.backoffFor(other, n, 1_000), []);
  assert.equal(plugin.calls.length, 1);
  assert.equal(executor.checkDetachable(v, n), true);
});

// F9: a detach that is not forced (verifySafeToDetach) first reads the Node live from the API
// server and fails, sending nothing, while the volume is still in its status.volumesInUse: the
// controller's own copy may be stale (a watch behind), and this check is what keeps a mounted
// volume attached then. A forced detach (timeout, out-of-service) skips it, and so does a Node
// the API server no longer has (NotFound).

/** An attached volume on a healthy node whose cached volumesInUse says unmounted (stale). */
function attachedOnHealthyNode(live: readonly string[] | 'not-found') {
  const f = executorFixture({ live, autoSucceed: true });
  const n = f.node('node-a');
  f.state.markAttached(f.v, n);
  return { ...f, n };
}

test('a safe detach of a volume the live Node still lists in volumesInUse fails without a detach call (F9, J3)', async () => {
  const { state, plugin, executor, lookups, v, n } = attachedOnHealthyNode([UNIQUE]);
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
    const { state, plugin, executor, lookups, v, n } = attachedOnHealthyNode([UNIQUE]);
    assert.equal(executor.startDetach(v, n, false), 'started');
    await executor.idle();
    assert.deepEqual(lookups, [], 'a forced detach reads no Node');
    assert.equal(plugin.calls.filter((c) => c.op === 'detach').length, 1);
    assert.equal(state.attachState(v, n), 'detached');
  }
  {
    const { state, plugin, executor, lookups, v, n } = attachedOnHealthyNode('not-found');
    assert.equal(executor.startDetach(v, n, true), 'started');
    await executor.idle();
    assert.deepEqual(lookups, ['node-a']);
    assert.equal(plugin.calls.filter((c) => c.op === 'detach').length, 1);
    assert.equal(state.attachState(v, n), 'detached');
  }
});

test('with an attach lock, a ReadWriteOnce attach takes its PV lock first, a lock held by another node fails it unsent, and a detach gives the lock up once done', async () => {
  const holders = new Map<string, string>();
  const taken: string[] = [];
  const attachLock: AttachLock = {
    async take(pv, node) {
      const holder = holders.get(pv);
      if (holder !== undefined && holder !== node) throw new Error(`attach lock of ${pv} held by node ${holder}`);
      holders.set(pv, node);
      taken.push(`${pv}@${node}`);
    },
    async release(pv, node) {
      if (holders.get(pv) === node) holders.delete(pv);
    },
  };
  const { state, plugin, executor, v, node } = executorFixture({ attachLock, autoSucceed: true });
  const a = node('node-a');
  const b = node('node-b');
  state.addDesiredPod(v, a, 'pod-1');
  assert.equal(executor.startAttach(v, a), 'started');
  await executor.idle();
  assert.equal(state.attachState(v, a), 'attached');
  assert.deepEqual(taken, ['pv-1@node-a']);
  // Another replica's node wants it while node-a holds the lock: nothing reaches the plugin.
  state.addDesiredPod(v, b, 'pod-2');
  assert.equal(executor.startAttach(v, b), 'started');
  await executor.idle();
  assert.deepEqual(plugin.calls.map((c) => `${c.op} ${c.nodeName}`), ['attach node-a']);
  assert.notEqual(state.attachState(v, b), 'attached');
  assert.match(String((volumeInfoOf(state, v) as { lastError?: { message: string } }).lastError?.message), /held by node node-a/);
  // Detached from node-a (its VolumeAttachment gone): the lock is free again.
  assert.equal(executor.startDetach(v, a, false), 'started');
  await executor.idle();
  assert.equal(state.attachState(v, a), 'detached');
  assert.equal(holders.get('pv-1'), undefined);
});
