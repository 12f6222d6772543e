// Safety invariants of every plan, checked against the state at plan start over random
// sequences (independently of the reference):
//   Q3/G1/G3: never an attach of a multi-attach-forbidden volume while it is confirmed attached
//             on another node or any operation on it is pending;
//   F6: never a detach of a mounted volume on a healthy node without the out-of-service taint;
//   Q4/G2: a pair desired again before its detach started is kept: no action, timer reset;
//   F1/F2: never a detach of a desired pair or of a pair whose detach key is busy.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createWorldState, type WorldState } from '../../src/cache/world-state.js';
import { createPlanner } from '../../src/kernel/planner.js';
import type { Plan } from '../../src/kernel/plan-result.js';
import { commandArb, Harness, type Universe } from './harness.js';

const universe: Universe = { nodes: 4, volumes: 4, pods: 5 };

interface Before {
  attachedElsewhere: (v: number, n: number) => boolean;
  pending: Set<string>;
  detachUnsafe: Set<string>;
  protectedMounted: Set<string>;
  keptPairs: Set<string>;
}

const key = (v: number, n: number) => `${v}/${n}`;

function snapshot(world: WorldState, now: number): Before {
  const b: Before = { attachedElsewhere: () => false, pending: new Set(), detachUnsafe: new Set(), protectedMounted: new Set(), keptPairs: new Set() };
  const attachedOn = new Map<number, Set<number>>();
  for (const n of world.nodeIds(-1, 1e6)) {
    const node = world.node(n);
    world.forEachPairOfNode(n, (p) => {
      const k = key(p.volume, p.node);
      if (p.attachState === 'attached') attachedOn.set(p.volume, (attachedOn.get(p.volume) ?? new Set()).add(p.node));
      if (world.isOperationPending(p.volume, p.node)) b.pending.add(k);
      if (!world.isSafeToRetry(p.volume, p.node, 'detach', now)) b.detachUnsafe.add(k);
      if (p.mounted && node?.healthy && !node.outOfService) b.protectedMounted.add(k);
      if (p.desiredPods > 0 && p.attachState === 'attached' && !world.isOperationPending(p.volume, p.node)) b.keptPairs.add(k);
    });
  }
  b.attachedElsewhere = (v, n) => [...(attachedOn.get(v) ?? [])].some((other) => other !== n);
  return b;
}

function check(world: WorldState, plan: Plan, before: Before): void {
  for (const a of plan.attaches) {
    const k = key(a.volume, a.node);
    assert.ok(!before.pending.has(k), `attach ${k} while an operation is pending`);
    if (world.multiAttachForbidden(a.volume)) assert.ok(!before.attachedElsewhere(a.volume, a.node), `attach of forbidden ${k} attached elsewhere`);
    assert.ok(!before.keptPairs.has(k), `attach of an attached pair ${k}`);
  }
  for (const d of plan.detaches) {
    const k = key(d.volume, d.node);
    assert.ok(!before.protectedMounted.has(k), `detach of mounted ${k} on a healthy node`);
    assert.ok(!before.detachUnsafe.has(k), `detach of ${k} while its key is busy`);
    assert.equal(world.desiredPods(d.volume, d.node).length, 0, `detach of desired ${k}`);
    assert.equal(d.verifySafeToDetach, !(d.forcedTimeout || d.outOfService));
  }
  for (const k of before.keptPairs) {
    const [v, n] = k.split('/').map(Number);
    assert.equal(world.detachRequestedAt(v, n), null, `timer of kept pair ${k}`);
  }
  for (const c of plan.conflicts) assert.equal(world.pair(c.volume, c.node)?.multiAttachErrorReported, false);
}

describe('plan safety invariants', () => {
  it('hold for random sequences on the main thread', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArb(universe), { minLength: 20, maxLength: 200 }), async (commands) => {
        const world = createWorldState();
        const planner = createPlanner({ state: world, workers: 0, shards: 2, build: 'debug' });
        const h = new Harness(world, planner, universe);
        for (const c of commands) {
          if (c.k !== 'plan') {
            await h.apply(c);
            continue;
          }
          const before = snapshot(world, h.now);
          const plan = await h.comparePlans({ maxWaitForUnmountMs: c.maxWait, disableForceDetachOnTimeout: c.disableForce });
          check(world, plan, before);
        }
        await planner.close();
      }),
      { seed: 7, numRuns: 300 },
    );
  });

  it('keep a volume wanted again before its detach started (Q4)', async () => {
    const world = createWorldState();
    const planner = createPlanner({ state: world, workers: 0, build: 'debug' });
    const n = world.internNode('n');
    world.setNodeManaged(n);
    world.setNodeHealthy(n, true);
    const v = world.internVolume('v');
    world.addDesiredPod(v, n, 'p');
    world.markAttached(v, n);
    const opts = { maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false };
    world.removeDesiredPod(v, n, 'p');
    let plan = await planner.plan(1000, opts);
    assert.equal(plan.detaches.length, 0, 'mounted on a healthy node: waits');
    assert.equal(world.detachRequestedAt(v, n), 1000, 'F4: the timer started');
    const again = world.internVolume('v');
    world.addDesiredPod(again, n, 'p2');
    plan = await planner.plan(2000, opts);
    assert.deepEqual([plan.detaches.length, plan.attaches.length, plan.conflicts.length], [0, 0, 0]);
    assert.equal(world.detachRequestedAt(again, n), null, 'G2: the timer was reset');
    assert.equal(world.attachState(again, n), 'attached');
    await planner.close();
  });
});
