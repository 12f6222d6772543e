// A pass that fails (the plan kernel or its workers) is counted and the loop goes on; passes
// failing in a row make the controller not ready, with the reason, until one succeeds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { createPlanner, type Planner } from '../../src/kernel/planner.js';
import { createReconciler } from '../../src/reconciler/reconciler.js';
import { createInspectionView, FAILING_PASSES_NOT_READY } from '../../src/manager/inspection.js';
import type { Controller } from '../../src/manager/controller.js';
import { quietReconcilerDeps, refusingExecutor } from './reconciler-fixture.js';

test('failing passes are counted, fail readiness once they run in a row, and clear on a success', async () => {
  const state = createWorldState();
  const real = createPlanner({ state, workers: 0 });
  let broken = true;
  const planner: Planner = Object.assign(Object.create(real) as Planner, {
    plan: (...args: Parameters<Planner['plan']>) => (broken ? Promise.reject(new Error('plan kernel returned status 3')) : real.plan(...args)),
  });
  const deps = quietReconcilerDeps();
  const reconciler = createReconciler({ ...deps, state, planner, executor: refusingExecutor(), podName: () => undefined, loopPeriodMs: 100 });
  const ctl = { reconciler, state, ready: () => ({ ready: true }), role: () => 'single' as const, reflectors: [] } as unknown as Controller;
  const view = createInspectionView(ctl, { maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false, kubeApiMaxInFlight: 96, maxApiBacklog: 500 });
  try {
    for (let i = 0; i < FAILING_PASSES_NOT_READY - 1; i++) await reconciler.runOnce();
    assert.deepEqual(reconciler.failingPasses(), { count: FAILING_PASSES_NOT_READY - 1, lastError: 'plan kernel returned status 3' });
    assert.equal(view.readiness().ready, true, 'a few failures are not yet a broken loop');
    await reconciler.runOnce();
    const r = view.readiness();
    assert.equal(r.ready, false);
    assert.match(r.reason ?? '', /last 10 reconcile passes failed: plan kernel returned status 3/);
    const counted = (await deps.metrics.registry.getSingleMetric('fleet_attach_reconcile_failures_total')!.get()).values[0]?.value;
    assert.equal(counted, FAILING_PASSES_NOT_READY);
    broken = false;
    await reconciler.runOnce();
    assert.deepEqual(reconciler.failingPasses(), { count: 0 });
    assert.equal(view.readiness().ready, true);
  } finally {
    await real.close();
  }
});
