// WorldState contracts, one rule at a time (docs/upstream-rules.md rule numbers in the names).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWorldState, type WorldState } from '../../src/cache/world-state.js';
import { isFleetError } from '../../src/errors/index.js';
import { haveSameHiddenClass, warmPair } from '../support/hidden-class.js';

function fleet(state: WorldState = createWorldState()) {
  const node = (name: string, opts: { managed?: boolean } = {}) => {
    const id = state.internNode(name);
    if (opts.managed ?? true) state.setNodeManaged(id);
    return id;
  };
  const volume = (name: string, forbidden = false) => {
    const id = state.internVolume(name);
    state.setMultiAttachForbidden(id, forbidden);
    return id;
  };
  return { state, node, volume };
}

describe('WorldState interning', () => {
  it('returns the same id for the same name and finds without creating', () => {
    const { state, node } = fleet();
    const a = node('a');
    assert.equal(state.internNode('a'), a);
    assert.equal(state.findNode('a'), a);
    assert.equal(state.findNode('b'), undefined);
    assert.equal(state.nodeName(a), 'a');
  });

  it('recycles a volume id only when its last pair and operation state are gone', () => {
    const { state, node, volume } = fleet();
    const n = node('n');
    const v = volume('v');
    state.addDesiredPod(v, n, 'p');
    assert.equal(state.releaseVolume(v), false, 'a desired pair holds the volume');
    state.removeDesiredPod(v, n, 'p');
    assert.equal(state.findVolume('v'), undefined, 'freed with its last pair');
    const w = volume('w');
    assert.equal(w, v, 'the id is reused');
  });

  it('keeps a volume interned without pairs until releaseVolume', () => {
    const { state, volume } = fleet();
    const v = volume('v');
    assert.equal(state.findVolume('v'), v);
    assert.equal(state.releaseVolume(v), true);
    assert.equal(state.findVolume('v'), undefined);
  });

  it('recycles a removed node once no pair and no status write reference it (B2, K3)', () => {
    const { state, node, volume } = fleet();
    const n = node('n');
    const v = volume('v');
    state.markAttached(v, n);
    assert.equal(state.removeNode(n), true);
    assert.equal(state.findNode('n'), n, 'an attached pair keeps the node');
    state.markDetached(v, n);
    assert.equal(state.findNode('n'), n, 'a pending status write keeps the node');
    state.clearStatusUpdateNeeded(n);
    assert.equal(state.findNode('n'), undefined);
  });
});

describe('WorldState nodes', () => {
  it('refuses to remove a node while pods want volumes on it (B2), and removes it when the last goes', () => {
    const { state, node, volume } = fleet();
    const n = node('n');
    const v = volume('v');
    state.addDesiredPod(v, n, 'p');
    state.addDesiredPod(v, n, 'q');
    assert.equal(state.removeNode(n), false);
    assert.equal(state.node(n)?.managed, true);
    state.removeDesiredPod(v, n, 'p');
    assert.equal(state.node(n)?.managed, true, 'a pod still wants the volume');
    state.removeDesiredPod(v, n, 'q');
    // Not kept for the life of the process (upstream keeps it: a leak where nodes come and go).
    assert.equal(state.findNode('n'), undefined);
    assert.equal(state.counts().managedNodes, 0);
  });

  it('a deleted node named again before its pods go is not removed when they go', () => {
    const { state, node, volume } = fleet();
    const n = node('n');
    const v = volume('v');
    state.addDesiredPod(v, n, 'p');
    assert.equal(state.removeNode(n), false);
    assert.equal(state.internNode('n'), n); // the Node object is back (an add event)
    state.removeDesiredPod(v, n, 'p');
    assert.equal(state.node(n)?.managed, true);
  });

  it('ignores pods on unmanaged nodes (B3)', () => {
    const { state, node, volume } = fleet();
    const n = node('n', { managed: false });
    assert.equal(state.addDesiredPod(volume('v'), n, 'p'), 'node-not-managed');
    assert.equal(state.counts().desiredPairs, 0);
  });

  it('counts every pair as mounted until volumesInUse is observed, then follows it (D3)', () => {
    const { state, node, volume } = fleet();
    const n = node('n');
    const v = volume('v');
    const w = volume('w');
    state.markAttached(v, n);
    assert.equal(state.pair(v, n)?.mounted, true);
    state.setVolumesInUse(n, ['w']);
    assert.equal(state.pair(v, n)?.mounted, false);
    state.markAttached(w, n);
    assert.equal(state.pair(w, n)?.mounted, true, 'a pair created later takes the current set');
    state.setVolumesInUse(n, null);
    assert.equal(state.pair(v, n)?.mounted, true);
  });

  it('flags a node for a status write only once its report set was used (B4)', () => {
    const { state, node, volume } = fleet();
    const n = node('n');
    assert.equal(state.setStatusUpdateNeeded(n), false);
    state.markAttached(volume('v'), n);
    state.clearStatusUpdateNeeded(n);
    assert.equal(state.setStatusUpdateNeeded(n), true);
    assert.equal(state.statusUpdateNeeded(n), true);
    assert.deepEqual(state.nodesNeedingStatusUpdate(), [n]);
    state.clearStatusUpdateNeeded(n);
    assert.deepEqual(state.nodesNeedingStatusUpdate(), []);
  });
});

describe('WorldState desired and actual state', () => {
  it('keeps one desired entry per pair with its pod set and count (C1)', () => {
    const { state, node, volume } = fleet();
    const n = node('n');
    const v = volume('v');
    assert.equal(state.addDesiredPod(v, n, 'p1'), 'added');
    assert.equal(state.addDesiredPod(v, n, 'p2'), 'added');
    assert.equal(state.addDesiredPod(v, n, 'p1'), 'exists');
    assert.deepEqual(state.desiredPods(v, n), ['p1', 'p2']);
    assert.equal(state.pair(v, n)?.desiredPods, 2);
    assert.equal(state.removeDesiredPod(v, n, 'p3'), false);
    assert.equal(state.counts().desiredPairs, 1);
  });

  it('clears multiAttachErrorReported only when the entry disappears (H4)', () => {
    const { state, node, volume } = fleet();
    const n = node('n');
    const v = volume('v', true);
    state.addDesiredPod(v, n, 'p1');
    state.setMultiAttachErrorReported(v, n);
    state.addDesiredPod(v, n, 'p2');
    state.removeDesiredPod(v, n, 'p1');
    assert.equal(state.pair(v, n)?.multiAttachErrorReported, true);
    state.removeDesiredPod(v, n, 'p2');
    const again = volume('v', true);
    state.addDesiredPod(again, n, 'p3');
    assert.equal(state.pair(again, n)?.multiAttachErrorReported, false);
  });

  it('reports only confirmed attachments and flags the node on every change (D6, F8, F10, Q2)', () => {
    const { state, node, volume } = fleet();
    const n = node('n');
    const v = volume('v');
    state.markUncertain(v, n);
    assert.deepEqual(state.volumesToReport(n), []);
    assert.equal(state.addToReportSet(v, n), false, 'uncertain is never reported');
    state.markAttached(v, n);
    assert.deepEqual(state.volumesToReport(n), [v]);
    assert.equal(state.statusUpdateNeeded(n), true);
    state.clearStatusUpdateNeeded(n);
    assert.equal(state.removeFromReportSet(v, n), true);
    assert.equal(state.statusUpdateNeeded(n), true);
    assert.equal(state.removeFromReportSet(v, n), false);
    state.clearStatusUpdateNeeded(n);
    assert.equal(state.addToReportSet(v, n), true);
    state.markUncertain(v, n);
    assert.deepEqual(state.volumesToReport(n), [], 'uncertain leaves the report set');
    state.markDetached(v, n);
    assert.equal(state.attachState(v, n), 'detached');
    assert.deepEqual(state.counts().attached + state.counts().uncertain, 0);
  });

  it('counts a desired pair of a forbidden volume confirmed elsewhere as a conflict (G3, D7)', () => {
    const { state, node, volume } = fleet();
    const a = node('a');
    const b = node('b');
    const v = volume('v', true);
    state.addDesiredPod(v, b, 'p');
    state.markUncertain(v, a);
    assert.equal(state.counts().conflicts, 0, 'uncertain does not block');
    state.markAttached(v, a);
    assert.deepEqual(state.conflicts(), [{ volume: v, node: b }]);
    state.setMultiAttachForbidden(v, false);
    assert.equal(state.counts().conflicts, 0);
    state.setMultiAttachForbidden(v, true);
    state.markDetached(v, a);
    assert.equal(state.counts().conflicts, 0);
  });
});

describe('WorldState operations', () => {
  it('serialises a forbidden volume on one volume-wide key (I1, I2)', () => {
    const { state, node, volume } = fleet();
    const a = node('a');
    const b = node('b');
    const v = volume('v', true);
    state.addDesiredPod(v, a, 'p');
    state.addDesiredPod(v, b, 'q');
    assert.equal(state.tryStartOperation(v, a, 'attach', 0), 'started');
    assert.equal(state.tryStartOperation(v, b, 'attach', 0), 'pending');
    assert.equal(state.isOperationPending(v, b), true);
    assert.equal(state.isSafeToRetry(v, b, 'detach', 0), false);
    assert.equal(state.completeOperation(v, b, 'detach', true, 1), false, 'no detach is pending');
    assert.equal(state.completeOperation(v, b, 'attach', true, 1), true, 'the lane is the volume');
    assert.equal(state.tryStartOperation(v, b, 'attach', 1), 'started');
  });

  it('runs operations of an allowed volume per node (I1, I2)', () => {
    const { state, node, volume } = fleet();
    const a = node('a');
    const b = node('b');
    const v = volume('v');
    assert.equal(state.tryStartOperation(v, a, 'attach', 0), 'started');
    assert.equal(state.tryStartOperation(v, b, 'attach', 0), 'started');
    assert.equal(state.tryStartOperation(v, a, 'detach', 0), 'pending');
    assert.equal(state.pendingOperations().length, 2);
  });

  it('backs off 500 ms doubling to 2 min 2 s per key and operation, reset by success (I3)', () => {
    const { state, node, volume } = fleet();
    const n = node('n');
    const v = volume('v');
    state.addDesiredPod(v, n, 'p');
    let now = 0;
    const durations: number[] = [];
    for (let k = 0; k < 10; k++) {
      assert.equal(state.tryStartOperation(v, n, 'attach', now), 'started');
      state.completeOperation(v, n, 'attach', false, now);
      const [entry] = state.backoffOperations(now);
      durations.push(entry.durationMs);
      assert.equal(state.tryStartOperation(v, n, 'attach', now + entry.durationMs), 'backoff', 'the window is inclusive');
      assert.equal(state.isSafeToRetry(v, n, 'detach', now), true, 'an attach failure does not delay a detach');
      now += entry.durationMs + 1;
    }
    assert.deepEqual(durations, [500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 122000, 122000]);
    assert.equal(state.tryStartOperation(v, n, 'attach', now), 'started');
    state.completeOperation(v, n, 'attach', true, now);
    assert.equal(state.tryStartOperation(v, n, 'attach', now), 'started');
    state.completeOperation(v, n, 'attach', false, now);
    assert.equal(state.backoffOperations(now)[0].durationMs, 500, 'success deleted the key');
  });

  it('releases an operation that never reached the API without touching its backoff (F8)', () => {
    for (const forbidden of [false, true]) {
      const { state, node, volume } = fleet();
      const n = node('n');
      const v = volume('v', forbidden);
      assert.equal(state.tryStartOperation(v, n, 'detach', 0), 'started');
      state.completeOperation(v, n, 'detach', false, 0);
      assert.equal(state.tryStartOperation(v, n, 'detach', 501), 'started');
      assert.equal(state.releaseOperation(v, n, 'attach'), false, 'no attach is pending');
      assert.equal(state.releaseOperation(v, n, 'detach'), true);
      assert.equal(state.isOperationPending(v, n), false);
      assert.equal(state.releaseOperation(v, n, 'detach'), false, 'released once');
      assert.equal(state.tryStartOperation(v, n, 'detach', 501), 'started', 'the key is free and no new window began');
      state.completeOperation(v, n, 'detach', false, 501);
      assert.equal(state.backoffOperations(501)[0]?.durationMs, 1000, 'the failure before the release still counts');
    }
  });
});

describe('WorldState during a plan', () => {
  it('refuses mutations while planning and runs whenIdle callbacks after', () => {
    const { state, node } = fleet();
    const n = node('n');
    const access = state.kernelAccess();
    access.beginPlan(1000, 1024);
    assert.equal(state.planning, true);
    assert.throws(() => state.setNodeHealthy(n, true), (err) => isFleetError(err, 'FA_ERR_KERNEL'));
    let ran = false;
    state.whenIdle(() => {
      state.setNodeHealthy(n, true);
      ran = true;
    });
    assert.equal(ran, false);
    assert.equal(state.node(n)?.healthy, false, 'reads are allowed');
    access.endPlan();
    assert.equal(ran, true);
    assert.equal(state.node(n)?.healthy, true);
  });

  it('runs deferred work in order; one that starts a plan holds the rest until that plan ends', () => {
    const { state } = fleet();
    const access = state.kernelAccess();
    const ran: string[] = [];
    access.beginPlan(1000, 1024);
    state.whenIdle(() => ran.push('a'));
    state.whenIdle(() => {
      ran.push('b');
      access.beginPlan(1001, 1024);
      state.whenIdle(() => ran.push('d'));
    });
    state.whenIdle(() => ran.push('c'));
    access.endPlan();
    assert.deepEqual(ran, ['a', 'b']);
    access.endPlan();
    assert.deepEqual(ran, ['a', 'b', 'c', 'd']);
    state.whenIdle(() => ran.push('e'));
    assert.deepEqual(ran, ['a', 'b', 'c', 'd', 'e'], 'idle: runs at once');
  });

  it('keeps every table intact when they grow (memory.grow and relayout)', () => {
    const state = createWorldState({ capacity: { nodes: 1, volumes: 1, pairs: 1 } });
    const { node, volume } = fleet(state);
    const before = state.kernelAccess().memory.buffer.byteLength;
    for (let i = 0; i < 60_000; i++) {
      const n = node(`n${i % 3000}`);
      const v = volume(`v${i}`, i % 2 === 0);
      state.addDesiredPod(v, n, `p${i}`);
      if (i % 3 === 0) state.markAttached(v, n);
    }
    assert.ok(state.kernelAccess().memory.buffer.byteLength > before, 'the memory grew');
    for (let i = 0; i < 60_000; i++) {
      const n = state.findNode(`n${i % 3000}`) as number;
      const v = state.findVolume(`v${i}`) as number;
      assert.deepEqual(state.desiredPods(v, n), [`p${i}`]);
      assert.equal(state.attachState(v, n), i % 3 === 0 ? 'attached' : 'detached');
      assert.equal(state.multiAttachForbidden(v), i % 2 === 0);
    }
    assert.equal(state.counts().pairs, 60_000);
  });
});

describe('WorldState per-pair operation lookups', () => {
  /** What the list-based filters answer (the reference the O(1) lookups must equal). */
  function byLists(state: WorldState, volume: number, node: number, now: number) {
    const forbidden = state.multiAttachForbidden(volume);
    const pending = state.isOperationPending(volume, node)
      ? state.pendingOperations().find((p) => p.volume === volume && (forbidden || p.volumeWide || p.node === node))
      : undefined;
    const backoff = state.backoffOperations(now).filter((b) => b.volume === volume && (b.volumeWide || b.node === node));
    return { pending, backoff };
  }

  it('pendingOperationFor and backoffFor equal the list filters for allowed and forbidden volumes', () => {
    const { state, node, volume } = fleet();
    const nodes = ['a', 'b', 'c'].map((n) => node(n));
    const allowed = volume('rwx');
    const forbidden = volume('rwo', true);
    const [a, b] = nodes;
    state.tryStartOperation(allowed, a, 'attach', 0);
    state.tryStartOperation(allowed, b, 'detach', 0);
    state.completeOperation(allowed, b, 'detach', false, 0);
    state.tryStartOperation(forbidden, a, 'attach', 0);
    for (const now of [0, 100]) {
      for (const v of [allowed, forbidden]) {
        for (const n of nodes) {
          const want = byLists(state, v, n, now);
          assert.deepEqual(state.pendingOperationFor(v, n), want.pending, `pending v${v} n${n}`);
          assert.deepEqual(state.backoffFor(v, n, now), want.backoff, `backoff v${v} n${n}`);
        }
      }
    }
    state.completeOperation(forbidden, a, 'attach', false, 10);
    for (const n of nodes) {
      assert.deepEqual(state.pendingOperationFor(forbidden, n), undefined);
      const got = state.backoffFor(forbidden, n, 20);
      assert.deepEqual(got, byLists(state, forbidden, n, 20).backoff);
      assert.equal(got.length, 1, 'the volume-wide window covers every node');
    }
    assert.deepEqual(state.backoffFor(forbidden, a, 10 + 501), [], 'closed after its 500 ms');
  });
});

describe('counts()', () => {
  it('gives every call one hidden class, with every counter', () => {
    const state = createWorldState();
    state.setNodeManaged(state.internNode('n1'));
    const [a, b] = warmPair(() => state.counts());
    assert.ok(haveSameHiddenClass(a, b), 'a spread of the counters gives each call classes of its own on Node 20');
    assert.deepEqual(Object.keys(b).sort(), ['attached', 'backoffOperations', 'conflicts', 'desiredAttached', 'desiredPairs', 'managedNodes', 'nodes',
      'pairs', 'pendingOperations', 'reportedAttached', 'statusUpdatesNeeded', 'uncertain', 'volumes']);
    assert.equal(b.nodes, 1);
    assert.equal(b.managedNodes, 1);
  });
});
