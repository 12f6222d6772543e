// The Uncertain hold of attach-hold.ts on its own. In attach-hold.test.ts the competing entry's
// own attach or detach takes the volume-wide key (I1) earlier in the same pass, so the key alone
// refuses the second node and those tests pass with or without the hold. Here nothing else
// stands in the way: the node to hold comes first in plan order (its pair holds the volume's
// home slot), and the Uncertain entry elsewhere starts no operation of its own this pass.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorldState, type NodeId, type VolumeId, type WorldState } from '../../src/cache/world-state.js';
import { createFakeEventRecorder } from '../../src/events/fake-event-recorder.js';
import { createPlanner } from '../../src/kernel/planner.js';
import { createReconciler } from '../../src/reconciler/reconciler.js';
import { quietReconcilerDeps, refusingExecutor } from './reconciler-fixture.js';

const NOW = 1_000;

function node(state: WorldState, name: string, inUse: string[] = []): NodeId {
  const n = state.internNode(name);
  state.setNodeManaged(n);
  state.setNodeHealthy(n, true);
  state.setVolumesInUse(n, inUse);
  return n;
}

function rwoVolume(state: WorldState, handle: string): VolumeId {
  const v = state.internVolume(`kubernetes.io/csi/d^${handle}`);
  state.setVolumeInfo(v, { uniqueName: `kubernetes.io/csi/d^${handle}`, pluginName: 'kubernetes.io/csi', spec: { name: `pv-${handle}` } });
  state.setMultiAttachForbidden(v, true);
  return v;
}

/** One pass whose executor takes the operation keys (as the real one does) and records starts. */
async function onePass(state: WorldState) {
  const events = createFakeEventRecorder();
  const attaches: string[] = [];
  const detaches: string[] = [];
  const executor = refusingExecutor({
    startAttach(v, n) {
      const r = state.tryStartOperation(v, n, 'attach', NOW);
      if (r === 'started') attaches.push(state.nodeName(n));
      return r;
    },
    startDetach(v, n) {
      const r = state.tryStartOperation(v, n, 'detach', NOW);
      if (r === 'started') detaches.push(state.nodeName(n));
      return r;
    },
  });
  const planner = createPlanner({ state, workers: 0 });
  const reconciler = createReconciler({
    ...quietReconcilerDeps(),
    events,
    podName: (uid: string) => ({ namespace: 'ns', name: uid }),
    state, planner, executor,
    loopPeriodMs: 100,
    now: () => NOW,
  });
  try {
    await reconciler.runOnce();
  } finally {
    await planner.close();
  }
  return { events: events.events, attaches, detaches };
}

describe('the Uncertain hold alone keeps a ReadWriteOnce volume off a second node', () => {
  it('a new entry waits while an Uncertain entry elsewhere is wanted there, even when it comes first in plan order', async () => {
    const state = createWorldState();
    const a = node(state, 'node-a');
    const b = node(state, 'node-b');
    const v = rwoVolume(state, 'h');
    state.addDesiredPod(v, b, 'pod-b'); // first pair of the volume: its home slot, planned first
    state.markUncertain(v, a); // J2: node-a's attach failed; a VolumeAttachment may exist there
    state.addDesiredPod(v, a, 'pod-a');
    assert.equal(state.attachState(v, b), 'detached');
    const r = await onePass(state);
    assert.deepEqual(r.attaches, ['node-a'], 'node-a is retried; node-b is held, not attached');
    assert.equal(state.pendingOperationFor(v, b)?.node, a);
  });

  it('a wanted Uncertain entry waits for an unwanted Uncertain entry elsewhere whose detach backs off', async () => {
    const state = createWorldState();
    const a = node(state, 'node-a');
    const b = node(state, 'node-b');
    const v = rwoVolume(state, 'h');
    state.markUncertain(v, b); // found at start-up (A3), wanted by a pod: retried once free
    state.addDesiredPod(v, b, 'pod-b');
    state.markUncertain(v, a); // no pod wants it; its detach just failed (J3) and backs off (I3)
    assert.equal(state.tryStartOperation(v, a, 'detach', NOW - 100), 'started');
    assert.equal(state.completeOperation(v, a, 'detach', false, NOW - 100), true);
    assert.equal(state.isSafeToRetry(v, a, 'detach', NOW), false);
    assert.equal(state.isSafeToRetry(v, b, 'attach', NOW), true, 'a failed detach does not delay an attach (I3)');
    const r = await onePass(state);
    assert.deepEqual(r.detaches, [], 'the detach is inside its backoff window (F2)');
    assert.deepEqual(r.attaches, [], 'node-a may still hold the volume: node-b waits for its detach');
    assert.equal(state.attachState(v, a), 'uncertain');
  });
});
