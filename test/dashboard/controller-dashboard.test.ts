// The controller runs its dashboard model: its decisions reach the volume's timeline, and its
// sweep sees the pair waiting for the external attacher, then converged.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attachVa, createVolumeAndPod, node, startHarness, uniqueName, vaName, waitFor } from '../controller/harness.js';

test('the controller feeds its dashboard: timeline and not-converged index', async () => {
  const h = await startHarness();
  try {
    const { store } = h.sim;
    const { dashboard } = h.ctl;
    dashboard.index.touch(); // a reader of the dashboard: the index sweeps only once read
    store.create('nodes', node('node-a'));
    createVolumeAndPod(store, 'default', 'h1');
    const va = vaName('h1', 'node-a');
    await waitFor('VolumeAttachment created', () => store.get('volumeattachments', undefined, va));
    await waitFor('the attach is seen running', () => dashboard.index.snapshot().items.some((i) => i.reason === 'attach-running'));
    attachVa(h.sim, va);
    await waitFor('attach succeeded in the timeline', () => dashboard.timeline.entries(uniqueName('h1')).some((e) => e.kind === 'attach-succeeded'));
    const kinds = dashboard.timeline.entries(uniqueName('h1')).map((e) => e.kind);
    assert.deepEqual(kinds, ['desired-added', 'attach-started', 'attach-succeeded']);
    assert.equal(dashboard.timeline.entries(uniqueName('h1'))[0].pod, 'default/pod-h1');
    await waitFor('converged in the index', () => dashboard.index.snapshot().items.length === 0 && dashboard.history.latest() !== undefined);
  } finally {
    await h.stop();
  }
});
