/**
 * Resource bounds through the fault front: a watcher that stops reading is cut off by the API
 * server behind the front (its backlog bound holds, since the front forwards with
 * backpressure instead of buffering).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { startSimulator } from '../../src/sim/server/index.js';
import { node, waitFor } from '../controller/harness.js';

test('a watcher that never reads is cut off by the API server behind the front', { timeout: 60_000 }, async () => {
  const sim = await startSimulator({ insecureHttp: true, faultInjection: 'none', maxWatchBacklogBytes: 256 << 10 });
  const socket = net.connect(sim.port, sim.host);
  try {
    sim.store.create('nodes', node('node-a'));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(`GET /api/v1/nodes?watch=1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${sim.token}\r\n\r\n`);
    socket.pause(); // never reads: kernel buffers fill, then the front's, then the server's backlog
    const big = 'x'.repeat(16 << 10);
    for (let i = 0; i < 4000 && sim.server.watchCutOffs() === 0; i++) {
      sim.store.mutate('nodes', undefined, 'node-a', (n) => { n.metadata.annotations = { big: `${big}${i}` }; });
      if (i % 100 === 0) await new Promise((r) => setImmediate(r));
    }
    await waitFor('the slow watcher cut off', () => sim.server.watchCutOffs() >= 1, 30_000);
    assert.equal(sim.server.watchCount(), 0);
  } finally {
    socket.destroy();
    await sim.stop();
  }
});
