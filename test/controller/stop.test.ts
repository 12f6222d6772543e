/**
 * Stopping: once stop() has resolved, nothing the controller had queued reaches the API server
 * (leader election off, as in `demo`); concurrent stops share one; a controller whose inspection
 * API cannot listen is stopped, not left acting unobserved.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startSimulator } from '../../src/sim/server/index.js';
import { startControllerWithApi } from '../../src/manager/run-controller.js';
import { createControllerMetrics, type ControllerMetrics } from '../../src/metrics/controller-metrics.js';
import type { Controller } from '../../src/manager/controller.js';
import {
  controllerDefaults, createVolumeAndPod, neverDuringPasses, node, startControllerOn, startHarness, vaExists, vaName, waitFor,
} from './harness.js';

test('no VolumeAttachment create queued at stop() reaches the server after it resolved', async () => {
  // One write per 100 s after a burst of two: the creates queue in the client's rate limiter, and
  // no further token comes during the test, so a queued call can only end by being refused.
  const h = await startHarness({ kubeApiQps: 0.01, kubeApiBurst: 2 });
  const creates: number[] = [];
  const unsubscribe = h.sim.store.subscribe((ev) => {
    if (ev.resource === 'volumeattachments' && ev.type === 'ADDED') creates.push(performance.now());
  });
  try {
    await h.ctl.acting();
    h.sim.store.create('nodes', node('node-a'));
    for (let i = 0; i < 6; i++) createVolumeAndPod(h.sim.store, 'default', `s${i}`);
    await waitFor('the first VolumeAttachment', () => creates.length >= 1);
    await waitFor('operations queued behind the rate limiter', () => h.ctl.executor.inFlight() > 2);
    const first = h.ctl.stop();
    assert.equal(h.ctl.stop(), first, 'a second stop shares the first');
    await first;
    const stoppedAt = performance.now();
    // The queued calls are refused at once, not each when its token comes (none would come here):
    // every operation ends, and nothing is left waiting in the client.
    await waitFor('every queued operation ended', () => h.ctl.executor.inFlight() === 0);
    assert.deepEqual(h.ctl.api.backlog(), { waiting: 0, inFlight: 0 });
    const after = creates.filter((t) => t > stoppedAt).map((t) => Math.round(t - stoppedAt));
    assert.deepEqual(after, [], 'creates that reached the server after stop() resolved (ms after)');
    assert.ok(creates.length < 6, 'the queue had not drained');
  } finally {
    unsubscribe();
    await h.ctl.stop(); // memoised: a no-op when the test got that far
    await h.sim.stop();
  }
});

test('a controller whose --listen address is taken is stopped before the error is returned', async () => {
  const sim = await startSimulator({ bookmarkIntervalMs: 1000 });
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  const port = (blocker.address() as net.AddressInfo).port;
  let live: Controller | undefined;
  try {
    sim.store.create('nodes', node('node-a'));
    createVolumeAndPod(sim.store, 'default', 'l1');
    // What the refused controller does: its passes (its own metrics) and every request it sends.
    const metrics = createControllerMetrics({ processMetrics: false });
    let requests = 0;
    const onRequest = () => void requests++;
    await assert.rejects(startControllerWithApi({ ...controllerDefaults(sim), metrics, onRequest, listen: `127.0.0.1:${port}` }), /--listen 127.0.0.1:\d+: address already in use \(EADDRINUSE\)/);
    const passes = await reconcilePasses(metrics);
    const sent = requests;
    assert.equal(vaExists(sim, vaName('l1', 'node-a')), false, 'the refused controller attached the volume');
    // A live controller attaches the volume and runs passes on; the refused one meanwhile sends nothing.
    live = await startControllerOn(sim);
    await neverDuringPasses(live, 'a request of the controller whose start failed', () => requests > sent, 10, { after: () => vaExists(sim, vaName('l1', 'node-a')) });
    assert.equal(await reconcilePasses(metrics), passes, 'the controller kept acting after its start failed');
  } finally {
    await live?.stop();
    blocker.close();
    await sim.stop();
  }
});

/** Completed reconcile passes, from the controller's `fleet_attach_reconcile_duration_seconds` histogram. */
async function reconcilePasses(m: ControllerMetrics): Promise<number> {
  const values = (await m.reconcileDuration.get()).values as Array<{ value: number; metricName?: string }>;
  return values.find((v) => v.metricName === 'fleet_attach_reconcile_duration_seconds_count')?.value ?? 0;
}
