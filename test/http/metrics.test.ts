import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPlanner } from '../../src/kernel/planner.js';
import { PLUGIN_LABEL, createFleet, csiName } from './fleet-fixture.js';
import { find, parseMetrics } from './prometheus-text.js';

// The series the executor and the detach pass record are checked against a running controller
// in metrics-live.test.ts; here the per-plugin totals follow the state through a scripted
// attach and forced detach.
describe('/metrics', () => {
  it('serves the per-plugin volume totals as the state moves through a scripted attach and forced detach', async () => {
    const f = createFleet();
    const { state, metrics } = f;
    metrics.setSources({ totalVolumes: () => state.pluginTotals() });
    const planner = createPlanner({ state, workers: 0, build: 'debug' });
    const planOptions = { maxWaitForUnmountMs: f.view.options.maxWaitForUnmountMs, disableForceDetachOnTimeout: false };
    try {
      // Attach: the plan asks for it, the operation succeeds, its duration is observed (J4).
      const v = f.volume('vol-1');
      const n = f.node('node-1', { inUse: [csiName('vol-1')] });
      f.want(v, n, 'uid-1');
      // A second volume stays attached throughout, so the gauge keeps a series for the plugin.
      const other = f.volume('vol-2');
      const n2 = f.node('node-2', { inUse: [csiName('vol-2')] });
      f.want(other, n2, 'uid-2');
      state.markAttached(other, n2);
      let plan = await planner.plan(f.view.now(), planOptions);
      assert.equal(plan.attaches.length, 1);
      assert.equal(state.tryStartOperation(v, n, 'attach', f.view.now()), 'started');
      f.view.advance(300);
      state.markAttached(v, n);
      state.completeOperation(v, n, 'attach', true, f.view.now());

      const attached = await f.get('/metrics');
      assert.equal(attached.status, 200);
      assert.equal(attached.headers['content-type'], metrics.registry.contentType);
      let s = parseMetrics(attached.body);
      assert.equal(find(s, 'attachdetach_controller_total_volumes', { plugin_name: PLUGIN_LABEL, state: 'desired_state_of_world' })?.value, 2);
      assert.equal(find(s, 'attachdetach_controller_total_volumes', { plugin_name: PLUGIN_LABEL, state: 'actual_state_of_world' })?.value, 2);

      // The pod goes, the node dies with the volume mounted: the timer starts, and once it has
      // expired the plan forces the detach (F5, F11).
      state.removeDesiredPod(v, n, 'uid-1');
      state.setNodeHealthy(n, false);
      plan = await planner.plan(f.view.now(), planOptions);
      assert.equal(plan.detaches.length, 0);
      f.view.advance(planOptions.maxWaitForUnmountMs + 1);
      plan = await planner.plan(f.view.now(), planOptions);
      assert.equal(plan.detaches.length, 1);
      const d = plan.detaches.at(0);
      assert.ok(!d.verifySafeToDetach && d.forcedTimeout, 'forced on the timer');
      state.removeFromReportSet(v, n);
      assert.equal(state.tryStartOperation(v, n, 'detach', f.view.now()), 'started');
      state.markDetached(v, n);
      state.completeOperation(v, n, 'detach', true, f.view.now());

      s = parseMetrics((await f.get('/metrics')).body);
      assert.equal(find(s, 'attachdetach_controller_total_volumes', { plugin_name: PLUGIN_LABEL, state: 'desired_state_of_world' })?.value, 1);
      assert.equal(find(s, 'attachdetach_controller_total_volumes', { plugin_name: PLUGIN_LABEL, state: 'actual_state_of_world' })?.value, 1);
      // Our own series sit beside the upstream ones.
      assert.ok(find(s, 'fleet_attach_operations', { state: 'pending' }));
      assert.ok(s.some((x) => x.name === 'fleet_attach_reconcile_duration_seconds_count'));
    } finally {
      await planner.close();
      await f.close();
    }
  });
});
