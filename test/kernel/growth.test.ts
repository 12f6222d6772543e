// Growth: tables that start at one slot grow (memory.grow + relayout) many times while a
// 2-worker pool already holds the module and the memory; plans before and after every growth
// still equal the reference, so every thread sees the new layout.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createWorldState } from '../../src/cache/world-state.js';
import { createPlanner } from '../../src/kernel/planner.js';
import { commandArb, Harness, type Universe } from './harness.js';

const universe: Universe = { nodes: 60, volumes: 90, pods: 400 };

describe('growth across memory.grow', () => {
  it('keeps WASM plans equal to the reference in a 2-worker pool while the tables grow', async () => {
    const world = createWorldState({ capacity: { nodes: 1, volumes: 1, pairs: 1 } });
    const planner = createPlanner({ state: world, workers: 2, shards: 3, build: 'debug', outputRecords: 8 });
    const h = new Harness(world, planner, universe, false);
    const memory = world.kernelAccess().memory;
    const startBytes = memory.buffer.byteLength;
    const commands = fc.sample(commandArb(universe), { seed: 99, numRuns: 6000 });
    try {
      for (const [i, c] of commands.entries()) {
        await h.apply(c);
        if (i % 500 === 499) h.compareState();
      }
      // Push the pair table past the initial memory so that memory.grow happens for sure.
      for (let i = 0; i < 40_000; i++) {
        await h.apply({ k: 'managed', n: i % universe.nodes });
        await h.apply({ k: 'attached', v: i % universe.volumes, n: Math.floor(i / universe.volumes) % universe.nodes });
        if (i % 4000 === 0) await h.comparePlans({ maxWaitForUnmountMs: 1000, disableForceDetachOnTimeout: false });
      }
      h.compareState();
      await h.comparePlans({ maxWaitForUnmountMs: 0, disableForceDetachOnTimeout: false });
      assert.ok(h.plans > 50, `only ${h.plans} plans compared`);
      assert.ok(world.counts().pairs > 500, `only ${world.counts().pairs} pairs`);
    } finally {
      await planner.close();
    }
    assert.ok(memory.buffer.byteLength > startBytes, 'memory.grow happened');
  });

  it('sees grown memory in the workers: 60k pairs added after the pool started', async () => {
    const world = createWorldState({ capacity: { nodes: 1, volumes: 1, pairs: 1 } });
    const planner = createPlanner({ state: world, workers: 2, shards: 4, build: 'debug' });
    const big: Universe = { nodes: 1000, volumes: 60_000, pods: 1 };
    const h = new Harness(world, planner, big, false);
    const memory = world.kernelAccess().memory;
    const startBytes = memory.buffer.byteLength;
    const opts = { maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false };
    try {
      await h.comparePlans(opts);
      for (let n = 0; n < big.nodes; n++) {
        await h.apply({ k: 'managed', n });
        if (n % 2 === 0) await h.apply({ k: 'inUse', n, vols: [] });
      }
      for (let v = 0; v < big.volumes; v++) {
        const n = v % big.nodes;
        if (v % 3 !== 0) await h.apply({ k: 'addPod', v, n, p: 0 });
        if (v % 3 !== 1) await h.apply({ k: 'attached', v, n });
        if (v % 10_000 === 0) await h.comparePlans(opts);
      }
      assert.ok(memory.buffer.byteLength > startBytes, 'memory.grow happened');
      await h.comparePlans(opts);
      h.now += 400_000;
      const plan = await h.comparePlans({ ...opts, maxWaitForUnmountMs: 1000 });
      assert.ok(plan.attaches.length > 15_000 && plan.detaches.length > 15_000, 'the plan saw the grown tables');
    } finally {
      await planner.close();
    }
  });
});
