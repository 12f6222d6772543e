// White-box: the doubly linked volume and node lists of the pair records stay consistent
// (prev mirrors next, no cycles, every live pair on its own volume's and node's list once)
// under random pair creation and freeing, including slot reuse and lists of many pairs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { PF_LIVE } from '../../src/kernel/abi.js';
import { createWorldState, type WorldState } from '../../src/cache/world-state.js';
import { checkPairLinks } from '../../src/cache/pair-links.js';
import type { WorldCore } from '../../src/cache/world-core.js';

const coreOf = (state: WorldState) => (state as unknown as { core: WorldCore }).core;

function problems(state: WorldState): string[] {
  const core = coreOf(state);
  const live: number[] = [];
  for (let s = 0; s < core.pairHighWater; s++) if (core.t.pairFlags[s] & PF_LIVE) live.push(s);
  assert.equal(live.length, state.counts().pairs, 'live slots vs pair counter');
  return checkPairLinks(core.t, live, (s) => core.pairVolume(s), (s) => core.pairNode(s));
}

describe('pair lists', () => {
  it('stay consistent under random attach/detach and pod churn', () => {
    const step = fc.record({ k: fc.constantFrom('attach', 'detach', 'add', 'remove'), v: fc.nat(11), n: fc.nat(7), p: fc.nat(2) });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
        const state = createWorldState({ capacity: { pairs: 16 } });
        const nodes = Array.from({ length: 8 }, (_, i) => state.internNode(`n${i}`));
        for (const n of nodes) state.setNodeManaged(n);
        for (const s of steps) {
          const v = state.internVolume(`v${s.v}`);
          const n = nodes[s.n];
          if (s.k === 'attach') state.markAttached(v, n);
          else if (s.k === 'detach') state.markDetached(v, n);
          else if (s.k === 'add') state.addDesiredPod(v, n, `p${s.p}`);
          else state.removeDesiredPod(v, n, `p${s.p}`);
          state.releaseVolume(v);
        }
        assert.deepEqual(problems(state), []);
        for (const n of nodes) {
          let count = 0;
          state.forEachPairOfNode(n, (p) => {
            count++;
            assert.equal(p.node, n);
            assert.deepEqual(state.pair(p.volume, n), p);
          });
          assert.equal(count, state.node(n)?.pairs);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('unlinks from the middle of a long volume list in any order', () => {
    const state = createWorldState();
    const v = state.internVolume('shared');
    const nodes = Array.from({ length: 300 }, (_, i) => state.internNode(`n${i}`));
    for (const n of nodes) state.markAttached(v, n);
    const order = nodes.map((n, i) => ({ n, k: (i * 7919) % 301 })).sort((a, b) => a.k - b.k);
    for (const [i, { n }] of order.entries()) {
      state.markDetached(v, n);
      if (i % 37 === 0) assert.deepEqual(problems(state), []);
    }
    assert.equal(state.counts().pairs, 0);
    assert.equal(state.findVolume('shared'), undefined);
  });
});
