// A watch that delivers an event (a BOOKMARK) and then an ERROR event (500), every time: each
// ERROR relists (as client-go's reflector does), and the event before it must not reset the
// backoff, or the whole collection would be listed every few hundred ms against a failing server.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { POD_KIND } from '../../src/kube/projections/pod.js';
import { createReflector } from '../../src/kube/reflector.js';
import { loopbackKubeConfig } from './loopback-kubeconfig.js';
import { mockClock, settle, turns } from '../support/mock-clock.js';

test('an event followed by an ERROR relists with a growing backoff', async (t) => {
  let lists = 0;
  let watches = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('watch') === 'true') {
      watches++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: '101' } } }) + '\n');
      setImmediate(() => {
        res.write(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd trouble' } }) + '\n');
        res.end();
      });
      return;
    }
    lists++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '100' }, items: [] }));
  });
  const kc = await loopbackKubeConfig(server);
  // The reflector's timers run on the test's clock from its start (the requests on real I/O):
  // each wait before a relist is seen as it is set (wrapped by hand: t.mock.method's restore at
  // the end would put the mocked setTimeout back after the timers), and the clock moved through it.
  const clock = mockClock(t, { performanceNow: false });
  const mocked = globalThis.setTimeout;
  const waits: number[] = []; // the reflector's waits; request timeouts and the watchdog are far longer
  globalThis.setTimeout = ((fn: () => void, ms = 0) => {
    if (ms < 10_000) waits.push(ms);
    return mocked(fn, ms);
  }) as typeof setTimeout;
  const r = createReflector({ kc, kind: POD_KIND }); // default backoff: 200 ms doubling to 30 s
  try {
    void r.start();
    // A growing backoff: each wait within its step's jitter ([0.5, 1.5) × 200, 400, 800, 1600
    // ms), and no list before it ends. A backoff reset by the BOOKMARK would wait ~200 ms each time.
    for (const [i, step] of [200, 400, 800, 1600].entries()) {
      await settle(`wait ${i + 1}`, () => waits.length > i);
      const w = waits[i]!;
      assert.ok(w >= 0.5 * step && w < 1.5 * step, `wait ${i + 1} of ${w} ms, for a ${step} ms step (${waits.join(', ')}): relist storm`);
      const listed = lists;
      clock.tick(Math.ceil(w) - 1);
      await turns(50);
      assert.equal(lists, listed, `listed again before the ${w} ms wait ended`);
      clock.tick(1);
    }
    await settle('the relist after the last wait', () => lists === 5);
    assert.ok(watches >= 4, `it watched between the lists (${watches} watches)`);
  } finally {
    globalThis.setTimeout = mocked;
    await r.stop();
    kc.close();
    server.closeAllConnections();
    server.close();
  }
});
