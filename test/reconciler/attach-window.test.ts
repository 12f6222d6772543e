// The reconciler's attach window: a pass plans only a window of the attach candidates, and a
// window in which every candidate is refused does not starve the candidates after it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { createPlanner } from '../../src/kernel/planner.js';
import { createReconciler } from '../../src/reconciler/reconciler.js';
import { quietReconcilerDeps, refusingExecutor } from './reconciler-fixture.js';

const CANDIDATES = 5000;
const opts = { maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false };

test('a window whose candidates are all refused moves on until a startable candidate is reached', async () => {
  const state = createWorldState();
  const nodes = Array.from({ length: 50 }, (_, i) => {
    const n = state.internNode(`node-${i}`);
    state.setNodeManaged(n);
    return n;
  });
  for (let i = 0; i < CANDIDATES; i++) state.addDesiredPod(state.internVolume(`v${i}`), nodes[i % nodes.length], `p${i}`);
  // The kernel's order of the candidates, from a planner of its own over the same state.
  const probe = createPlanner({ state, workers: 0 });
  const full = await probe.plan(0, opts);
  await probe.close();
  assert.equal(full.attaches.length, CANDIDATES);
  const last = `${full.attaches.volume(CANDIDATES - 1)}/${full.attaches.node(CANDIDATES - 1)}`;

  // Every attach is refused quietly (as if in backoff) except the kernel's last candidate.
  const offered: number[] = [];
  let startedAt = -1;
  const executor = refusingExecutor({
    startAttach(volume, node) {
      offered.push(volume);
      if (`${volume}/${node}` !== last) return 'backoff';
      if (startedAt < 0) startedAt = reconciler.passes();
      return state.tryStartOperation(volume, node, 'attach', 0);
    },
  });
  const planner = createPlanner({ state, workers: 0 });
  const reconciler = createReconciler({
    ...quietReconcilerDeps(),
    state, planner, executor,
    loopPeriodMs: 100,
    maxOperationStartsPerPass: 1, // room: 4 × 1 + 1024 = 1028 candidates per window
    ...opts,
  });
  try {
    for (let pass = 0; pass < 8 && startedAt < 0; pass++) {
      offered.length = 0;
      await reconciler.runOnce();
      assert.ok(offered.length <= 1028, `a pass offered ${offered.length} attaches, more than its window`);
    }
    assert.ok(startedAt >= 0, 'the last candidate was never offered: the window did not move');
    assert.ok(startedAt >= 4, `started in pass ${startedAt}: expected the fifth window or later`);
    // Once a window is not full the next pass starts from the first window again.
    offered.length = 0;
    await reconciler.runOnce();
    assert.equal(offered[0], full.attaches.volume(0), 'back to the first window');
  } finally {
    await planner.close();
  }
});
