// White-box: where pair records live. A volume's pair takes the volume's home slot (slot =
// volume id) when it is free, other pairs take overflow slots at or above the volume capacity,
// and lookups find every pair wherever it lives, also after the volume table grew over
// overflow slots and ids were recycled. The overflow region is sized on its own: capacity hints
// leave room for every pair, and a full overflow region does not grow the whole table by half.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { PF_LIVE } from '../../src/kernel/abi.js';
import { createWorldState, type WorldState } from '../../src/cache/world-state.js';
import { checkPairLinks } from '../../src/cache/pair-links.js';
import type { WorldCore } from '../../src/cache/world-core.js';

const coreOf = (state: WorldState) => (state as unknown as { core: WorldCore }).core;

function liveSlots(core: WorldCore): number[] {
  const live: number[] = [];
  for (let s = 0; s < core.pairHighWater; s++) if (core.t.pairFlags[s] & PF_LIVE) live.push(s);
  return live;
}

describe('pair slots', () => {
  it('puts a volume pair at its home slot and further pairs above the volume capacity', () => {
    const state = createWorldState({ capacity: { volumes: 32, pairs: 64 } });
    const core = coreOf(state);
    const [a, b] = ['a', 'b'].map((n) => state.internNode(n));
    const v = state.internVolume('v');
    const w = state.internVolume('w');
    state.markAttached(w, a);
    state.markAttached(v, a);
    assert.equal(core.findPair(v, a), v, 'first pair of v at home');
    assert.equal(core.findPair(w, a), w, 'first pair of w at home');
    state.markAttached(v, b);
    const overflow = core.findPair(v, b);
    assert.ok(overflow >= core.t.caps.volumes, `second pair of v in the overflow slots (${overflow})`);
    state.markDetached(v, a);
    assert.equal(core.findPair(v, a), -1);
    assert.equal(state.attachState(v, b), 'attached', 'the overflow pair outlives the home pair');
    state.markAttached(v, a);
    assert.equal(core.findPair(v, a), v, 'the home slot is taken again');
    state.markDetached(v, b);
    state.markAttached(w, b);
    assert.equal(core.findPair(w, b), overflow, 'a freed overflow slot is reused');
  });

  it('finds every pair under random churn with volume table growth and id reuse', () => {
    const step = fc.record({
      k: fc.constantFrom('attach', 'detach', 'add', 'remove', 'release'),
      v: fc.nat(60),
      n: fc.nat(5),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 400 }), (steps) => {
        // Small capacities: the volume table grows over overflow slots already in use.
        const state = createWorldState({ capacity: { volumes: 16, pairs: 16, nodes: 16 } });
        const core = coreOf(state);
        const nodes = Array.from({ length: 6 }, (_, i) => state.internNode(`n${i}`));
        for (const n of nodes) state.setNodeManaged(n);
        const model = new Map<string, { attached: boolean; desired: boolean }>();
        for (const s of steps) {
          const name = `v${s.v}`;
          const key = `${name}|${s.n}`;
          const v = state.internVolume(name);
          const n = nodes[s.n];
          const m = model.get(key) ?? { attached: false, desired: false };
          if (s.k === 'attach') {
            state.markAttached(v, n);
            m.attached = true;
          } else if (s.k === 'detach') {
            state.markDetached(v, n);
            m.attached = false;
          } else if (s.k === 'add') {
            state.addDesiredPod(v, n, 'p');
            m.desired = true;
          } else if (s.k === 'remove') {
            state.removeDesiredPod(v, n, 'p');
            m.desired = false;
          }
          if (m.attached || m.desired) model.set(key, m);
          else model.delete(key);
          state.releaseVolume(v);
        }
        const live = liveSlots(core);
        assert.equal(live.length, model.size, 'one live slot per pair');
        assert.deepEqual(checkPairLinks(core.t, live, (p) => core.pairVolume(p), (p) => core.pairNode(p)), []);
        for (const [key, m] of model) {
          const [name, n] = key.split('|');
          const v = state.findVolume(name) as number;
          const slot = core.findPair(v, nodes[Number(n)]);
          assert.ok(slot >= 0, `${key} found`);
          assert.equal(core.pairVolume(slot), v);
          assert.equal(core.pairNode(slot), nodes[Number(n)]);
          assert.equal(state.attachState(v, nodes[Number(n)]), m.attached ? 'attached' : 'detached', key);
          assert.equal(state.desiredPods(v, nodes[Number(n)]).length, m.desired ? 1 : 0, key);
        }
      }),
      { seed: 5, numRuns: 150 },
    );
  });

  it('holds a hinted fleet without growing and grows a full overflow region by part of the table', () => {
    // The bench's fleet shape: per node 9 volumes of its own and 1 shared by a group of 10.
    const nodes = 200;
    const volumes = nodes * 9 + nodes / 10;
    const pairs = nodes * 10;
    const state = createWorldState({ capacity: { nodes, volumes, pairs } });
    const core = coreOf(state);
    const caps = { ...core.t.caps };
    for (let n = 0; n < nodes; n++) {
      const node = state.internNode(`n${n}`);
      for (let k = 0; k < 9; k++) state.markAttached(state.internVolume(`v${n}-${k}`), node);
      state.markAttached(state.internVolume(`shared${Math.floor(n / 10)}`), node);
    }
    assert.deepEqual(core.t.caps, caps, 'no table grew');
    assert.ok(caps.pairs - pairs < 32, `pair capacity ${caps.pairs} for ${pairs} pairs`);
    assert.ok(state.memoryUsage().sharedBytes / pairs <= 32, 'at most 32 bytes per pair');
    for (let s = 0; s < volumes; s++) assert.equal(core.pairVolume(s), s, `volume ${s} at home`);
    // More pairs of the shared volumes: the overflow region grows, the home region stays.
    const extra = state.internNode('extra');
    for (let g = 0; g < nodes / 10; g++) state.markAttached(state.findVolume(`shared${g}`) as number, extra);
    assert.equal(core.t.caps.volumes, caps.volumes);
    assert.ok(core.t.caps.pairs < caps.pairs * 1.25, `grew to ${core.t.caps.pairs} from ${caps.pairs}`);
    assert.equal(liveSlots(core).length, pairs + nodes / 10);
  });
});
