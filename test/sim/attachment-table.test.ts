import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ATTACHED, AttachmentTable, DELETING, FINALIZED } from '../../src/sim/actors/attachment-table.js';

interface ModelVa { node: string; pv: string | undefined; flags: number; failures: number; queued: 'attach' | 'detach' | undefined }

const vaName = fc.constantFrom('va-a', 'va-b', 'va-c', 'va-d', 'va-e', 'va-f');
const pvName = fc.option(fc.constantFrom('pv-1', 'pv-2', 'pv-3'), { nil: undefined });
const nodeName = fc.constantFrom('n1', 'n2', 'n3');
const op = fc.oneof(
  fc.record({ k: fc.constant('add' as const), va: vaName, node: nodeName, pv: pvName }),
  fc.record({ k: fc.constant('remove' as const), va: vaName }),
  fc.record({ k: fc.constant('flag' as const), va: vaName, flag: fc.constantFrom(ATTACHED, DELETING, FINALIZED), on: fc.boolean() }),
  fc.record({ k: fc.constant('queue' as const), va: vaName, q: fc.constantFrom('attach' as const, 'detach' as const, undefined) }),
  fc.record({ k: fc.constant('fail' as const), va: vaName, n: fc.nat(40) }),
  fc.record({ k: fc.constant('pvMode' as const), pv: fc.constantFrom('pv-1', 'pv-2', 'pv-3'), forbidden: fc.option(fc.boolean(), { nil: undefined }) }),
);

test('AttachmentTable: VAs, their flags, PVs and each PV\'s VAs agree with Map models', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
      const t = new AttachmentTable();
      const vas = new Map<string, ModelVa>();
      const modes = new Map<string, boolean>();
      for (const o of ops) {
        if (o.k === 'add') {
          if (vas.has(o.va)) continue;
          t.add(o.va, o.node, o.pv);
          vas.set(o.va, { node: o.node, pv: o.pv, flags: 0, failures: 0, queued: undefined });
        } else if (o.k === 'pvMode') {
          t.setPvMode(o.pv, o.forbidden);
          if (o.forbidden === undefined) modes.delete(o.pv);
          else modes.set(o.pv, o.forbidden);
        } else {
          const m = vas.get(o.va);
          const id = t.find(o.va);
          assert.equal(id >= 0, m !== undefined);
          if (!m) continue;
          if (o.k === 'remove') {
            vas.delete(o.va);
            const left = m.pv !== undefined && [...vas.values()].some((v) => v.pv === m.pv);
            assert.equal(t.remove(id), m.pv !== undefined && !left ? m.pv : undefined);
          } else if (o.k === 'flag') {
            t.set(id, o.flag, o.on);
            m.flags = o.on ? m.flags | o.flag : m.flags & ~o.flag;
          } else if (o.k === 'queue') {
            t.setQueued(id, o.q);
            m.queued = o.q;
          } else {
            t.setFailures(id, o.n);
            m.failures = o.n;
          }
        }
        assert.equal(t.size, vas.size);
        for (const [name, m] of vas) {
          const id = t.find(name);
          assert.ok(id >= 0);
          assert.equal(t.name(id), name);
          assert.equal(t.nodeName(t.node(id)), m.node);
          for (const f of [ATTACHED, DELETING, FINALIZED]) assert.equal(t.has(id, f), (m.flags & f) !== 0);
          assert.equal(t.queued(id), m.queued);
          assert.equal(t.failures(id), m.failures);
          const pv = t.pv(id);
          assert.equal(pv < 0 ? undefined : t.pvName(pv), m.pv);
          if (pv >= 0) {
            assert.equal(t.pvForbidden(pv), modes.get(m.pv as string));
            const onPv = t.vasOf(pv).map((v) => t.name(v)).sort();
            assert.deepEqual(onPv, [...vas].filter(([, v]) => v.pv === m.pv).map(([n]) => n).sort());
          }
        }
        for (const pv of ['pv-1', 'pv-2', 'pv-3']) assert.equal(t.pvInUse(pv), [...vas.values()].some((v) => v.pv === pv));
      }
    }),
    { numRuns: 300 },
  );
});
