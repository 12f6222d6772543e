import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPlanner } from '../../src/kernel/planner.js';
import { PLUGIN_LABEL, createFleet, csiName } from './fleet-fixture.js';

interface Sample { name: string; labels: Record<string, string>; value: number }

/** Parses the Prometheus text format (0.0.4): `name{k="v",...} value`, with \\ \" \n escapes. */
function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)$/.exec(line);
    assert.ok(m, `unparsable line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;
      let consumed = 0;
      for (let l = re.exec(m[2].slice(1, -1)); l; l = re.exec(m[2].slice(1, -1))) {
        labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
        consumed = re.lastIndex;
      }
      assert.equal(consumed, m[2].length - 2, `bad labels: ${line}`);
    }
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

function find(samples: Sample[], name: string, labels: Record<string, string>): Sample | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

describe('/metrics', () => {
  it('exposes the upstream series with their labels after a scripted attach and forced detach', async () => {
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
      metrics.operationDuration.observe({ volume_plugin: PLUGIN_LABEL, operation_name: 'volume_attach', status: 'success', migrated: 'false' }, 0.3);

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
      assert.equal(d.verifySafeToDetach, false);
      if (!d.verifySafeToDetach) metrics.forcedDetaches.inc({ reason: d.forcedTimeout ? 'timeout' : 'out-of-service' });
      state.removeFromReportSet(v, n);
      assert.equal(state.tryStartOperation(v, n, 'detach', f.view.now()), 'started');
      state.markDetached(v, n);
      state.completeOperation(v, n, 'detach', true, f.view.now());
      metrics.operationDuration.observe({ volume_plugin: PLUGIN_LABEL, operation_name: 'volume_detach', status: 'success', migrated: 'false' }, 1.5);

      s = parseMetrics((await f.get('/metrics')).body);
      assert.equal(find(s, 'attach_detach_controller_attachdetach_controller_forced_detaches', { reason: 'timeout' })?.value, 1);
      const attach = { volume_plugin: PLUGIN_LABEL, operation_name: 'volume_attach', status: 'success', migrated: 'false' };
      assert.equal(find(s, 'storage_operation_duration_seconds_bucket', { ...attach, le: '0.25' })?.value, 0);
      assert.equal(find(s, 'storage_operation_duration_seconds_bucket', { ...attach, le: '0.5' })?.value, 1);
      assert.equal(find(s, 'storage_operation_duration_seconds_bucket', { ...attach, le: '+Inf' })?.value, 1);
      assert.equal(find(s, 'storage_operation_duration_seconds_count', { ...attach })?.value, 1);
      const detach = { ...attach, operation_name: 'volume_detach' };
      assert.equal(find(s, 'storage_operation_duration_seconds_sum', detach)?.value, 1.5);
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
