import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createSimStore, type KubeObject } from '../../src/sim/store/index.js';

// Label values over an alphabet with non-ASCII characters, so that both decodings of a record
// (ASCII as Latin-1, the rest as UTF-8) and the byte copies are exercised; names are DNS names.
const name = fc.string({ unit: fc.constantFrom('a', 'b', 'z', '0'), minLength: 1, maxLength: 4 });
const word = fc.string({ unit: fc.constantFrom('a', 'z', '-', 'é', '名', '\u{1F600}'), minLength: 1, maxLength: 6 });
const op = fc.record({
  kind: fc.constantFrom('put', 'put', 'put', 'delete'),
  ns: fc.constantFrom('a', 'b', 'a-b'),
  name,
  label: fc.option(word, { nil: undefined }),
  node: fc.option(fc.constantFrom('n0', 'n1'), { nil: undefined }),
});
const pageOpts = fc.record({
  limit: fc.integer({ min: 0, max: 7 }),
  namespace: fc.option(fc.constantFrom('a', 'b', 'a-b', 'c'), { nil: undefined }),
  nodeName: fc.option(fc.constantFrom('n0', 'n1'), { nil: undefined }),
  filtered: fc.boolean(),
});

test('listPageBytes and getBytes answer the bytes of listPage and getJson, page after page', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), fc.array(pageOpts, { minLength: 1, maxLength: 4 }), (ops, pages) => {
      const s = createSimStore({ namespaces: [] });
      for (const o of ops) {
        const exists = s.getJson('pods', o.ns, o.name) !== undefined;
        if (o.kind === 'delete') {
          if (exists) s.delete('pods', o.ns, o.name, { gracePeriodSeconds: 0 });
          continue;
        }
        const obj: KubeObject = { metadata: { name: o.name, namespace: o.ns, ...(o.label ? { labels: { l: o.label } } : {}) }, spec: o.node ? { nodeName: o.node } : {} };
        if (exists) s.mutate('pods', o.ns, o.name, () => obj);
        else s.create('pods', obj);
      }
      for (const o of ops) {
        const json = s.getJson('pods', o.ns, o.name);
        const bytes = s.getBytes('pods', o.ns, o.name);
        assert.equal(bytes?.toString('utf8'), json);
      }
      for (const p of pages) {
        const filter = p.filtered ? (j: string) => j.includes('é') : undefined;
        let after: string | undefined;
        for (let round = 0; round < 50; round++) {
          const opts = { limit: p.limit, namespace: p.namespace, nodeName: p.nodeName, filter, after };
          const want = s.listPage('pods', opts);
          const got = s.listPageBytes('pods', opts);
          assert.equal(got.count, want.items.length);
          assert.equal(got.lastKey, want.lastKey);
          assert.equal(got.more, want.more);
          assert.deepEqual(got.strings(), want.items);
          const joined = want.items.join(',');
          assert.equal(got.bytes + Math.max(0, got.count - 1), Buffer.byteLength(joined));
          const buf = Buffer.alloc(Buffer.byteLength(joined) + 4, 0xff);
          const end = got.copyItems(buf, 2);
          assert.equal(buf.toString('utf8', 2, end), joined);
          assert.equal(buf[end], 0xff);
          if (!want.more) break;
          after = want.lastKey;
        }
      }
    }),
    { numRuns: 150 },
  );
});

test('the bytes getBytes answers stay as they were while the object is rewritten and the arena reuses its space', () => {
  const s = createSimStore({ namespaces: [] });
  s.create('pods', { metadata: { name: 'kept', namespace: 'a' }, spec: { v: 0 } });
  const bytes = s.getBytes('pods', 'a', 'kept') as Buffer;
  const before = bytes.toString('utf8');
  const filler = 'x'.repeat(4000);
  for (let i = 1; i < 2000; i++) {
    s.mutate('pods', 'a', 'kept', (p) => ({ ...p, spec: { v: i, filler } }));
    s.create('pods', { metadata: { name: `p${i}`, namespace: 'a' }, spec: { filler } });
    s.delete('pods', 'a', `p${i}`, { gracePeriodSeconds: 0 });
  }
  assert.equal(bytes.toString('utf8'), before);
  assert.match(s.getJson('pods', 'a', 'kept') as string, /"v":1999/);
});
