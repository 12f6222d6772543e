// The detach timer runs on the monotonic clock: a step of the wall clock does not expire it
// (F4–F6: a mounted volume on an unhealthy node waits the whole max-wait-for-unmount).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { controllerNow } from '../../src/cache/controller-clock.js';
import { createWorldState, type NodeId, type VolumeId } from '../../src/cache/world-state.js';
import { createPlanner } from '../../src/kernel/planner.js';
import { createReconciler } from '../../src/reconciler/reconciler.js';
import { quietReconcilerDeps, refusingExecutor } from './reconciler-fixture.js';

test('controllerNow reads like the wall clock and does not follow its steps', (t) => {
  const monotonic = performance.now();
  t.mock.method(performance, 'now', () => monotonic); // the monotonic clock holds still
  const before = controllerNow();
  assert.ok(Math.abs(before - Date.now()) < 60_000, 'epoch milliseconds');
  const wall = Date.now();
  t.mock.method(Date, 'now', () => wall + 7 * 60_000);
  assert.equal(controllerNow(), before, 'a 7-minute step of the wall clock moved it');
});

test('a wall-clock step past max-wait-for-unmount does not force the detach of a mounted volume', async (t) => {
  const state = createWorldState();
  const node = state.internNode('node-a');
  state.setNodeManaged(node);
  state.setNodeHealthy(node, false);
  const volume = state.internVolume('csi/v1');
  state.markAttached(volume, node);
  state.setVolumesInUse(node, ['csi/v1']); // mounted, wanted by no pod: waits for the timer (F6)
  const detaches: boolean[] = [];
  const executor = refusingExecutor({
    startDetach(_v: VolumeId, _n: NodeId, verifySafe: boolean) {
      detaches.push(verifySafe);
      return 'backoff';
    },
  });
  const realNow = Date.now.bind(Date);
  let step = 0;
  t.mock.method(Date, 'now', () => realNow() + step); // before the reconciler exists: whatever it reads, it reads this
  const planner = createPlanner({ state, workers: 0 });
  const reconciler = createReconciler({ ...quietReconcilerDeps(), state, planner, executor, loopPeriodMs: 100 }); // default clock
  try {
    await reconciler.runOnce(); // starts the timer
    assert.notEqual(state.detachRequestedAt(volume, node), null);
    step = 7 * 60_000; // NTP steps the wall clock past 6 minutes
    await reconciler.runOnce();
  } finally {
    await planner.close();
  }
  assert.deepEqual(detaches, [], 'the mounted volume was force-detached on a wall-clock step');
});
