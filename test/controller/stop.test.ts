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
import { controllerDefaults, createVolumeAndPod, node, startHarness, vaExists, vaName, waitFor } from './harness.js';

test('no VolumeAttachment create queued at stop() reaches the server after it resolved', async () => {
  // One write a second: the creates queue in the client's rate limiter.
  const h = await startHarness({ kubeApiQps: 1, kubeApiBurst: 1 });
  const creates: number[] = [];
  const unsubscribe = h.sim.store.subscribe((ev) => {
    if (ev.resource === 'volumeattachments' && ev.type === 'ADDED') creates.push(performance.now());
  });
  try {
    await h.ctl.acting();
    h.sim.store.create('nodes', node('node-a'));
    for (let i = 0; i < 6; i++) createVolumeAndPod(h.sim.store, 'default', `s${i}`);
    await waitFor('the first VolumeAttachment', () => creates.length >= 1);
    const queued = h.ctl.executor.inFlight();
    assert.ok(queued > 2, 'operations were queued at the stop');
    const stopAt = performance.now();
    const first = h.ctl.stop();
    assert.equal(h.ctl.stop(), first, 'a second stop shares the first');
    await first;
    const stoppedAt = performance.now();
    // The queued calls are refused at once, not each when its token comes (one a second here).
    assert.ok(stoppedAt - stopAt < (queued - 1) * 1000, `stop took ${Math.round(stoppedAt - stopAt)} ms with ${queued} calls queued at 1/s`);
    await new Promise((r) => setTimeout(r, 3000)); // three more tokens of the rate limiter
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
  try {
    sim.store.create('nodes', node('node-a'));
    createVolumeAndPod(sim.store, 'default', 'l1');
    await assert.rejects(startControllerWithApi({ ...controllerDefaults(sim), listen: `127.0.0.1:${port}` }), /--listen 127.0.0.1:\d+: address already in use \(EADDRINUSE\)/);
    // A running controller would attach the volume within a few passes.
    const acted = await waitFor('a VolumeAttachment', () => vaExists(sim, vaName('l1', 'node-a')), 3000).then(() => true, () => false);
    assert.equal(acted, false, 'the controller kept acting after its start failed');
  } finally {
    blocker.close();
    await sim.stop();
  }
});
