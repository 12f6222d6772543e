// A table that cannot grow (memory.grow refused: out of memory, or the 2 GiB maximum) refuses
// the new name and changes nothing: no id is taken, later plans run, and the same name interns
// once memory is available again.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';
import { createPlanner } from '../../src/kernel/planner.js';

const OPTS = { maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false };

it('a volume the tables have no room for is refused before it takes an id', async () => {
  const state = createWorldState({ capacity: { nodes: 16, volumes: 16, pairs: 64 } });
  const memory = state.kernelAccess().memory as WebAssembly.Memory & { grow: (pages: number) => number };
  const n = state.internNode('node-a');
  state.setNodeManaged(n);
  const grow = memory.grow;
  memory.grow = () => {
    throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
  };
  const planner = createPlanner({ state, workers: 0, build: 'debug' });
  try {
    // Volumes until the volume table needs more memory than there is.
    let refused: string | undefined;
    for (let i = 0; i < 1_000_000 && refused === undefined; i++) {
      const before = state.counts().volumes;
      try {
        state.internVolume(`csi/d^v${i}`);
      } catch (err) {
        assert.match(String(err), /Maximum memory size/);
        refused = `csi/d^v${i}`;
        assert.equal(state.counts().volumes, before, 'the refused name took no id');
      }
    }
    assert.ok(refused, 'the memory filled up');
    assert.equal(state.findVolume(refused), undefined);
    await planner.plan(1_000, OPTS); // every id handed out has its row: the plan runs
    memory.grow = grow;
    const v = state.internVolume(refused);
    state.addDesiredPod(v, n, 'pod-1');
    const plan = await planner.plan(2_000, OPTS);
    assert.equal(plan.attaches.length, 1, 'the refused name works once the tables can grow');
  } finally {
    memory.grow = grow;
    await planner.close();
  }
});
