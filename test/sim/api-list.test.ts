/**
 * The paged LIST's bytes: each page is exactly the list envelope around the stored JSON of its
 * items in key order (whatever the characters), continue tokens resume after the last key, a
 * list larger than one write streams the same bytes, concurrent lists never see each other's
 * buffers, and the server picks AES-128-GCM.
 */
import assert from 'node:assert/strict';
import https from 'node:https';
import { test } from 'node:test';
import { BufferPool, Encoder, SINGLE_WRITE_BYTES } from '../../src/sim/server/list-writer.js';
import type { Simulator } from '../../src/sim/server/index.js';
import type { KubeObject } from '../../src/sim/store/index.js';
import { raw, withSim } from './sim-helpers.js';

const NS = 'fleet';

function pod(name: string, extra: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { app: 'list-test' }, annotations: extra },
    spec: { nodeName: `node-${name.length % 3}`, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }] },
  };
}

/** What a page must be: the envelope, then the stored JSON of `keys` joined by commas. */
function expectedPage(sim: Simulator, rv: string, cont: string | undefined, names: string[]): string {
  const items = names.map((n) => sim.store.getJson('pods', NS, n) as string);
  const meta = cont ? `{"resourceVersion":"${rv}","continue":"${cont}"}` : `{"resourceVersion":"${rv}"}`;
  return `{"kind":"PodList","apiVersion":"v1","metadata":${meta},"items":[${items.join(',')}]}`;
}

function decodeToken(token: string): { rv: number; start: string } {
  return JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { rv: number; start: string };
}

test('pages are the stored JSON of their items, byte for byte, with continue tokens across page boundaries', () =>
  withSim({}, async (sim) => {
    // Multi-byte characters in some objects: the page length in bytes differs from its length in code units.
    const names: string[] = [];
    for (let i = 0; i < 23; i++) {
      const name = `p-${String(i).padStart(2, '0')}`;
      names.push(name);
      sim.store.create('pods', pod(name, i % 4 === 0 ? { note: `Grüße ${'日本語'.repeat(i)} 🚀 "quoted" \\ ${i}` } : {}));
    }
    const rv = String(sim.store.resourceVersion());
    const seen: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const r = await raw(sim, 'GET', `/api/v1/namespaces/${NS}/pods?limit=5${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body));
      const body = r.json() as { metadata: { resourceVersion: string; continue?: string }; items: KubeObject[] };
      const pageNames = body.items.map((o) => o.metadata.name);
      const next = body.metadata.continue;
      assert.equal(body.metadata.resourceVersion, rv);
      assert.equal(r.body, expectedPage(sim, rv, next, pageNames));
      if (next) assert.deepEqual(decodeToken(next), { v: 'meta.k8s.io/v1', rv: Number(rv), start: `${NS}/${pageNames[pageNames.length - 1]}` });
      seen.push(...pageNames);
      cont = next;
      pages++;
    } while (cont);
    assert.equal(pages, 5);
    assert.deepEqual(seen, names);
  }));

test('a list larger than one write streams chunked, with the same bytes', () =>
  withSim({}, async (sim) => {
    // 1.2 MB per item (over a stream chunk), and enough of them that their length in code units
    // (what decides streaming) passes the single-write size.
    const big = 'é'.repeat(600_000);
    const names: string[] = [];
    for (let i = 0; i < Math.ceil(SINGLE_WRITE_BYTES / 600_000) + 1; i++) {
      const name = `big-${i}`;
      names.push(name);
      sim.store.create('pods', pod(name, { blob: big }));
    }
    for (let i = 0; i < 300; i++) {
      names.push(`small-${String(i).padStart(3, '0')}`);
      sim.store.create('pods', pod(names[names.length - 1]));
    }
    names.sort();
    const rv = String(sim.store.resourceVersion());
    const r = await raw(sim, 'GET', `/api/v1/namespaces/${NS}/pods`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-length'], undefined);
    assert.equal(r.headers['transfer-encoding'], 'chunked');
    assert.ok(Buffer.byteLength(r.body) > SINGLE_WRITE_BYTES);
    assert.equal(r.body, expectedPage(sim, rv, undefined, names));
  }));

test('concurrent paged lists each get their own pages intact', () =>
  withSim({}, async (sim) => {
    for (let i = 0; i < 400; i++) sim.store.create('pods', pod(`c-${String(i).padStart(3, '0')}`, { n: 'x'.repeat(i % 50) }));
    const walk = async (limit: number) => {
      const out: string[] = [];
      let cont: string | undefined;
      do {
        const r = await raw(sim, 'GET', `/api/v1/pods?limit=${limit}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
        const body = r.json() as { metadata: { continue?: string }; items: KubeObject[] };
        const pageNames = body.items.map((o) => o.metadata.name);
        assert.equal(r.body, expectedPage(sim, String(sim.store.resourceVersion()), body.metadata.continue, pageNames));
        out.push(...pageNames);
        cont = body.metadata.continue;
      } while (cont);
      return out;
    };
    const all = sim.store.list('pods', NS).map((p) => p.metadata.name);
    const results = await Promise.all([7, 50, 100, 399, 400, 0].map(walk));
    for (const r of results) assert.deepEqual(r, all);
  }));

test('a client that goes away mid-list leaves later lists intact', () =>
  withSim({}, async (sim) => {
    const blob = 'y'.repeat(200_000);
    for (let i = 0; i < 30; i++) sim.store.create('pods', pod(`g-${String(i).padStart(2, '0')}`, { blob }));
    await new Promise<void>((resolve) => {
      const req = https.get(new URL('/api/v1/pods', sim.url), { ca: sim.caPem, headers: { authorization: `Bearer ${sim.token}` }, agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => resolve());
    });
    const names = sim.store.list('pods', NS).map((p) => p.metadata.name);
    const r = await raw(sim, 'GET', `/api/v1/pods?limit=10`);
    const body = r.json() as { metadata: { continue?: string }; items: KubeObject[] };
    assert.equal(r.body, expectedPage(sim, String(sim.store.resourceVersion()), body.metadata.continue, names.slice(0, 10)));
  }));

test('the server prefers TLS_AES_128_GCM_SHA256 over what a Node client lists first', () =>
  withSim({}, async (sim) => {
    const cipher = await new Promise<string>((resolve, reject) => {
      const req = https.get(new URL('/healthz', sim.url), { ca: sim.caPem, agent: false }, (res) => {
        resolve(res.socket && 'getCipher' in res.socket ? (res.socket as import('node:tls').TLSSocket).getCipher().name : '');
        res.resume();
      });
      req.on('error', reject);
    });
    assert.equal(cipher, 'TLS_AES_128_GCM_SHA256');
  }));

test('the encoder grows past its first buffer on multi-byte text and keeps every byte', () => {
  const pool = new BufferPool();
  const enc = new Encoder(10, pool);
  const parts = ['{"a":"', 'ü'.repeat(40_000), '日'.repeat(30_000), '🚀'.repeat(20_000), 'plain'.repeat(10_000), '"}'];
  for (const p of parts) enc.put(p);
  enc.comma();
  const expected = Buffer.from(`${parts.join('')},`);
  assert.ok(expected.length > 64 << 10);
  let out: Buffer | undefined;
  let sent: ArrayBufferLike | undefined;
  enc.finish((bytes, done) => {
    out = Buffer.from(bytes);
    sent = bytes.buffer;
    done();
  });
  assert.ok(out && out.equals(expected));
  // The buffer went back to the pool: the next encoder of that size reuses that very memory.
  const again = new Encoder(expected.length, pool);
  assert.equal(again.buf.buffer, sent);
});
