// Admission of the reconciler: a pass starts at most `maxOperationStartsPerPass` operations;
// what it leaves stays in the plan and is started by later passes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Controller } from '../../src/manager/controller.js';
import { createVolumeAndPod, node, startHarness, vaName, waitFor } from './harness.js';

const NODES = ['node-a', 'node-b', 'node-c', 'node-d', 'node-e'];

/** Records, for each attach the executor accepted, the index of the pass that started it. */
function recordStarts(ctl: Controller): number[] {
  const passes: number[] = [];
  const original = ctl.executor.startAttach.bind(ctl.executor);
  ctl.executor.startAttach = (volume, nodeId) => {
    const r = original(volume, nodeId);
    if (r === 'started') passes.push(ctl.reconciler.passes());
    return r;
  };
  return passes;
}

async function attachAll(opts: { maxOperationStartsPerPass?: number }): Promise<number[]> {
  const h = await startHarness(opts);
  try {
    const { store } = h.sim;
    const starts = recordStarts(h.ctl);
    // The pods appear together while the reconciler waits for them, so one pass sees all five.
    for (const n of NODES) store.create('nodes', node(n));
    await waitFor('nodes known', () => NODES.every((n) => h.ctl.state.findNode(n) !== undefined));
    for (const [i, n] of NODES.entries()) createVolumeAndPod(store, 'default', `h${i}`, { nodeName: n });
    await waitFor('every VolumeAttachment created', () => NODES.every((n, i) => store.get('volumeattachments', undefined, vaName(`h${i}`, n))));
    return starts;
  } finally {
    await h.stop();
  }
}

test('a pass starts at most maxOperationStartsPerPass attaches; the rest are started by later passes', async () => {
  const starts = await attachAll({ maxOperationStartsPerPass: 1 });
  assert.equal(starts.length, NODES.length);
  assert.equal(new Set(starts).size, starts.length, `one start per pass, got passes ${starts.join(',')}`);
});

test('without a tight budget the same attaches may start in one pass (the bound above is what spreads them)', async () => {
  // Retried a few times: the five pods must reach the populator before one pass plans them.
  let shared = false;
  for (let attempt = 0; attempt < 3 && !shared; attempt++) {
    const starts = await attachAll({});
    assert.equal(starts.length, NODES.length);
    shared = new Set(starts).size < starts.length;
  }
  assert.ok(shared, 'some attaches were started by the same pass');
});
