// A pass acts on the state it planned over: what arrives while the kernel runs (events,
// operation outcomes, verification slices, all deferred by whenIdle) is applied after the
// pass's actions, never between the plan and the actions it decided.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWorldState, type NodeId, type VolumeId, type WorldState } from '../../src/cache/world-state.js';
import { createPlanner, type Planner } from '../../src/kernel/planner.js';
import type { OperationExecutor } from '../../src/operations/operation-executor.js';
import { createReconciler } from '../../src/reconciler/reconciler.js';
import { quietReconcilerDeps, refusingExecutor } from './reconciler-fixture.js';

/** A planner that queues `during` (as an informer handler would) while its plan runs. */
function plannerWith(state: WorldState, during: () => void): Planner {
  const inner = createPlanner({ state, workers: 0 });
  return Object.assign(Object.create(inner) as Planner, {
    plan: (...args: Parameters<Planner['plan']>) => {
      const p = inner.plan(...args);
      assert.ok(state.planning, 'the plan is still running');
      state.whenIdle(during);
      return p;
    },
    close: () => inner.close(),
  });
}

async function onePass(state: WorldState, planner: Planner, executor: OperationExecutor): Promise<void> {
  const reconciler = createReconciler({
    ...quietReconcilerDeps(),
    state, planner, executor,
    loopPeriodMs: 100,
    maxWaitForUnmountMs: 360_000,
    disableForceDetachOnTimeout: false,
    now: () => 1_000,
  });
  try {
    await reconciler.runOnce();
  } finally {
    await planner.close();
  }
}

/** A managed, healthy node whose kubelet reported nothing mounted. */
function managedNode(state: WorldState, name: string): NodeId {
  const n = state.internNode(name);
  state.setNodeManaged(n);
  state.setNodeHealthy(n, true);
  state.setVolumesInUse(n, []);
  return n;
}

test('a pod that comes back while the plan runs lands after the detach decided without it (F1)', async () => {
  const state = createWorldState();
  const node = managedNode(state, 'node-a');
  const volume = state.internVolume('csi/v1');
  state.markAttached(volume, node); // attached, wanted by no pod, not mounted: F7 detaches at once
  const seen: number[] = [];
  const executor = refusingExecutor({
    startDetach(v: VolumeId, n: NodeId) {
      seen.push(state.desiredPods(v, n).length);
      return state.tryStartOperation(v, n, 'detach', 1_000);
    },
  });
  await onePass(state, plannerWith(state, () => state.addDesiredPod(volume, node, 'pod-back')), executor);
  assert.deepEqual(seen, [0], 'the detach started on the state it was planned on');
  assert.deepEqual(state.desiredPods(volume, node), ['pod-back'], 'the pod was applied after the actions');
});

test('a forced detach for the out-of-service taint starts before the taint removal that came during the plan (F5, F6)', async () => {
  const state = createWorldState();
  const node = managedNode(state, 'node-a');
  const volume = state.internVolume('csi/v1');
  state.markAttached(volume, node);
  state.setVolumesInUse(node, ['csi/v1']); // mounted: only the taint lets it go now
  state.setNodeOutOfService(node, true);
  const seen: Array<{ verifySafe: boolean; outOfService: boolean }> = [];
  const executor = refusingExecutor({
    startDetach(v: VolumeId, n: NodeId, verifySafe: boolean) {
      seen.push({ verifySafe, outOfService: state.node(n)?.outOfService ?? false });
      return state.tryStartOperation(v, n, 'detach', 1_000);
    },
  });
  await onePass(state, plannerWith(state, () => state.setNodeOutOfService(node, false)), executor);
  assert.deepEqual(seen, [{ verifySafe: false, outOfService: true }]);
  assert.equal(state.node(node)?.outOfService, false, 'the removal was applied after the actions');
});

test('a pair removed while the plan runs does not abort the pass: its detach and the other attaches start (F3)', async () => {
  const state = createWorldState();
  const node = managedNode(state, 'node-a');
  const gone = state.internVolume('csi/gone');
  state.markAttached(gone, node); // the plan detaches it; verification removes it meanwhile
  const wanted = state.internVolume('csi/wanted');
  state.addDesiredPod(wanted, node, 'pod-1');
  const started: string[] = [];
  const executor = refusingExecutor({
    startDetach(v: VolumeId, n: NodeId) {
      const r = state.tryStartOperation(v, n, 'detach', 1_000);
      if (r === 'started') started.push(`detach ${state.volumeName(v)}`);
      return r;
    },
    startAttach(v: VolumeId, n: NodeId) {
      const r = state.tryStartOperation(v, n, 'attach', 1_000);
      if (r === 'started') started.push(`attach ${state.volumeName(v)}`);
      return r;
    },
  });
  await onePass(state, plannerWith(state, () => state.markDetached(gone, node)), executor);
  assert.deepEqual(started, ['detach csi/gone', 'attach csi/wanted']);
  assert.equal(state.attachState(gone, node), 'detached', 'the removal was applied after the actions');
});
