// Planner contracts and the detach/attach rules one example at a time (the property tests
// cover the combinations).
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { after, describe, it } from 'node:test';
import { createWorldState, type WorldState } from '../../src/cache/world-state.js';
import { isFleetError } from '../../src/errors/index.js';
import { defaultWorkerCount } from '../../src/kernel/kernel-pool.js';
import { createPlanner, type Planner, type PlanOptions } from '../../src/kernel/planner.js';

const SIX_MIN = 360_000;
const opts: PlanOptions = { maxWaitForUnmountMs: SIX_MIN, disableForceDetachOnTimeout: false };

interface NodeSpec { healthy?: boolean; oos?: boolean; inUse?: string[] | null }

/** One node with one attached, undesired volume `v`. */
function undesiredOn(spec: NodeSpec): { state: WorldState; planner: Planner; v: number; n: number } {
  const state = createWorldState();
  const n = state.internNode('n');
  state.setNodeManaged(n);
  state.setNodeHealthy(n, spec.healthy ?? true);
  state.setNodeOutOfService(n, spec.oos ?? false);
  if (spec.inUse !== undefined) state.setVolumesInUse(n, spec.inUse);
  const v = state.internVolume('v');
  state.markAttached(v, n);
  return { state, planner: createPlanner({ state, workers: 0, build: 'debug' }), v, n };
}

describe('detach decisions (F4-F9, F11)', () => {
  const cases: Array<[string, NodeSpec, number, PlanOptions, { detach: boolean; forcedTimeout?: boolean; outOfService?: boolean; verify?: boolean }]> = [
    ['F7: unmounted on a healthy node: at once, with the live safety check', { inUse: [] }, 0, opts, { detach: true, verify: true }],
    ['F6: mounted on a healthy node: never, however long', { inUse: ['v'] }, 10 * SIX_MIN, opts, { detach: false }],
    ['D3: volumesInUse never observed counts as mounted', { inUse: null }, 10 * SIX_MIN, opts, { detach: false }],
    ['F6: mounted on an unhealthy node: waits for the timer', { healthy: false, inUse: ['v'] }, SIX_MIN, opts, { detach: false }],
    ['F5: mounted on an unhealthy node past the timer: forced, no check', { healthy: false, inUse: ['v'] }, SIX_MIN + 1, opts, { detach: true, forcedTimeout: true, verify: false }],
    ['P2: the flag disables the timer path', { healthy: false, inUse: ['v'] }, 10 * SIX_MIN, { ...opts, disableForceDetachOnTimeout: true }, { detach: false }],
    ['F5: out-of-service: at once, no check', { healthy: true, oos: true, inUse: ['v'] }, 0, opts, { detach: true, outOfService: true, verify: false }],
    ['F9: unmounted past the timer on a healthy node skips the check', { inUse: [] }, SIX_MIN + 1, opts, { detach: true, forcedTimeout: true, verify: false }],
  ];
  for (const [name, spec, wait, options, want] of cases) {
    it(name, async () => {
      const { state, planner, v, n } = undesiredOn(spec);
      try {
        let plan = await planner.plan(1000, options);
        assert.equal(state.detachRequestedAt(v, n), 1000, 'F4: timer started on first sight');
        if (wait > 0) plan = await planner.plan(1000 + wait, options);
        assert.equal(plan.detaches.length, want.detach ? 1 : 0);
        if (!want.detach) return;
        const d = plan.detaches.at(0);
        assert.deepEqual([d.volume, d.node], [v, n]);
        assert.equal(d.forcedTimeout, want.forcedTimeout ?? false);
        assert.equal(d.outOfService, want.outOfService ?? false);
        assert.equal(d.verifySafeToDetach, want.verify);
      } finally {
        await planner.close();
      }
    });
  }

  it('F2: does not start the timer while the detach key backs off', async () => {
    const { state, planner, v, n } = undesiredOn({ inUse: [] });
    state.tryStartOperation(v, n, 'detach', 0);
    state.completeOperation(v, n, 'detach', false, 500);
    let plan = await planner.plan(1000, opts);
    assert.equal(plan.detaches.length, 0);
    assert.equal(state.detachRequestedAt(v, n), null);
    plan = await planner.plan(1001, opts);
    assert.equal(plan.detaches.length, 1, 'the 500 ms window ended');
    assert.equal(plan.detaches.at(0).timerStarted, true);
    await planner.close();
  });
});

describe('attach decisions (G1-G4, H4, K3)', () => {
  it('attaches, reports a conflict once, and lists nodes whose status must be written', async () => {
    const state = createWorldState();
    const planner = createPlanner({ state, workers: 0, build: 'debug' });
    const [a, b] = ['a', 'b'].map((name) => {
      const id = state.internNode(name);
      state.setNodeManaged(id);
      return id;
    });
    const rwo = state.internVolume('rwo');
    state.setMultiAttachForbidden(rwo, true);
    state.markAttached(rwo, a);
    state.addDesiredPod(rwo, a, 'p1');
    state.addDesiredPod(rwo, b, 'p2');
    state.clearStatusUpdateNeeded(a);
    const rwx = state.internVolume('rwx');
    state.addDesiredPod(rwx, a, 'p3');
    state.addDesiredPod(rwx, b, 'p4');
    let plan = await planner.plan(1000, opts);
    assert.deepEqual([...plan.conflicts].map((c) => [c.volume, c.node]), [[rwo, b]]);
    assert.deepEqual([...plan.attaches].map((c) => [c.volume, c.node]).sort(), [[rwx, a], [rwx, b]].sort());
    assert.deepEqual([...plan.statusNodes], []);
    state.setMultiAttachErrorReported(rwo, b);
    state.tryStartOperation(rwx, a, 'attach', 1000);
    state.markAttached(rwx, b);
    plan = await planner.plan(2000, opts);
    assert.deepEqual([plan.conflicts.length, plan.attaches.length], [0, 0], 'H4: reported once; G1: pending; G2: attached');
    assert.deepEqual([...plan.statusNodes], [b], 'K3: the report set of b changed');
    await planner.close();
  });
});

describe('attach window', () => {
  /** 40 nodes × 10 desired volumes each, plus one undesired attached pair and one conflict. */
  function fleet(): { state: WorldState; all: string[] } {
    const state = createWorldState();
    const all: string[] = [];
    for (let n = 0; n < 40; n++) {
      const node = state.internNode(`n${n}`);
      state.setNodeManaged(node);
      for (let k = 0; k < 10; k++) {
        const v = state.internVolume(`v${n}-${k}`);
        state.addDesiredPod(v, node, `p${n}-${k}`);
        all.push(`${v}/${node}`);
      }
    }
    const gone = state.internVolume('gone');
    state.markAttached(gone, state.internNode('n0'));
    state.setVolumesInUse(state.internNode('n0'), []);
    const rwo = state.internVolume('rwo');
    state.setMultiAttachForbidden(rwo, true);
    state.markAttached(rwo, state.internNode('n1'));
    state.addDesiredPod(rwo, state.internNode('n2'), 'q');
    return { state, all };
  }
  const keys = (list: { volume(i: number): number; node(i: number): number; length: number }): string[] =>
    Array.from({ length: list.length }, (_, i) => `${list.volume(i)}/${list.node(i)}`);

  for (const shards of [1, 3]) {
    it(`lists at most room attaches after skip, counts the rest, never windows detaches or conflicts (${shards} shard(s), resumed output)`, async () => {
      const { state, all } = fleet();
      const planner = createPlanner({ state, workers: 0, shards, build: 'debug', outputRecords: 2 });
      try {
        const full = await planner.plan(1000, opts);
        assert.deepEqual(keys(full.attaches).sort(), [...all].sort());
        assert.deepEqual([full.attachesOmitted, full.attachWindowFull], [0, false]);
        const seen = new Set<string>();
        for (let index = 0; ; index++) {
          const plan = await planner.plan(1000, { ...opts, attachWindow: { index, room: 60 } });
          assert.equal(plan.detaches.length, 1, 'detaches are never windowed');
          assert.equal(plan.conflicts.length, 1, 'conflicts are never windowed');
          assert.ok(plan.attaches.length <= 60, `room: ${plan.attaches.length}`);
          assert.equal(plan.attaches.length + plan.attachesOmitted, all.length, 'every candidate listed or counted');
          for (const k of keys(plan.attaches)) {
            assert.ok(!seen.has(k), `windows overlap at ${k}`);
            seen.add(k);
          }
          if (!plan.attachWindowFull) break;
        }
        assert.deepEqual([...seen].sort(), [...all].sort(), 'moving the window visits every candidate once');
      } finally {
        await planner.close();
      }
    });
  }
});

describe('Planner', () => {
  const closers: Planner[] = [];
  after(() => Promise.all(closers.map((p) => p.close())));

  it('defaults to cores - 1 workers, at least 1', () => {
    assert.equal(defaultWorkerCount(), Math.max(1, availableParallelism() - 1));
  });

  it('rejects invalid options at construction', () => {
    const state = createWorldState();
    assert.throws(() => createPlanner({ state, workers: -1 }), RangeError);
    assert.throws(() => createPlanner({ state, workers: 0, shards: 0 }), RangeError);
  });

  it('refuses a second plan and state mutations while a pool plan runs, then runs whenIdle work', async () => {
    const state = createWorldState();
    const planner = createPlanner({ state, workers: 2, shards: 2, build: 'debug' });
    closers.push(planner);
    const n = state.internNode('n');
    const first = planner.plan(1000, opts);
    assert.equal(planner.planning, true);
    await assert.rejects(planner.plan(1000, opts), (err) => isFleetError(err, 'FA_ERR_KERNEL'));
    assert.throws(() => state.setNodeHealthy(n, true), (err) => isFleetError(err, 'FA_ERR_KERNEL'));
    state.whenIdle(() => state.setNodeHealthy(n, true));
    await first;
    assert.equal(planner.planning, false);
    assert.equal(state.node(n)?.healthy, true);
  });

  it('plans a small state on the main thread when inlineBelowPairs says so, with the same result', async () => {
    const build = () => {
      const { state, v, n } = undesiredOn({ healthy: false });
      state.setVolumesInUse(n, []);
      return { state, v, n };
    };
    const a = build();
    const inline = createPlanner({ state: a.state, workers: 1, build: 'debug', inlineBelowPairs: 1 << 20 });
    const b = build();
    const pooled = createPlanner({ state: b.state, workers: 1, build: 'debug' });
    closers.push(inline, pooled);
    const pa = await inline.plan(1000, opts);
    const pb = await pooled.plan(1000, opts);
    assert.deepEqual([inline.poolPlans, pooled.poolPlans], [0, 1]);
    assert.equal(pa.detaches.length, 1);
    assert.deepEqual([pa.detaches.volume(0), pa.detaches.node(0)], [pb.detaches.volume(0), pb.detaches.node(0)]);
    assert.throws(() => createPlanner({ state: a.state, workers: 0, inlineBelowPairs: Number.NaN }), RangeError);
  });

  it('rejects plans after close and bad options', async () => {
    const state = createWorldState();
    const planner = createPlanner({ state, workers: 0, build: 'debug' });
    await assert.rejects(planner.plan(0, { ...opts, maxWaitForUnmountMs: Number.NaN }), (err) => isFleetError(err, 'FA_ERR_KERNEL'));
    await planner.close();
    await assert.rejects(planner.plan(0, opts), (err) => isFleetError(err, 'FA_ERR_KERNEL'));
  });
});
