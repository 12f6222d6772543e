/**
 * The store's object tables against a model: two resources sharing one arena, objects created,
 * rewritten (growing and shrinking) and deleted at random, slots released and reused across the
 * resources; every list page must hold exactly the live objects of its resource, in key order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ObjectTables } from '../../src/sim/store/object-tables.js';
import { RESOURCES } from '../../src/sim/store/resources.js';

const NAMES = ['persistentvolumes', 'persistentvolumeclaims'] as const;
const op = fc.record({
  kind: fc.constantFrom('put', 'put', 'remove', 'list'),
  r: fc.nat(1),
  k: fc.nat(40),
  size: fc.nat(300),
});

test('list pages hold exactly the live objects of their resource, in key order', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
      const t = new ObjectTables();
      const model = NAMES.map(() => new Map<string, string>());
      const check = (r: number) => {
        const info = RESOURCES[NAMES[r]!];
        const want = [...model[r]!.entries()].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b))).map(([, v]) => v);
        assert.deepEqual(t.page(info).items, want);
      };
      let n = 0;
      for (const o of ops) {
        const name = NAMES[o.r]!;
        const key = `${name.slice(0, 2)}-${String(o.k).padStart(6, '0')}-0${o.k % 2}`;
        if (o.kind === 'put') {
          const json = JSON.stringify({ n: n++, pad: 'x'.repeat(o.size) });
          t.put(name, key, json);
          model[o.r]!.set(key, json);
        } else if (o.kind === 'remove') {
          t.remove(name, key);
          model[o.r]!.delete(key);
        } else check(o.r);
      }
      check(0);
      check(1);
    }),
    { numRuns: 300 },
  );
});
