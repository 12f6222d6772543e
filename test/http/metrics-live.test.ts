/**
 * `/metrics` scraped over HTTP from a running controller (simulator, client-node, operation
 * executor, inspection API): the upstream series its own attach, forced detach and detach
 * recorded (J4, F11, O), with upstream's names and labels.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimulator } from '../../src/sim/server/index.js';
import { startControllerWithApi } from '../../src/manager/run-controller.js';
import {
  DRIVER, OUT_OF_SERVICE, addTaint, attachVolume, controllerDefaults, node, setNodeReady, vaExists, waitFor,
} from '../controller/harness.js';
import { find, parseMetrics, type Sample } from './prometheus-text.js';

const PLUGIN = `kubernetes.io/csi:${DRIVER}`;
const op = (name: string) => ({ volume_plugin: PLUGIN, operation_name: name, status: 'success', migrated: 'false' });

async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(`${url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  return parseMetrics(await res.text());
}

test('a running controller serves the series its attach and out-of-service detach recorded', async () => {
  const sim = await startSimulator({ bookmarkIntervalMs: 1000 });
  const api = await startControllerWithApi({ ...controllerDefaults(sim), listen: '127.0.0.1:0' });
  try {
    const before = await scrape(api.url);
    assert.equal(find(before, 'storage_operation_duration_seconds_count', op('volume_attach')), undefined, 'no attach yet');
    // The controller makes both drop series up front, so a dashboard reads 0 before any drop.
    for (const cause of ['queue-full', 'spam-filter']) assert.equal(find(before, 'fleet_attach_events_dropped_total', { cause })?.value, 0, cause);

    sim.store.create('nodes', node('node-a'));
    const va = await attachVolume(sim, 'live1', { mounted: true });
    let s = await scrape(api.url);
    assert.equal(find(s, 'storage_operation_duration_seconds_count', op('volume_attach'))?.value, 1);
    assert.equal(find(s, 'attachdetach_controller_total_volumes', { plugin_name: PLUGIN, state: 'desired_state_of_world' })?.value, 1);
    assert.equal(find(s, 'attachdetach_controller_total_volumes', { plugin_name: PLUGIN, state: 'actual_state_of_world' })?.value, 1);

    // The pod goes while the volume is mounted on a dead node; the out-of-service taint forces
    // the detach at once (F6), counted under its reason.
    setNodeReady(sim, 'node-a', false);
    sim.store.delete('pods', 'default', 'pod-live1', { gracePeriodSeconds: 0 });
    addTaint(sim, 'node-a', OUT_OF_SERVICE);
    await waitFor('VA deleted', () => !vaExists(sim, va));
    s = await waitFor('the detach observed', async () => {
      const now = await scrape(api.url);
      return find(now, 'storage_operation_duration_seconds_count', op('volume_detach')) ? now : undefined;
    });
    assert.equal(find(s, 'storage_operation_duration_seconds_count', op('volume_detach'))?.value, 1);
    assert.equal(find(s, 'storage_operation_duration_seconds_count', op('volume_attach'))?.value, 1);
    assert.equal(find(s, 'attach_detach_controller_attachdetach_controller_forced_detaches', { reason: 'out-of-service' })?.value, 1);
    assert.equal(find(s, 'attach_detach_controller_attachdetach_controller_forced_detaches', { reason: 'timeout' }), undefined);
    // A histogram's +Inf bucket holds every observation.
    assert.equal(find(s, 'storage_operation_duration_seconds_bucket', { ...op('volume_detach'), le: '+Inf' })?.value, 1);
    assert.equal(find(s, 'attachdetach_controller_total_volumes', { plugin_name: PLUGIN, state: 'actual_state_of_world' }), undefined, 'nothing attached, no series');
  } finally {
    await api.stop();
    await sim.stop();
  }
});
