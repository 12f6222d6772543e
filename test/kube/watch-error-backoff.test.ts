// A watch that delivers an event (a BOOKMARK) and then an ERROR event (500), every time: each
// ERROR relists (as client-go's reflector does), and the event before it must not reset the
// backoff, or the whole collection would be listed every few hundred ms against a failing server.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { POD_KIND } from '../../src/kube/projections/pod.js';
import { createReflector } from '../../src/kube/reflector.js';
import { loopbackKubeConfig } from './loopback-kubeconfig.js';

test('an event followed by an ERROR relists with a growing backoff', async () => {
  let lists = 0;
  let watches = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('watch') === 'true') {
      watches++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: '101' } } }) + '\n');
      setTimeout(() => {
        res.write(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd trouble' } }) + '\n');
        res.end();
      }, 5);
      return;
    }
    lists++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'PodList', metadata: { resourceVersion: '100' }, items: [] }));
  });
  const kc = await loopbackKubeConfig(server);
  const r = createReflector({ kc, kind: POD_KIND }); // default backoff: 200 ms doubling to 30 s
  void r.start();
  await new Promise((res) => setTimeout(res, 3000));
  await r.stop();
  kc.close();
  server.closeAllConnections();
  server.close();
  // A growing backoff (200, 400, 800, 1600 ms) would allow at most ~5 lists in 3 s.
  assert.ok(lists <= 6, `relist storm: ${lists} full lists in 3 s`);
  assert.ok(lists >= 2 && watches >= 1, `it did relist (${lists} lists, ${watches} watches)`);
});
