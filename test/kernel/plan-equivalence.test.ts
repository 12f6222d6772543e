// The WASM plan equals the reference plan (and every state observable equals the reference's)
// over random sequences of mutations, operation results, clock advances and plans: on the main
// thread and in a 2-worker pool, with several shard counts and tiny output regions (so the
// kernel's suspend/resume path runs too). A wider volume universe spreads home slots over
// every shard, not only the first and the overflow region.
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createWorldState } from '../../src/cache/world-state.js';
import { createPlanner } from '../../src/kernel/planner.js';
import { commandArb, Harness, type Universe } from './harness.js';

const universe: Universe = { nodes: 4, volumes: 5, pods: 6 };
const wide: Universe = { nodes: 4, volumes: 14, pods: 6 };

async function run(workers: number, shards: number, numRuns: number, seed: number, u = universe, outputRecords = 1): Promise<void> {
  let plans = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(commandArb(u), { minLength: 20, maxLength: 160 }), async (commands) => {
      const world = createWorldState({ capacity: { nodes: 1, volumes: 1, pairs: 1 } });
      const planner = createPlanner({ state: world, workers, shards, build: 'debug', outputRecords });
      const h = new Harness(world, planner, u);
      try {
        for (const c of commands) await h.apply(c);
        await h.comparePlans({ maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false });
        plans += h.plans;
      } finally {
        await planner.close();
      }
    }),
    { seed, numRuns },
  );
  if (plans < numRuns) throw new Error(`only ${plans} plans compared`);
}

describe('WASM plan equals the reference plan', () => {
  it('on the main thread, one shard', () => run(0, 1, 200, 42));
  it('on the main thread, three shards', () => run(0, 3, 100, 43));
  it('in a pool of 2 workers, two shards', () => run(2, 2, 12, 44));
  it('in a pool of 2 workers, five shards', () => run(2, 5, 12, 45));
  it('on the main thread, four shards, a wider volume universe, an odd output room', () => run(0, 4, 60, 46, wide, 4095));
});
