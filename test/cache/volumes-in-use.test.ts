// D3: after any sequence of volumesInUse lists (sorted ones take the incremental path, others
// the full one), every pair's mounted flag says whether its volume is in the node's last list
// (or the list was never observed), including pairs created after the list came.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createWorldState } from '../../src/cache/world-state.js';

const name = (i: number) => `kubernetes.io/csi/d^v-${String(i).padStart(2, '0')}`;

describe('volumesInUse', () => {
  it('keeps every pair mounted exactly when its volume is in the last list', () => {
    const list = fc.option(fc.uniqueArray(fc.nat(11), { maxLength: 8 }).chain((ids) => fc.oneof(
      fc.constant([...ids].sort((x, y) => x - y)),
      fc.constant(ids),
      fc.constant([...ids, ...ids.slice(0, 1)]),
    )), { freq: 6 });
    const step = fc.oneof(
      fc.record({ k: fc.constant('list' as const), node: fc.nat(2), ids: list }),
      fc.record({ k: fc.constant('pair' as const), node: fc.nat(2), v: fc.nat(11), on: fc.boolean() }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const state = createWorldState();
        const nodes = [0, 1, 2].map((i) => state.internNode(`n${i}`));
        const last: Array<Set<string> | null> = [null, null, null];
        for (const s of steps) {
          if (s.k === 'list') {
            const names = s.ids === null ? null : (s.ids as number[]).map((i) => name(i));
            state.setVolumesInUse(nodes[s.node], names);
            last[s.node] = names === null ? null : new Set(names);
          } else {
            const v = state.internVolume(name(s.v));
            if (s.on) state.markAttached(v, nodes[s.node]);
            else state.markDetached(v, nodes[s.node]);
          }
        }
        nodes.forEach((n, i) => {
          const inUse = state.node(n)?.volumesInUse ?? null;
          assert.deepEqual(inUse === null ? null : new Set(inUse), last[i]);
          state.forEachPairOfNode(n, (p) => {
            const want = last[i] === null || (last[i] as Set<string>).has(state.volumeName(p.volume));
            assert.equal(p.mounted, want, `${state.volumeName(p.volume)} on n${i}`);
          });
        });
      }),
      { numRuns: 300 },
    );
  });
});
