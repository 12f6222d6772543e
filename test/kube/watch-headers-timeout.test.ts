// A watch request whose response headers never arrive (a dead keep-alive socket, a load
// balancer queueing it, a wedged server): once the watchdog gives up on it, the request must
// not keep its socket, or every watchdog period would leave one more in the shared agent.
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { CSI_DRIVER_KIND } from '../../src/kube/projections/index.js';
import { createReflector } from '../../src/kube/reflector.js';
import { loopbackKubeConfig } from './loopback-kubeconfig.js';

test('watches abandoned by the watchdog before their headers are closed', async () => {
  let pendingWatches = 0;
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('watch') === 'true') {
      pendingWatches++;
      req.socket.on('close', () => pendingWatches--);
      held.push(res); // never answer
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'List', metadata: { resourceVersion: '10' }, items: [] }));
  });
  const kc = await loopbackKubeConfig(server);
  const r = createReflector({ kc, kind: CSI_DRIVER_KIND, watchdogMs: 150, backoff: { initialMs: 10, maxMs: 20 } });
  void r.start();
  await new Promise((res) => setTimeout(res, 2500));
  const fires = r.stats().watchdogFires;
  await r.stop();
  kc.close();
  for (const h of held) h.destroy();
  server.closeAllConnections();
  server.close();
  assert.ok(fires >= 5);
  assert.ok(pendingWatches <= 1, `${pendingWatches} abandoned watch requests still hold a socket`);
});
