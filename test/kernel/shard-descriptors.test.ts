// Shard descriptors: every shard of a plan decides with the same options whatever the shard
// count, the output room (odd record counts once placed descriptors off an 8-byte boundary, so
// the max wait the host wrote was not the one the kernel read: forced detaches after 1 ms) and
// wherever the pairs sit (home slots with holes, overflow slots, a pair table filled to its
// capacity). The kernel refuses a descriptor off its alignment.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createWorldState } from '../../src/cache/world-state.js';
import { DESC_ALIGN, STATUS_BAD_DESCRIPTOR, STATUS_OK } from '../../src/kernel/abi.js';
import { instantiateKernel, loadKernelModule } from '../../src/kernel/kernel-module.js';
import { createPlanner, type PlanOptions } from '../../src/kernel/planner.js';

const SIX_MIN = 360_000;
const opts: PlanOptions = { maxWaitForUnmountMs: SIX_MIN, disableForceDetachOnTimeout: false };

describe('shard descriptors', () => {
  it('give every shard the plan options, for any shard count, output room and pair placement', async () => {
    const layout = fc.record({
      shards: fc.integer({ min: 1, max: 5 }),
      outputRecords: fc.integer({ min: 1, max: 9 }),
      capacity: fc.integer({ min: 1, max: 48 }),
      volumes: fc.integer({ min: 1, max: 40 }),
      // Per volume id: how many nodes hold it attached (0 leaves a hole at its home slot;
      // more than 1 puts the others in overflow slots).
      nodesOf: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 40, maxLength: 40 }),
    });
    await fc.assert(
      fc.asyncProperty(layout, async ({ shards, outputRecords, capacity, volumes, nodesOf }) => {
        const state = createWorldState({ capacity: { nodes: 4, volumes: capacity, pairs: capacity } });
        const nodes = [0, 1, 2].map((i) => {
          const n = state.internNode(`n${i}`);
          state.setNodeManaged(n);
          state.setNodeHealthy(n, false);
          return n;
        });
        let expected = 0;
        for (let i = 0; i < volumes; i++) {
          const v = state.internVolume(`v${i}`);
          for (let k = 0; k < nodesOf[i]; k++, expected++) state.markAttached(v, nodes[k]);
        }
        const planner = createPlanner({ state, workers: 0, shards, build: 'debug', outputRecords });
        try {
          // Undesired, mounted (volumesInUse never observed) on unhealthy nodes: F4 starts the
          // timers, F6 waits for them, F5 forces the detach once they expire.
          let plan = await planner.plan(1000, opts);
          assert.equal(plan.detaches.length, 0, 'first sight starts the timers');
          plan = await planner.plan(1001, opts);
          assert.equal(plan.detaches.length, 0, '1 ms into a 6 min wait: no forced detach');
          plan = await planner.plan(1000 + SIX_MIN, opts);
          assert.equal(plan.detaches.length, 0, 'at exactly the max wait: still waiting');
          plan = await planner.plan(1001 + SIX_MIN, { ...opts, disableForceDetachOnTimeout: true });
          assert.equal(plan.detaches.length, 0, 'P2: force detach disabled');
          plan = await planner.plan(1001 + SIX_MIN, opts);
          assert.equal(plan.detaches.length, expected, 'past the max wait: every pair, once');
          assert.ok([...plan.detaches].every((d) => d.forcedTimeout && !d.timerStarted));
        } finally {
          await planner.close();
        }
      }),
      { seed: 7, numRuns: 150 },
    );
  });

  it('are refused by the kernel off their alignment', () => {
    const state = createWorldState();
    const access = state.kernelAccess();
    const kernel = instantiateKernel(loadKernelModule('debug'), access.memory);
    const frame = access.beginPlan(0, 1024);
    try {
      // A zeroed descriptor is a valid, empty shard.
      new Uint8Array(access.memory.buffer, frame.scratch, 1024).fill(0);
      assert.equal(kernel.planShard(frame.scratch) >>> 0, STATUS_OK);
      for (const off of [4, 8, 12, DESC_ALIGN + 4]) {
        assert.equal(kernel.planShard(frame.scratch + off) >>> 0, STATUS_BAD_DESCRIPTOR, `scratch + ${off}`);
      }
    } finally {
      access.endPlan();
    }
  });
});
