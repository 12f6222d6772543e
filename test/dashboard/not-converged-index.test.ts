import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createWorldState, type WorldState } from '../../src/cache/world-state.js';
import { createNotConvergedIndex, type IndexedPair } from '../../src/dashboard/not-converged-index.js';
import { queryNotConverged } from '../../src/dashboard/not-converged-query.js';
import { REASON_CODES, type ReasonCode } from '../../src/dashboard/reason-codes.js';
import { nodeFacts, pairView, readContext, volumeFacts } from '../../src/http/pair-view.js';
import { createFakeInspectionView, type FakeInspectionView } from '../http/fake-inspection-view.js';
import { settle } from '../support/mock-clock.js';

/** Reason counts over every pair, through the HTTP pair view (not the sweep's code path). */
function bruteForce(state: WorldState, view: FakeInspectionView): Record<string, number> {
  const ctx = readContext(state, view);
  const out: Record<string, number> = {};
  for (let ids = state.nodeIds(-1, 100); ids.length > 0; ids = state.nodeIds(ids[ids.length - 1], 100)) {
    for (const id of ids) {
      const nf = nodeFacts(state, id)!;
      state.forEachPairOfNode(id, (p) => {
        const v = pairView(ctx, p, nf, volumeFacts(state, p.volume));
        if (v.reason !== undefined) out[v.reason] = (out[v.reason] ?? 0) + 1;
      });
    }
  }
  return out;
}

function counts(byReason: Record<ReasonCode, { count: number }>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of REASON_CODES) if (byReason[c].count > 0) out[c] = byReason[c].count;
  return out;
}

interface PairSpec { v: number; n: number; pods: number; actual: 'none' | 'attached' | 'uncertain'; unreport: boolean; op: 'none' | 'attach' | 'detach' | 'failed-attach' | 'failed-detach' }

const pairArb: fc.Arbitrary<PairSpec> = fc.record({
  v: fc.nat(5), n: fc.nat(5), pods: fc.nat(2),
  actual: fc.constantFrom<PairSpec['actual']>('none', 'attached', 'uncertain'),
  unreport: fc.boolean(),
  op: fc.constantFrom<PairSpec['op']>('none', 'attach', 'detach', 'failed-attach', 'failed-detach'),
});
const nodeArb = fc.record({ healthy: fc.boolean(), oos: fc.boolean(), mounted: fc.boolean() });

function build(nodes: Array<{ healthy: boolean; oos: boolean; mounted: boolean }>, forbidden: boolean[], pairs: PairSpec[], disableForce: boolean) {
  const state = createWorldState();
  const view = createFakeInspectionView({ state, options: { disableForceDetachOnTimeout: disableForce } });
  const now = view.now();
  const vols = forbidden.map((f, i) => {
    const id = state.internVolume(`kubernetes.io/csi/d^v${i}`);
    state.setMultiAttachForbidden(id, f);
    return id;
  });
  const nodeIds = nodes.map((o, i) => {
    const id = state.internNode(`node-${i}`);
    state.setNodeManaged(id);
    state.setNodeHealthy(id, o.healthy);
    state.setNodeOutOfService(id, o.oos);
    state.setVolumesInUse(id, o.mounted ? vols.map((v) => state.volumeName(v)) : []);
    return id;
  });
  let uid = 0;
  for (const p of pairs) {
    const v = vols[p.v % vols.length];
    const n = nodeIds[p.n % nodeIds.length];
    for (let i = 0; i < p.pods; i++) state.addDesiredPod(v, n, `pod-${uid++}`);
    if (p.actual === 'attached') state.markAttached(v, n);
    if (p.actual === 'uncertain') state.markUncertain(v, n);
    if (p.unreport) state.removeFromReportSet(v, n);
    if (p.op !== 'none') {
      const op = p.op.endsWith('attach') ? 'attach' : 'detach';
      if (state.tryStartOperation(v, n, op, now - 100) === 'started' && p.op.startsWith('failed')) state.completeOperation(v, n, op, false, now - 50);
    }
  }
  return { state, view };
}

describe('not-converged index', () => {
  it('counts by reason equal a brute-force count over the same state', () => {
    fc.assert(fc.property(
      fc.array(nodeArb, { minLength: 1, maxLength: 6 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
      fc.array(pairArb, { maxLength: 30 }), fc.boolean(),
      (nodes, forbidden, pairs, disableForce) => {
        const { state, view } = build(nodes, forbidden, pairs, disableForce);
        const index = createNotConvergedIndex({ state, view });
        const snap = index.sweepNow();
        const expected = bruteForce(state, view);
        assert.deepEqual(counts(snap.byReason), expected);
        assert.equal(snap.items.length, Object.values(expected).reduce((a, b) => a + b, 0));
        assert.equal(snap.attach + snap.detach, snap.items.length);
        const h = snap.histogram;
        assert.equal(h.lt10s + h.lt1m + h.lt6m + h.ge6m, snap.items.length);
      },
    ), { numRuns: 150 });
  });

  it('keeps since across sweeps while a pair stays not converged, and versions changes of the set', () => {
    const { state, view } = build([{ healthy: true, oos: false, mounted: false }], [true], [], false);
    const v = state.findVolume('kubernetes.io/csi/d^v0')!;
    const n = state.findNode('node-0')!;
    const index = createNotConvergedIndex({ state, view });
    assert.equal(index.sweepNow().items.length, 0);
    const v0 = index.snapshot().version;
    state.addDesiredPod(v, n, 'pod-a');
    const t0 = view.now();
    const s1 = index.sweepNow();
    assert.equal(s1.items.length, 1);
    assert.equal(s1.items[0].reason, 'attach-next-pass');
    assert.equal(s1.items[0].since, t0);
    assert.ok(s1.version > v0);
    view.advance(70_000);
    state.tryStartOperation(v, n, 'attach', view.now());
    const s2 = index.sweepNow();
    assert.equal(s2.items[0].reason, 'attach-running');
    assert.equal(s2.items[0].since, t0, 'since is kept when the reason changes');
    assert.equal(s2.histogram.lt6m, 1);
    assert.ok(s2.version > s1.version, 'a reason change is a change of the set');
    view.advance(1000);
    const s3 = index.sweepNow();
    assert.equal(s3.version, s2.version, 'nothing changed: same version');
    state.completeOperation(v, n, 'attach', true, view.now());
    state.markAttached(v, n);
    const s4 = index.sweepNow();
    assert.equal(s4.items.length, 0);
    assert.ok(s4.version > s3.version);
    // Not converged again: a new since.
    state.removeDesiredPod(v, n, 'pod-a');
    view.advance(5000);
    const s5 = index.sweepNow();
    assert.equal(s5.items[0].since, view.now());
  });

  it('sweeps in slices on its own and serves windows, filters and groups', async () => {
    const nodes = Array.from({ length: 40 }, (_, i) => ({ healthy: i % 2 === 0, oos: false, mounted: true }));
    const pairs = Array.from({ length: 120 }, (_, i) => ({ v: i % 6, n: i % 40, pods: i % 3 === 0 ? 1 : 0, actual: i % 4 === 0 ? 'none' : 'attached', unreport: false, op: 'none' } as const));
    const { state, view } = build(nodes, [true, false, true, false, false, false], [...pairs], false);
    const index = createNotConvergedIndex({ state, view, slicePairs: 7, intervalMs: 5 });
    index.start();
    try {
      await settle('a first sweep', () => index.snapshot().sweptAt >= 0);
    } finally {
      index.stop();
    }
    const snap = index.snapshot();
    assert.deepEqual(counts(snap.byReason), bruteForce(state, view));
    const ctx = readContext(state, view);
    const all = queryNotConverged(ctx, snap, { limit: 500 });
    assert.equal(all.total, snap.items.length);
    const healthy = queryNotConverged(ctx, snap, { reason: 'mounted-node-healthy', sort: 'node', limit: 5 });
    assert.ok(healthy.total > 5);
    assert.equal(healthy.items!.length, 5);
    for (const it of healthy.items!) {
      assert.equal(it.reason, 'mounted-node-healthy');
      assert.equal(it.waitingFor, `detach from ${it.node}: still mounted, node healthy, will not force`);
      assert.deepEqual(it.rule, ['F6']);
      assert.ok(it.etaWhy);
    }
    const names = healthy.items!.map((i) => i.node);
    assert.deepEqual([...names].sort(), names);
    const page2 = queryNotConverged(ctx, snap, { reason: 'mounted-node-healthy', sort: 'node', offset: 5, limit: 5 });
    assert.notDeepEqual(page2.items!.map((i) => `${i.volume}|${i.node}`), healthy.items!.map((i) => `${i.volume}|${i.node}`));
    const byPrefix = queryNotConverged(ctx, snap, { q: 'node-1', limit: 500 });
    assert.ok(byPrefix.items!.every((i) => i.node.startsWith('node-1')));
    const grouped = queryNotConverged(ctx, snap, { groupBy: 'reason' });
    assert.equal(grouped.groups!.reduce((a, g) => a + g.count, 0), snap.items.length);
    for (const g of grouped.groups!) assert.equal(g.sample?.reason, g.key);
  });
});

describe('not-converged index: sweeps while read', () => {
  it('sweeps only once touched, stops once nothing has touched it for idleAfterMs, and a touch starts a sweep at once', async () => {
    const nodes = Array.from({ length: 4 }, () => ({ healthy: true, oos: false, mounted: true }));
    const pairs = Array.from({ length: 8 }, (_, i) => ({ v: i % 2, n: i % 4, pods: 1, actual: 'none', unreport: false, op: 'none' } as const));
    const { state, view } = build(nodes, [true, false], [...pairs], false);
    let touchClock = 0;
    const index = createNotConvergedIndex({ state, view, intervalMs: 5, idleAfterMs: 1000, now: () => touchClock });
    index.start();
    try {
      await new Promise((r) => setTimeout(r, 50)); // ten intervals
      assert.equal(index.snapshot().sweptAt, -1, 'no sweep before the first touch');
      assert.equal(index.snapshot().pairsSeen, 0);
      index.touch();
      await settle('a first sweep', () => index.snapshot().sweptAt >= 0);
      const versions = () => index.snapshot().version;
      // Idle: past idleAfterMs on the touch clock, no further sweep sees a change.
      touchClock = 5000;
      await new Promise((r) => setTimeout(r, 50)); // ten intervals: the sweeper goes idle
      const v0 = versions();
      assert.equal(index.snapshot().sweptAt, -1, 'an idle index keeps no snapshot');
      assert.equal(index.snapshot().items.length, 0);
      state.addDesiredPod(state.findVolume('kubernetes.io/csi/d^v1')!, state.findNode('node-0')!, 'pod-new');
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(versions(), v0, 'no sweep while idle');
      index.touch();
      await settle('a sweep after the touch', () => versions() > v0 && index.snapshot().sweptAt >= 0);
      assert.ok(index.snapshot().items.length > 0, 'the sweep after the touch finds the waiting pairs again');
    } finally {
      index.stop();
    }
  });

  for (const duty of [1, 0.25]) {
    it(`a sweep at duty cycle ${duty} pauses ${duty === 1 ? 'never' : '3 × each slice\'s length'} between slices`, async (t) => {
      const nodes = Array.from({ length: 20 }, () => ({ healthy: true, oos: false, mounted: true }));
      const pairs = Array.from({ length: 20 }, (_, i) => ({ v: i % 4, n: i, pods: 1, actual: 'none', unreport: false, op: 'none' } as const));
      const { state, view } = build(nodes, [false, false, false, false], [...pairs], false);
      // A clock that moves 1 ms per reading: a slice's length is the readings it takes, an integer.
      let tick = 0;
      t.mock.method(performance, 'now', () => ++tick);
      const pauses: number[] = [];
      const realSetTimeout = globalThis.setTimeout;
      t.mock.method(globalThis, 'setTimeout', ((fn: () => void, ms?: number) => {
        if (ms !== undefined && ms > 0 && ms < 10_000) pauses.push(ms); // not the next sweep's timer (~intervalMs)
        return realSetTimeout(fn, 0);
      }) as typeof setTimeout);
      const index = createNotConvergedIndex({ state, view, slicePairs: 1, sliceMs: 1e9, intervalMs: 60_000, dutyCycle: duty });
      index.start();
      try {
        await settle('a first sweep', () => index.snapshot().sweptAt >= 0);
      } finally {
        index.stop();
      }
      // One pair per slice: 20 slices, each followed by another (the last finds the end of the nodes).
      if (duty === 1) assert.deepEqual(pauses, []);
      else {
        assert.equal(pauses.length, 20);
        for (const p of pauses) assert.ok(p >= 3 && p % 3 === 0, `pause ${p}`);
      }
    });
  }
});

describe('firstSorted', () => {
  it('equals the first k of a full sort', async () => {
    const { firstSorted } = await import('../../src/dashboard/not-converged-query.js');
    fc.assert(fc.property(fc.array(fc.record({ since: fc.nat(50), volume: fc.constantFrom('a', 'b', 'c'), node: fc.constantFrom('x', 'y') }), { maxLength: 200 }), fc.integer({ min: 1, max: 60 }), (raw, k) => {
      const items: IndexedPair[] = raw.map((r) => ({ ...r, side: 'attach', reason: 'attach-next-pass' }));
      const cmp = (a: IndexedPair, b: IndexedPair) => a.since - b.since || a.volume.localeCompare(b.volume) || a.node.localeCompare(b.node);
      const expected = [...items].sort(cmp).slice(0, k);
      assert.deepEqual(firstSorted([...items], k, cmp), expected);
    }), { numRuns: 200 });
  });
});
