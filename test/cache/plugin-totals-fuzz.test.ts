// Per-plugin totals under random transitions (pods, attach, uncertain, detach, relabel, release,
// operations): pluginTotals() equals a recount from scratch after every step.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWorldState } from '../../src/cache/world-state.js';

function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

test('plugin totals never drift from a recount', () => {
  for (let seed = 1; seed <= 10; seed++) {
    const r = rng(seed);
    const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)];
    const state = createWorldState({ capacity: { volumes: 8, pairs: 16, nodes: 4 } });
    const nodes = ['a', 'b', 'c'].map((n) => {
      const id = state.internNode(n);
      state.setNodeManaged(id);
      return id;
    });
    const label = new Map<string, string>(); // volume name -> label
    const names = ['v0', 'v1', 'v2', 'v3', 'v4'];
    const labels = ['L1', 'L2', undefined];
    for (let step = 0; step < 2000; step++) {
      const name = pick(names);
      let v = state.findVolume(name);
      if (v === undefined) {
        label.delete(name);
        v = state.internVolume(name);
        if (r() < 0.3) state.setMultiAttachForbidden(v, true);
      }
      const n = pick(nodes);
      const op = Math.floor(r() * 9);
      switch (op) {
        case 0: state.addDesiredPod(v, n, `p${Math.floor(r() * 3)}`); break;
        case 1: state.removeDesiredPod(v, n, `p${Math.floor(r() * 3)}`); break;
        case 2: state.markAttached(v, n); break;
        case 3: state.markUncertain(v, n); break;
        case 4: state.markDetached(v, n); break;
        case 5: { const l = pick(labels); state.setVolumePlugin(v, l); if (l) label.set(name, l); else label.delete(name); break; }
        case 6: state.releaseVolume(v); break;
        case 7: state.tryStartOperation(v, n, r() < 0.5 ? 'attach' : 'detach', step); break;
        case 8: state.completeOperation(v, n, r() < 0.5 ? 'attach' : 'detach', r() < 0.5, step); break;
      }
      // Recount.
      const want = new Map<string, { desired: number; actual: number }>();
      for (const nm of names) {
        const id = state.findVolume(nm);
        if (id === undefined) continue;
        const l = label.get(nm);
        if (!l) continue;
        state.forEachPairOfVolume(id, (p) => {
          const e = want.get(l) ?? { desired: 0, actual: 0 };
          if (p.desiredPods > 0) e.desired++;
          if (p.attachState !== 'detached') e.actual++;
          want.set(l, e);
        });
      }
      const got = Object.fromEntries(state.pluginTotals().map((x) => [x.plugin, { desired: x.desired, actual: x.actual }]));
      const exp = Object.fromEntries([...want].filter(([, e]) => e.desired || e.actual));
      assert.deepEqual(got, exp, `seed ${seed} step ${step} op ${op}`);
    }
  }
});
