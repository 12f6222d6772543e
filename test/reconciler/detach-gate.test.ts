// F8: a detach waits for its node's status write whenever the node needs one, and is not sent
// when that write fails, whether or not the volume itself was in the node's report set.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWorldState, type NodeId, type VolumeId } from '../../src/cache/world-state.js';
import { createPlanner } from '../../src/kernel/planner.js';
import { createOperationExecutor, type DetachGate } from '../../src/operations/operation-executor.js';
import { createFakeAttachablePlugin } from '../../src/plugins/fake-attachable-plugin.js';
import { createVolumePluginManager } from '../../src/plugins/index.js';
import { createReconciler } from '../../src/reconciler/reconciler.js';
import { createFakeNodeStatusUpdater } from '../../src/statusupdater/fake-node-status-updater.js';
import { quietReconcilerDeps, refusingExecutor } from './reconciler-fixture.js';
import { volumeInfoFor } from '../../src/populator/volume-info.js';
import type { VolumeSpec } from '../../src/plugins/volume-spec.js';

test('the detach of an uncertain volume on a node needing a status write is gated on that write (F8)', async () => {
  const state = createWorldState();
  const node = state.internNode('node-a');
  state.setNodeManaged(node);
  state.setNodeHealthy(node, true);
  state.setVolumesInUse(node, []); // nothing mounted
  const reported = state.internVolume('csi/reported');
  state.addDesiredPod(reported, node, 'pod-1');
  state.markAttached(reported, node); // reported and wanted: it flags the node
  const uncertain = state.internVolume('csi/uncertain');
  state.markUncertain(uncertain, node); // never reported; wanted by no pod: the plan detaches it
  assert.ok(state.statusUpdateNeeded(node));

  const statusUpdater = createFakeNodeStatusUpdater({ outcome: 'failed' });
  const gates: Array<DetachGate | undefined> = [];
  const executor = refusingExecutor({
    startDetach(v: VolumeId, n: NodeId, _verifySafe: boolean, gate?: DetachGate) {
      gates.push(gate);
      return state.tryStartOperation(v, n, 'detach', 1_000);
    },
  });
  const planner = createPlanner({ state, workers: 0 });
  const reconciler = createReconciler({
    ...quietReconcilerDeps(),
    statusUpdater,
    state, planner, executor,
    loopPeriodMs: 100,
    now: () => 1_000,
  });
  try {
    await reconciler.runOnce();
  } finally {
    await planner.close();
  }
  assert.equal(gates.length, 1);
  const gate = gates[0];
  assert.ok(gate, 'the detach waits for the node write');
  assert.equal(await gate.after, false, 'the failed write closes the gate: nothing is sent');
  assert.deepEqual(statusUpdater.nodeWrites, ['node-a']);
  gate.onSkipped(); // an uncertain volume is never reported, so nothing goes back
  assert.deepEqual(state.volumesToReport(node), [reported]);
});

test('a forced detach is counted once it is sent, not when its status write failed (F11)', async () => {
  const state = createWorldState();
  const node = state.internNode('node-a');
  state.setNodeManaged(node);
  state.setNodeHealthy(node, false);
  state.setNodeOutOfService(node, true); // F5: detach without waiting for the unmount
  const v = state.internVolume('csi/mounted');
  state.setVolumesInUse(node, ['csi/mounted']);
  state.markAttached(v, node); // reported, wanted by no pod
  const metrics = quietReconcilerDeps().metrics;
  const forced = async () => (await metrics.forcedDetaches.get()).values.filter((x) => x.value > 0).map((x) => `${x.labels.reason}=${x.value}`);
  const run = async (outcome: 'failed' | 'written') => {
    const executor = refusingExecutor({ startDetach: (vol: VolumeId, n: NodeId) => state.tryStartOperation(vol, n, 'detach', 1_000) });
    const planner = createPlanner({ state, workers: 0 });
    const reconciler = createReconciler({ ...quietReconcilerDeps(), metrics, statusUpdater: createFakeNodeStatusUpdater({ outcome }), state, planner, executor, loopPeriodMs: 100, now: () => 1_000 });
    try {
      await reconciler.runOnce();
      await new Promise((r) => setImmediate(r)); // the gate's outcome
    } finally {
      await planner.close();
    }
  };
  await run('failed');
  assert.deepEqual(await forced(), [], 'nothing was sent');
  state.releaseOperation(v, node, 'detach'); // what the executor does with a closed gate
  state.addToReportSet(v, node);
  await run('written');
  assert.deepEqual(await forced(), ['out-of-service=1']);
});

// F10 for a detach that cannot start: upstream's DetachVolume fails before the operation exists
// when no plugin matches, and F10 puts the volume back into the report set; here it never leaves it.
test('a detach whose volume no plugin matches leaves node status as it is and is not counted as forced (F10, F11)', async () => {
  const state = createWorldState();
  const node = state.internNode('node-a');
  state.setNodeManaged(node);
  state.setNodeHealthy(node, false);
  state.setNodeOutOfService(node, true); // F5: a forced detach, no wait for the unmount
  const v = state.internVolume('example.com/unknown/x1'); // known only from node status
  state.setVolumesInUse(node, []);
  state.markAttached(v, node);
  state.clearStatusUpdateNeeded(node);
  const deps = quietReconcilerDeps();
  const statusUpdater = createFakeNodeStatusUpdater({ outcome: 'written' });
  const executor = createOperationExecutor({
    state,
    plugins: createVolumePluginManager({ plugins: [createFakeAttachablePlugin()] }),
    metrics: deps.metrics,
    events: deps.events,
    podName: () => undefined,
    liveVolumesInUse: async () => [],
    now: () => 1_000,
  });
  const asked: boolean[] = [];
  const spy = { ...executor, mayStartOn: (n: NodeId) => executor.mayStartOn(n), checkDetachable: (vol: VolumeId, n: NodeId) => (asked.push(executor.checkDetachable(vol, n)), asked.at(-1)!) };
  const planner = createPlanner({ state, workers: 0 });
  const reconciler = createReconciler({ ...deps, statusUpdater, state, planner, executor: spy, loopPeriodMs: 100, now: () => 1_000 });
  try {
    await reconciler.runOnce();
    await new Promise((r) => setImmediate(r));
    await executor.idle();
  } finally {
    await planner.close();
  }
  assert.deepEqual(asked, [false], 'the pass planned the detach and found no plugin for it');
  assert.deepEqual(statusUpdater.nodeWrites, [], 'the volume never left node status: nothing to write');
  assert.deepEqual(state.volumesToReport(node), [v], 'still in the report set');
  assert.equal(state.attachState(v, node), 'attached');
  assert.deepEqual(state.pendingOperations(), []);
  assert.deepEqual((await deps.metrics.forcedDetaches.get()).values.filter((x) => x.value > 0), []);
});

// Several replicas: on a node this replica may not act on (another holds it, or it is being
// handed over) nothing starts and nothing is written, and the report set stays as it is.
test('on a node the replica may not act on, no operation starts and its report set and status stay as they are', async () => {
  const state = createWorldState();
  const ids = ['node-a', 'node-b'].map((n) => {
    const id = state.internNode(n);
    state.setNodeManaged(id);
    state.setNodeHealthy(id, true);
    state.setVolumesInUse(id, []);
    return id;
  });
  const [a, b] = ids as [NodeId, NodeId];
  // On each node: an attached volume no pod wants (a detach) and a wanted one not attached (an attach).
  const plugin = createFakeAttachablePlugin();
  plugin.autoSucceed = true;
  const volume = (handle: string) => {
    const name = `kubernetes.io/csi/d^${handle}`;
    const v = state.internVolume(name);
    const spec: VolumeSpec = { name: `pv-${handle}`, origin: 'pv', source: { type: 'csi', driver: 'd', volumeHandle: handle }, accessModes: ['ReadWriteOnce'], readOnly: false, migrated: false };
    state.setVolumeInfo(v, volumeInfoFor(name, spec, 'kubernetes.io/csi'));
    return v;
  };
  for (const [i, n] of ids.entries()) {
    state.markAttached(volume(`stale-${i}`), n);
    state.addDesiredPod(volume(`wanted-${i}`), n, `pod-${i}`);
    state.clearStatusUpdateNeeded(n);
  }
  const deps = quietReconcilerDeps();
  const statusUpdater = createFakeNodeStatusUpdater({ outcome: 'written' });
  const executor = createOperationExecutor({
    state, plugins: createVolumePluginManager({ plugins: [plugin] }), metrics: deps.metrics, events: deps.events,
    podName: () => undefined, liveVolumesInUse: async () => [], now: () => 1_000, mayStart: (n) => n === 'node-a',
  });
  const planner = createPlanner({ state, workers: 0 });
  const reconciler = createReconciler({ ...deps, statusUpdater, state, planner, executor, loopPeriodMs: 100, now: () => 1_000 });
  try {
    await reconciler.runOnce();
    await new Promise((r) => setImmediate(r));
    await executor.idle();
  } finally {
    await planner.close();
  }
  const stale1 = state.findVolume('kubernetes.io/csi/d^stale-1')!;
  assert.equal(state.attachState(stale1, b), 'attached');
  assert.deepEqual(state.volumesToReport(b), [stale1], 'still reported');
  assert.ok(!statusUpdater.nodeWrites.includes('node-b'), 'no status write for node-b');
  assert.ok(!state.isOperationPending(state.findVolume('kubernetes.io/csi/d^wanted-1')!, b));
  // node-a, where it may act, went ahead: both operations reached the plugin.
  assert.deepEqual(plugin.calls.map((c) => `${c.op} ${c.volumeName} ${c.nodeName}`).sort(), ['attach d^wanted-0 node-a', 'detach d^stale-0 node-a']);
  assert.equal(state.attachState(state.findVolume('kubernetes.io/csi/d^stale-0')!, a), 'detached');
  assert.equal(state.attachState(state.findVolume('kubernetes.io/csi/d^wanted-0')!, a), 'attached');
});
