// A peer that takes the TCP connection and never completes the TLS handshake (a black-holed
// load-balancer backend, a wedged API server): a hot call must still end at its own timeout,
// and not hold its in-flight slot while every later call joins the same pending connect.
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { createKubeApiClient } from '../../src/kube/api-client.js';
import { loopbackKubeConfig } from './loopback-kubeconfig.js';

for (const http2 of [true, false]) test(`hot call over ${http2 ? 'HTTP/2' : 'HTTP/1.1'} honours requestTimeoutMs when the TLS handshake never completes`, async () => {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => { sockets.add(s); s.on('error', () => {}); }); // accept, say nothing
  const kc = await loopbackKubeConfig(server, 'https');
  kc.http2 = http2;
  const api = createKubeApiClient({ kc, requestTimeoutMs: 300 });
  try {
    const outcome = await Promise.race([
      api.getNode('n1').then(() => 'resolved', (e: Error) => `rejected: ${e.message}`),
      new Promise<string>((r) => setTimeout(() => r('still pending after 3 s'), 3000).unref()),
    ]);
    assert.match(outcome, /^rejected/, `getNode with requestTimeoutMs=300: ${outcome}`);
    assert.equal(api.backlog().inFlight, 0, 'the slot is free again');
  } finally {
    kc.close();
    for (const s of sockets) s.destroy();
    server.close();
  }
});
