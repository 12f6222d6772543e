/**
 * HTTP/2, as client-go and kubectl speak it: the simulator offers h2 and http/1.1 by ALPN on one
 * port, directly and through the fault front.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { Simulator } from '../../src/sim/server/index.js';
import { pod, raw, until, withSim } from './sim-helpers.js';

interface H2Answer { status: number; headers: http2.IncomingHttpHeaders; body: string }

function h2request(session: http2.ClientHttp2Session, sim: Simulator, method: string, path: string, body?: string): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const headers: http2.OutgoingHttpHeaders = { ':method': method, ':path': path, authorization: `Bearer ${sim.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const s = session.request(headers);
    let answer: http2.IncomingHttpHeaders = {};
    let text = '';
    s.setEncoding('utf8');
    s.on('response', (h) => (answer = h));
    s.on('data', (d: string) => (text += d));
    s.on('end', () => resolve({ status: Number(answer[':status']), headers: answer, body: text }));
    s.on('error', reject);
    s.end(body);
  });
}

async function exercise(sim: Simulator): Promise<void> {
  const session = http2.connect(sim.url, { ca: sim.caPem });
  try {
    await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
    assert.equal(session.alpnProtocol, 'h2');
    // A watch over one stream while other requests share the connection.
    const w = session.request({ ':method': 'GET', ':path': '/api/v1/namespaces/default/pods?watch=true', authorization: `Bearer ${sim.token}` });
    let events = '';
    w.setEncoding('utf8');
    w.on('data', (d: string) => (events += d));
    w.on('error', () => {});
    const created = await h2request(session, sim, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(pod('h2-pod')));
    assert.equal(created.status, 201, created.body);
    assert.equal(created.headers['transfer-encoding'], undefined);
    const listed = await h2request(session, sim, 'GET', '/api/v1/namespaces/default/pods');
    assert.equal(listed.status, 200);
    assert.deepEqual((JSON.parse(listed.body) as { items: Array<{ metadata: { name: string } }> }).items.map((p) => p.metadata.name), ['h2-pod']);
    await until('the watch sees the pod', () => events.includes('"type":"ADDED"') && events.includes('"name":"h2-pod"'));
    const missing = await h2request(session, sim, 'GET', '/api/v1/namespaces/default/pods/nope');
    assert.equal(missing.status, 404);
    assert.equal((JSON.parse(missing.body) as { reason: string }).reason, 'NotFound');
    const deleted = await h2request(session, sim, 'DELETE', '/api/v1/namespaces/default/pods/h2-pod');
    assert.equal(deleted.status, 200);
    await until('the watch sees the deletion', () => events.includes('"type":"DELETED"'));
    w.close();
    // HTTP/1.1 clients still get HTTP/1.1 on the same port.
    const h1 = await raw(sim, 'GET', '/api/v1/namespaces/default/pods');
    assert.equal(h1.status, 200);
  } finally {
    session.destroy();
  }
}

test('an HTTP/2 client creates, lists, watches and deletes over one connection', () => withSim({}, (sim) => exercise(sim)));

test('an HTTP/2 client gets the same through the fault front', () => withSim({ faultInjection: 'none' }, (sim) => exercise(sim)));

test('stop cuts open HTTP/2 streams', async () => {
  let ended: Promise<void> | undefined;
  await withSim({}, async (sim) => {
    const session = http2.connect(sim.url, { ca: sim.caPem });
    session.on('error', () => {});
    const w = session.request({ ':method': 'GET', ':path': '/api/v1/pods?watch=true', authorization: `Bearer ${sim.token}` });
    w.on('error', () => {});
    w.resume();
    await new Promise((r) => w.once('response', r));
    ended = new Promise((r) => w.once('close', () => r()));
  });
  // The stream must close because stop cut it: a stop that left it open would hang here, so
  // the wait is bounded and its outcome asserted.
  const outcome = await Promise.race([
    ended!.then(() => 'closed'),
    new Promise<string>((r) => setTimeout(() => r('still open'), 10_000).unref()),
  ]);
  assert.equal(outcome, 'closed');
});
