import assert from 'node:assert/strict';
import { controllerNow } from '../../src/cache/controller-clock.js';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { loadKubeConfig, type FleetKubeConfig } from '../../src/kube/kube-config.js';
import { POD_KIND, type PodRecord } from '../../src/kube/projections/pod.js';
import { createReflector, type Reflector } from '../../src/kube/reflector.js';
import { APPLY_CHUNK } from '../../src/kube/reflector-list.js';
import { decodePage, encodePage, projectPage } from '../../src/kube/list-page.js';
import { startFakeKubeServer, waitFor, type FakeKubeServer, type FakeObject } from './fake-kube-server.js';
import { mockClock, settle, turns } from '../support/mock-clock.js';

const PODS = '/api/v1/pods';

function pod(name: string, extra: Partial<{ nodeName: string; phase: string }> = {}): FakeObject {
  return {
    metadata: { name, namespace: 'ns', uid: `uid-${name}` },
    spec: { nodeName: extra.nodeName ?? 'n1', volumes: [{ name: 'v', persistentVolumeClaim: { claimName: `pvc-${name}` } }] },
    status: { phase: extra.phase ?? 'Running' },
  };
}

interface Recorded {
  adds: string[];
  updates: Array<{ key: string; phase: string; oldPhase: string }>;
  deletes: string[];
}

function record(r: Reflector<PodRecord>): Recorded {
  const rec: Recorded = { adds: [], updates: [], deletes: [] };
  r.addHandler({
    add: (p) => rec.adds.push(`${p.namespace}/${p.name}`),
    update: (p, old) => rec.updates.push({ key: `${p.namespace}/${p.name}`, phase: p.phase, oldPhase: old.phase }),
    delete: (p) => rec.deletes.push(`${p.namespace}/${p.name}`),
  });
  return rec;
}

describe('reflector (list+watch against a fake API server)', () => {
  let srv: FakeKubeServer;
  let kc: FleetKubeConfig;
  let refl: Reflector<PodRecord> | undefined;

  before(async () => {
    srv = await startFakeKubeServer();
  });
  after(async () => {
    await srv.close();
  });
  beforeEach(() => {
    kc = loadKubeConfig({ yaml: srv.kubeconfigYaml });
  });
  afterEach(async () => {
    await refl?.stop();
    refl = undefined;
    kc.close();
    srv.stall(false);
    srv.goneAs = 'event';
  });

  function start(opts: Partial<Parameters<typeof createReflector<PodRecord>>[0]> = {}) {
    refl = createReflector<PodRecord>({ kc, kind: POD_KIND, backoff: { initialMs: 20, maxMs: 200 }, ...opts });
    const rec = record(refl);
    void refl.start();
    return { r: refl, rec };
  }

  it('lists in pages and delivers every object exactly once, then watches from the list resourceVersion', async () => {
    for (let i = 0; i < 1234; i++) srv.putSilently(PODS, pod(`p${String(i).padStart(4, '0')}`));
    const listRv = String(srv.rv());
    const before = srv.requests.length;
    const { r, rec } = start({ pageSize: 100 });
    await waitFor(() => r.synced(), 'sync');
    assert.equal(rec.adds.length, 1234);
    assert.equal(new Set(rec.adds).size, 1234);
    assert.equal(r.size(), 1234);
    const reqs = srv.requests.slice(before).map((q) => new URL(q.url, 'http://x'));
    const lists = reqs.filter((u) => u.pathname === PODS && u.searchParams.get('watch') !== 'true');
    assert.equal(lists.length, 13);
    assert.ok(lists.every((u) => u.searchParams.get('limit') === '100'));
    assert.equal(r.stats().lastList?.pages, 13);
    await waitFor(() => srv.watchers(PODS) === 1, 'watch');
    const w = srv.requests.slice(before).map((q) => new URL(q.url, 'http://x')).find((u) => u.searchParams.get('watch') === 'true');
    assert.equal(w?.searchParams.get('resourceVersion'), listRv);
    assert.equal(w?.searchParams.get('allowWatchBookmarks'), 'true');
    for (const p of [...r.keys()]) srv.removeSilently(PODS, p);
  });

  it('delivers add, update (with the old projection) and delete from the watch', async () => {
    const { r, rec } = start();
    await waitFor(() => r.synced() && srv.watchers(PODS) === 1, 'watch');
    srv.put(PODS, pod('w1', { phase: 'Pending' }));
    srv.put(PODS, pod('w1', { phase: 'Running' }));
    srv.remove(PODS, 'ns/w1');
    const beforeEvents = controllerNow();
    await waitFor(() => rec.deletes.length === 1, 'delete');
    const at = r.stats().lastEventAt;
    assert.ok(at !== undefined && at >= beforeEvents && at <= controllerNow(), 'the last event is timed when it arrives');
    assert.deepEqual(rec.adds, ['ns/w1']);
    assert.deepEqual(rec.updates, [{ key: 'ns/w1', phase: 'Running', oldPhase: 'Pending' }]);
    assert.equal(r.get('ns/w1'), undefined);
  });

  it('advances the resourceVersion on bookmarks and resumes the next watch from it', async () => {
    const { r } = start();
    await waitFor(() => r.synced() && srv.watchers(PODS) === 1, 'watch');
    srv.putSilently('/api/v1/nodes', { metadata: { name: 'elsewhere' } }); // moves the global rv only
    const target = String(srv.rv());
    assert.notEqual(r.stats().resourceVersion, target);
    srv.bookmark(PODS);
    const beforeBookmark = controllerNow();
    await waitFor(() => r.stats().resourceVersion === target, 'bookmark rv');
    assert.equal(r.stats().bookmarks, 1);
    assert.ok((r.stats().lastEventAt ?? 0) >= beforeBookmark, 'a bookmark counts as a sign of life');
    const n = srv.requests.length;
    srv.dropWatches();
    await waitFor(() => srv.requests.slice(n).some((q) => q.url.includes('watch=true')), 're-watch');
    const again = new URL(srv.requests.slice(n).find((q) => q.url.includes('watch=true'))?.url ?? '', 'http://x');
    assert.equal(again.searchParams.get('resourceVersion'), target);
  });

  for (const goneAs of ['event', 'status'] as const) {
    it(`relists on 410 (${goneAs}): deletes what vanished, adds what is new, updates only changed objects`, async () => {
      srv.goneAs = goneAs;
      for (const n of ['a', 'b', 'c']) srv.put(PODS, pod(n));
      const { r, rec } = start();
      await waitFor(() => r.synced() && srv.watchers(PODS) === 1, 'watch');
      await waitFor(() => rec.adds.length === 3, 'adds');
      srv.removeSilently(PODS, 'ns/b');
      srv.putSilently(PODS, pod('c', { phase: 'Succeeded' }));
      srv.putSilently(PODS, pod('d'));
      srv.compact();
      srv.dropWatches();
      await waitFor(() => r.stats().relists === 1 && rec.deletes.length === 1, 'relist');
      assert.deepEqual(rec.deletes, ['ns/b']);
      assert.deepEqual(rec.adds.slice(3), ['ns/d']);
      assert.deepEqual(rec.updates, [{ key: 'ns/c', phase: 'Succeeded', oldPhase: 'Running' }]);
      assert.deepEqual([...r.keys()].sort(), ['ns/a', 'ns/c', 'ns/d']);
      for (const k of ['ns/a', 'ns/c', 'ns/d']) srv.removeSilently(PODS, k);
    });
  }

  it('a relist into a store that is empty after the sync adds nothing until the whole list is in', async () => {
    let reads = 0;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const { r, rec } = start({
      pageSize: 2,
      readPage: async (kind, body) => {
        if (++reads === 3) await held; // the first list's one page, then the relist's two
        return decodePage(kind, encodePage(projectPage(kind, body.toString('utf8'))));
      },
    });
    try {
      await waitFor(() => r.synced() && srv.watchers(PODS) === 1, 'watch');
      assert.equal(r.size(), 0);
      for (const n of ['e1', 'e2', 'e3']) srv.putSilently(PODS, pod(n));
      srv.compact();
      srv.dropWatches();
      await waitFor(() => reads === 3, 'the relist\'s last page held');
      await new Promise((res) => setTimeout(res, 20));
      assert.deepEqual(rec.adds, [], 'the first page of a relist is not applied before the list ends');
    } finally {
      release();
    }
    await waitFor(() => rec.adds.length === 3, 'relist applied');
    assert.equal(r.stats().relists, 1);
    for (const n of ['e1', 'e2', 'e3']) srv.removeSilently(PODS, `ns/${n}`);
  });

  it('applies a relist larger than one chunk over several turns of the event loop', async () => {
    const n = APPLY_CHUNK + 500;
    const names = Array.from({ length: n }, (_, i) => `big${i}`);
    for (const name of names) srv.putSilently(PODS, pod(name));
    try {
      const { r, rec } = start({ pageSize: 10_000 });
      await waitFor(() => r.synced() && srv.watchers(PODS) === 1, 'watch', 10_000);
      for (const name of names) srv.putSilently(PODS, pod(name, { phase: 'Succeeded' }));
      // An immediate queued at the first update runs at the next turn of the loop: mid-relist
      // only if the relist yields (a timer might not be due yet when it does).
      let updatesAtImmediate = -1;
      let queued = false;
      r.addHandler({
        update: () => {
          if (queued) return;
          queued = true;
          setImmediate(() => (updatesAtImmediate = rec.updates.length));
        },
      });
      srv.compact();
      srv.dropWatches();
      await waitFor(() => rec.updates.length === n, 'relist applied', 10_000);
      await waitFor(() => updatesAtImmediate >= 0, 'immediate');
      assert.ok(updatesAtImmediate > 0 && updatesAtImmediate < n, `an immediate ran in the middle of the relist (after ${updatesAtImmediate} of ${n} updates)`);
      assert.equal(r.stats().relists, 1);
      assert.equal(r.size(), n);
    } finally {
      for (const name of names) srv.removeSilently(PODS, `ns/${name}`);
    }
  });

  it('restarts a dropped watch, relists after refused ones (as client-go), with growing backoff, then receives events again', async (t) => {
    // The reflector's timers run on the test's clock from its start (the requests on real I/O):
    // each backoff wait is seen as it is set, checked against its step's jitter ([0.5, 1.5) × 40,
    // 80, 160, 320, then the 400 ms cap), and the clock moved through it.
    const clock = mockClock(t, { performanceNow: false });
    const { r, rec } = start({ backoff: { initialMs: 40, maxMs: 400 } });
    await settle('watch', () => r.synced() && srv.watchers(PODS) === 1);
    srv.failNext((m, u) => u.pathname === PODS && u.searchParams.get('watch') === 'true', 500, 4);
    const mocked = globalThis.setTimeout;
    const waits: number[] = []; // the reflector's waits; request timeouts are far longer
    // Wrapped by hand, not with t.mock.method: its restore at the end of the test would put the
    // mocked setTimeout back after the mocked timers were reset.
    globalThis.setTimeout = ((fn: () => void, ms = 0) => {
      if (ms < 1000) waits.push(ms);
      return mocked(fn, ms);
    }) as typeof setTimeout;
    const before = r.stats();
    srv.dropWatches();
    try {
      // Each wait: no request before it ends (the loop turns over, so a request sent would reach
      // the server), the next attempt at its end.
      for (const [i, step] of [40, 80, 160, 320, 400].entries()) {
        await settle(`backoff ${i + 1}`, () => waits.length > i);
        const w = waits[i]!;
        assert.ok(w >= 0.5 * step && w <= Math.min(1.5 * step, 400), `backoff ${i + 1} of ${w} ms, for a ${step} ms step (${waits.join(', ')})`);
        const asked = srv.requests.length;
        clock.tick(Math.ceil(w) - 1);
        await turns(50);
        assert.equal(srv.requests.length, asked, `asked again before the ${w} ms backoff ended`);
        clock.tick(1);
      }
    } finally {
      globalThis.setTimeout = mocked;
    }
    await settle('reconnect', () => srv.watchers(PODS) === 1 && r.stats().restarts - before.restarts >= 1 && r.stats().relists - before.relists >= 4);
    t.mock.timers.reset();
    srv.put(PODS, pod('after'));
    await waitFor(() => rec.adds.includes('ns/after'), 'event after reconnect');
    srv.removeSilently(PODS, 'ns/after');
  });

  it('fires the watchdog on a stalled stream and recovers when events flow again', async () => {
    const { r, rec } = start({ watchdogMs: 250 });
    await waitFor(() => r.synced() && srv.watchers(PODS) === 1, 'watch');
    srv.stall(true);
    srv.dropWatches();
    await waitFor(() => r.stats().watchdogFires >= 1, 'watchdog');
    srv.stall(false);
    srv.put(PODS, pod('late'));
    await waitFor(() => rec.adds.includes('ns/late'), 'event after stall', 10_000);
    srv.removeSilently(PODS, 'ns/late');
  });

  it('does not fire the watchdog while events arrive more often than its period', async () => {
    const { r } = start({ watchdogMs: 250 });
    await waitFor(() => r.synced() && srv.watchers(PODS) === 1, 'watch');
    const restarts = r.stats().restarts;
    for (let i = 0; i < 8; i++) {
      srv.put(PODS, pod(`beat-${i}`));
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(r.stats().watchdogFires, 0, 'events 100 ms apart for 800 ms, watchdog 250 ms');
    assert.equal(r.stats().restarts, restarts);
    for (let i = 0; i < 8; i++) srv.removeSilently(PODS, `ns/beat-${i}`);
  });

  it('skips malformed objects with a counter and keeps going', async () => {
    srv.putSilently(PODS, { metadata: { name: 'no-uid', namespace: 'ns' }, spec: {} });
    srv.putSilently(PODS, pod('ok1'));
    const { r, rec } = start();
    await waitFor(() => r.synced() && srv.watchers(PODS) === 1, 'watch');
    assert.deepEqual(rec.adds, ['ns/ok1']);
    assert.equal(r.stats().malformed, 1);
    srv.put(PODS, { metadata: { name: 'bad-vols', namespace: 'ns', uid: 'u' }, spec: { volumes: 'nope' } });
    srv.put(PODS, { metadata: { namespace: 'ns' } } as unknown as FakeObject);
    srv.put(PODS, pod('ok2'));
    await waitFor(() => rec.adds.includes('ns/ok2'), 'good event after bad ones');
    assert.equal(r.stats().malformed, 3);
    assert.equal(r.get('ns/bad-vols'), undefined);
    for (const k of ['ns/no-uid', 'ns/ok1', 'ns/ok2', 'ns/bad-vols']) srv.removeSilently(PODS, k);
  });

  it('reports synced to onSynced subscribers and stops cleanly', async () => {
    const { r } = start();
    let synced = 0;
    r.onSynced(() => synced++);
    await waitFor(() => synced === 1, 'onSynced');
    await r.stop();
    await waitFor(() => srv.watchers(PODS) === 0, 'watch closed after stop');
  });
});
