// Attaches of multi-attach-forbidden volumes held off by entries on other nodes (G3, D7 and our
// stricter rule for Uncertain ones: src/reconciler/attach-hold.ts), and the Multi-Attach event
// when the start budget defers a competing detach (E1, G1, H5).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorldState, type NodeId, type VolumeId, type WorldState } from '../../src/cache/world-state.js';
import { createFakeEventRecorder } from '../../src/events/fake-event-recorder.js';
import { createPlanner } from '../../src/kernel/planner.js';
import { createReconciler } from '../../src/reconciler/reconciler.js';
import { quietReconcilerDeps, refusingExecutor } from './reconciler-fixture.js';

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

/** A ReadWriteOnce volume wanted by a pod on each of two nodes. */
function wantedOnTwoNodes() {
  const state = createWorldState();
  const a = node(state, 'node-a');
  const b = node(state, 'node-b');
  const v = rwoVolume(state, 'h');
  state.addDesiredPod(v, a, 'pod-a');
  state.addDesiredPod(v, b, 'pod-b');
  return { state, a, b, v };
}

/** One pass whose executor takes the operation keys (as the real one does) and records starts. */
async function onePass(state: WorldState, maxStarts?: number) {
  const events = createFakeEventRecorder();
  const attaches: string[] = [];
  const detaches: string[] = [];
  const executor = refusingExecutor({
    startAttach(v, n) {
      const r = state.tryStartOperation(v, n, 'attach', 1_000);
      if (r === 'started') attaches.push(state.nodeName(n));
      return r;
    },
    startDetach(v, n) {
      const r = state.tryStartOperation(v, n, 'detach', 1_000);
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
    now: () => 1_000,
    maxOperationStartsPerPass: maxStarts,
  });
  try {
    await reconciler.runOnce();
  } finally {
    await planner.close();
  }
  return { events: events.events, attaches, detaches };
}

describe('attaches held off by entries elsewhere', () => {
  it('retries one of two wanted Uncertain entries instead of letting each wait for the other', async () => {
    // VolumeAttachments on both nodes found at start-up (A3), pods on both: neither entry is
    // ever detached (F1), so holding each for the other would hold both for good.
    const { state, a, b, v } = wantedOnTwoNodes();
    state.markUncertain(v, a);
    state.markUncertain(v, b);
    const r = await onePass(state);
    assert.equal(r.attaches.length, 1, 'one attach; the volume-wide key refuses the second (I1)');
    assert.deepEqual(r.events, []);
  });

  it('retries the node that reports the volume in use first when both entries are Uncertain', async () => {
    // node-a lists the volume in volumesInUse (D3: a pod there may be using it); node-b does not.
    // node-b must not be the one confirmed: node-a's wanted entry could then never be detached.
    // node-b first in every order (ids, pairs, pods): plan order alone would pick it.
    const state = createWorldState();
    const b = node(state, 'node-b');
    const a = node(state, 'node-a', ['kubernetes.io/csi/d^h']);
    const v = rwoVolume(state, 'h');
    state.markUncertain(v, b); // A3: VolumeAttachments on both nodes found at start-up
    state.markUncertain(v, a);
    state.addDesiredPod(v, b, 'pod-b');
    state.addDesiredPod(v, a, 'pod-a');
    assert.equal(state.pair(v, a)?.mounted, true);
    for (let i = 0; i < 3; i++) {
      const r = await onePass(state);
      assert.deepEqual(r.attaches, i === 0 ? ['node-a'] : [], `pass ${i}`);
    }
  });

  it('holds a new attachment while an Uncertain entry elsewhere is wanted there, and lets that entry retry', async () => {
    // node-a's attach failed (J2: Uncertain) and its pod still wants the volume; node-b gets a
    // pod too. Upstream would attach node-b (D7); here node-b waits (safety first).
    const { state, a, v } = wantedOnTwoNodes();
    state.markUncertain(v, a);
    const r = await onePass(state);
    assert.deepEqual(r.attaches, ['node-a']);
  });

  it('holds the attach while an Uncertain entry no pod wants is detached first', async () => {
    const state = createWorldState();
    const a = node(state, 'node-a');
    const b = node(state, 'node-b');
    const v = rwoVolume(state, 'h');
    state.markUncertain(v, a); // a failed detach (J3), unmounted: F7 detaches it at once
    state.addDesiredPod(v, b, 'pod-b');
    const r = await onePass(state);
    assert.deepEqual(r.detaches, ['node-a']);
    assert.deepEqual(r.attaches, []);
  });

  it('reports no Multi-Attach error for a move whose detach the start budget put off (E1, G1)', async () => {
    const state = createWorldState();
    const sources = [0, 1, 2, 3].map((i) => node(state, `node-${i}`));
    const target = node(state, 'node-t');
    for (let i = 0; i < 4; i++) {
      const v = rwoVolume(state, `m${i}`);
      state.markAttached(v, sources[i]); // unmounted and no longer wanted there: F7
      state.addDesiredPod(v, target, `pod-t${i}`);
    }
    const r = await onePass(state, 2);
    assert.ok(r.detaches.length >= 1 && r.detaches.length < 4, `some detaches deferred (${r.detaches.length} started)`);
    assert.deepEqual(r.events, [], 'upstream starts every detach first, so G1 skips each move');
  });
});

// The Uncertain hold on its own. In the tests above the competing entry's own attach or detach
// takes the volume-wide key (I1) earlier in the same pass, so the key alone refuses the second
// node and they would pass without the hold. Here nothing else stands in the way: the node to
// hold comes first in plan order (its pair holds the volume's home slot), and the Uncertain
// entry elsewhere starts no operation of its own this pass.
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
    assert.equal(state.tryStartOperation(v, a, 'detach', 900), 'started');
    assert.equal(state.completeOperation(v, a, 'detach', false, 900), true);
    assert.equal(state.isSafeToRetry(v, a, 'detach', 1_000), false);
    assert.equal(state.isSafeToRetry(v, b, 'attach', 1_000), true, 'a failed detach does not delay an attach (I3)');
    const r = await onePass(state);
    assert.deepEqual(r.detaches, [], 'the detach is inside its backoff window (F2)');
    assert.deepEqual(r.attaches, [], 'node-a may still hold the volume: node-b waits for its detach');
    assert.equal(state.attachState(v, a), 'uncertain');
  });
});
