// PendingTable (open addressing, backward-shift deletion) behaves like a Map of pending
// operations under random starts and ends, including colliding keys and growth.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { PendingTable } from '../../src/cache/pending-table.js';

describe('PendingTable', () => {
  it('agrees with a Map over random start/end sequences', () => {
    const step = fc.record({ start: fc.boolean(), key: fc.oneof(fc.nat(40), fc.nat(5000).map((k) => k * 64)), detach: fc.boolean() });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 600 }), (steps) => {
        const table = new PendingTable();
        const model = new Map<number, number>();
        for (const [i, s] of steps.entries()) {
          if (s.start && !model.has(s.key)) {
            table.start(s.key, s.key, i, i % 2 ? 'detach' : 'attach', s.key % 2 === 1, i);
            model.set(s.key, i);
          } else if (!s.start) {
            // end() ends the key only when the operation matches.
            const i = model.get(s.key);
            const matches = i !== undefined && (i % 2 === 1) === s.detach;
            assert.equal(table.end(s.key, s.detach ? 'detach' : 'attach'), matches);
            if (matches) model.delete(s.key);
          }
          assert.equal(table.size, model.size);
        }
        for (const [key, i] of model) {
          assert.deepEqual(table.get(key), { volume: key, node: i, op: i % 2 ? 'detach' : 'attach', volumeWide: key % 2 === 1, startedAt: i });
          assert.equal(table.has(key, i % 2 ? 'detach' : 'attach'), true);
        }
        assert.deepEqual(table.list().map((p) => p.volume).sort((a, b) => a - b), [...model.keys()].sort((a, b) => a - b));
      }),
      { seed: 3, numRuns: 200 },
    );
  });
});
