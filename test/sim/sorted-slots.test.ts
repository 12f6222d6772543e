import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ByteArena } from '../../src/packed/byte-arena.js';
import { PodNodeIndex } from '../../src/sim/store/pod-node-index.js';
import { SortedSlots } from '../../src/sim/store/sorted-slots.js';

const byBytes = (x: string, y: string) => Buffer.compare(Buffer.from(x), Buffer.from(y));
const key = fc.oneof(fc.string({ unit: fc.constantFrom('a', 'b', 'c', '-', '/', 'é'), maxLength: 6 }), fc.nat(5000).map((n) => `ns/pod-${String(n).padStart(5, '0')}`));

/** Keys in the index, read back in visit order. */
function visited(sorted: SortedSlots, arena: ByteArena, after?: string, end?: string, stopAt = Infinity): string[] {
  const out: string[] = [];
  sorted.visit(after, end, (slot) => {
    if (out.length === stopAt) return false;
    out.push(arena.text(slot, 0));
    return true;
  });
  return out;
}

test('SortedSlots matches a sorted Set under random inserts and removes, and resumes after any key', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('insert', 'insert', 'remove', 'visit'), key, key), { maxLength: 600 }), (ops) => {
      const arena = new ByteArena({ chunkBytes: 4096 });
      const sorted = new SortedSlots(arena);
      const slots = new Map<string, number>();
      for (const [op, k, other] of ops) {
        if (op === 'insert') {
          let slot = slots.get(k);
          if (slot === undefined) {
            slot = arena.newSlot();
            arena.set(slot, k, '{}');
            slots.set(k, slot);
          }
          sorted.insert(slot);
        } else if (op === 'remove') {
          const slot = slots.get(k);
          if (slot === undefined) continue;
          sorted.remove(slot);
          arena.releaseSlot(slot);
          slots.delete(k);
        } else {
          const all = [...slots.keys()].sort(byBytes);
          const [lo, hi] = byBytes(k, other) <= 0 ? [k, other] : [other, k];
          assert.deepEqual(visited(sorted, arena, lo, hi), all.filter((x) => byBytes(x, lo) > 0 && byBytes(x, hi) < 0));
          assert.deepEqual(visited(sorted, arena, undefined, undefined, 3), all.slice(0, 3));
        }
      }
      const all = [...slots.keys()].sort(byBytes);
      assert.equal(sorted.size, all.length);
      assert.deepEqual(visited(sorted, arena), all);
    }),
    { numRuns: 150 },
  );
});

test('SortedSlots: bulk merges and chunk splits keep the order at a few thousand keys', () => {
  const arena = new ByteArena();
  const sorted = new SortedSlots(arena);
  const keys: string[] = [];
  let x = 12345;
  for (let i = 0; i < 6000; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const k = `csi-${x.toString(16)}`;
    if (keys.includes(k)) continue;
    keys.push(k);
    const slot = arena.newSlot();
    arena.set(slot, k, '{}');
    sorted.insert(slot);
    if (i % 1500 === 0) visited(sorted, arena); // a read flushes what is pending
  }
  keys.sort(byBytes);
  assert.deepEqual(visited(sorted, arena), keys);
  assert.deepEqual(visited(sorted, arena, keys[2999]), keys.slice(3000));
});

test('PodNodeIndex: slots by node agree with a Map of Sets under random moves', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(40), fc.option(fc.constantFrom('n1', 'n2', 'n3', 'nœud'), { nil: undefined }), fc.boolean()), { maxLength: 400 }), (ops) => {
      const index = new PodNodeIndex();
      const where = new Map<number, string>();
      for (const [slot, node, forget] of ops) {
        if (forget) {
          index.forget(slot);
          where.delete(slot);
          continue;
        }
        index.move(slot, where.get(slot), node);
        if (node === undefined) where.delete(slot);
        else where.set(slot, node);
      }
      for (const node of ['n1', 'n2', 'n3', 'nœud', 'n4']) {
        const want = [...where].filter(([, n]) => n === node).map(([s]) => s).sort((a, b) => a - b);
        assert.deepEqual(index.slotsOn(node).sort((a, b) => a - b), want, node);
      }
    }),
    { numRuns: 200 },
  );
});
