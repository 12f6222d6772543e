/**
 * Node objects and their status writes (B2, B4, D4, F8, K4): a deleted node keeps the volumes
 * pods still want and is re-written on its next add; a deleted node's last volumesInUse keeps
 * its volumes mounted, so they are force-detached only after the max-wait timer; a failing
 * status write holds the detach back until the volume's removal is written.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestFacts } from '../../src/sim/server/index.js';
import { ApiError } from '../../src/sim/server/status.js';
import {
  FORCED_DETACHES, attachVolume, metricValue, neverDuringPasses, node, populatorPasses, reflectorOf, startHarness, uniqueName, vaExists, vaLive, volumesAttached,
  waitFor,
} from './harness.js';
import { controllerNow } from '../../src/cache/controller-clock.js';

test('a Node deleted and re-created gets its volumesAttached written again; desired volumes are never detached meanwhile (B2, B4, K4)', async () => {
  const h = await startHarness();
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    const va = await attachVolume(h.sim, 'n1', { mounted: true });
    store.delete('nodes', undefined, 'node-a');
    await waitFor('node delete seen', () => !reflectorOf(h.ctl, 'nodes').get('node-a'));
    // Passes, and a C9 pass (it removes pods that are gone), with the node gone.
    const removed = await populatorPasses(h.ctl, 'pods-removed');
    await neverDuringPasses(h.ctl, 'a desired volume detached after its node was deleted', () => !vaLive(h.sim, va), 10, {
      after: async () => (await populatorPasses(h.ctl, 'pods-removed')) > removed,
    });
    // B2: the pod still wants the volume, so the node stayed; B4: its add re-writes the list.
    store.create('nodes', node('node-a'));
    await waitFor('volumesAttached re-written on node add', () => volumesAttached(h.sim, 'node-a').includes(uniqueName('n1')));
    // K5: nothing but volumesAttached is ever written.
    const written = store.get('nodes', undefined, 'node-a')!;
    const expected = node('node-a');
    assert.deepEqual([written.metadata.annotations, written.metadata.labels, written.spec], [expected.metadata.annotations, undefined, expected.spec]);
    assert.deepEqual(Object.keys(written.status as object).sort(), ['conditions', 'volumesAttached']);
    assert.deepEqual((written.status as { conditions: unknown }).conditions, (expected.status as { conditions: unknown }).conditions);
  } finally {
    await h.stop();
  }
});

test('a deleted Node keeps its last volumesInUse: its volumes are force-detached only after the timer (D4, F5)', async () => {
  const maxWait = 1500;
  const h = await startHarness({ maxWaitForUnmountMs: maxWait });
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    const va = await attachVolume(h.sim, 'n2', { mounted: true });
    store.delete('nodes', undefined, 'node-a');
    await waitFor('node delete seen', () => !reflectorOf(h.ctl, 'nodes').get('node-a'));
    let deletingAt: number | undefined;
    store.subscribe((ev) => {
      if (deletingAt === undefined && ev.resource === 'volumeattachments' && ev.name === va && (ev.type === 'DELETED' || ev.object().metadata.deletionTimestamp)) deletingAt = controllerNow();
    });
    store.delete('pods', 'default', 'pod-n2', { gracePeriodSeconds: 0 });
    // The controller's detach timer, on its own clock (the one the timer expires on).
    const started = await waitFor('detach timer started', () => {
      const v = h.ctl.state.findVolume(uniqueName('n2'));
      const n = h.ctl.state.findNode('node-a');
      return (v !== undefined && n !== undefined && h.ctl.state.detachRequestedAt(v, n)) || false;
    });
    await waitFor('VA deleted after the timer', () => !vaExists(h.sim, va), maxWait + 10_000);
    assert.ok(deletingAt !== undefined && deletingAt - started > maxWait, `detach requested ${deletingAt === undefined ? '?' : deletingAt - started} ms after the timer started`);
    assert.equal(await metricValue(h.ctl, FORCED_DETACHES, { reason: 'timeout' }), 1);
  } finally {
    await h.stop();
  }
});

test('while node status writes fail no detach is issued; once a write succeeds the status drops the volume before the VA is deleted (F8, K4)', async () => {
  let blockStatus = false;
  let refused = 0;
  const faults = {
    beforeRequest: (f: RequestFacts) => {
      if (!blockStatus || f.resource !== 'nodes' || f.subresource !== 'status' || f.verb !== 'patch') return undefined;
      refused++;
      return new ApiError(500, 'InternalError', 'injected status failure');
    },
  };
  const h = await startHarness({}, { faults });
  try {
    const { store } = h.sim;
    store.create('nodes', node('node-a'));
    const va = await attachVolume(h.sim, 'w1'); // unmounted: detached as soon as it may be
    blockStatus = true;
    store.delete('pods', 'default', 'pod-w1', { gracePeriodSeconds: 0 });
    await waitFor('status writes refused', () => refused >= 2, 10_000); // retried (K4)
    await neverDuringPasses(h.ctl, 'detach while the status still lists the volume', () => !vaLive(h.sim, va), 10);
    assert.deepEqual(volumesAttached(h.sim, 'node-a'), [uniqueName('w1')]);
    const order: string[] = [];
    const unsub = store.subscribe((ev) => {
      if (ev.resource === 'nodes' && !order.includes('status') && volumesAttached(h.sim, 'node-a').length === 0) order.push('status');
      if (ev.resource === 'volumeattachments' && ev.type === 'DELETED') order.push('va-deleted');
    });
    blockStatus = false;
    await waitFor('VA deleted', () => !vaExists(h.sim, va));
    unsub();
    assert.deepEqual(order, ['status', 'va-deleted']);
  } finally {
    await h.stop();
  }
});
