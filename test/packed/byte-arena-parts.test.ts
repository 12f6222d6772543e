import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ByteArena } from '../../src/packed/byte-arena.js';

const bytes = fc.uint8Array({ maxLength: 60 });

test('ByteArena.setParts and partBEquals: a key and a body as raw bytes, through rewrites and compaction, against a Map', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(12), fc.boolean(), bytes, bytes), { maxLength: 200 }), (ops) => {
      const arena = new ByteArena({ chunkBytes: 256 });
      const ref = new Map<number, [Uint8Array, Uint8Array]>();
      const slots: number[] = [];
      for (const [pick, release, a, b] of ops) {
        if (release && slots.length > 0) {
          const slot = slots.splice(pick % slots.length, 1)[0]!;
          arena.releaseSlot(slot);
          ref.delete(slot);
          continue;
        }
        const slot = slots.length > 0 && pick % 2 === 0 ? slots[pick % slots.length]! : arena.newSlot();
        if (!slots.includes(slot)) slots.push(slot);
        const src = Buffer.concat([a, b, Buffer.from([1, 2, 3])]); // trailing bytes are not part of the record
        arena.setParts(slot, src, a.length, b.length);
        ref.set(slot, [a, b]);
      }
      for (const [slot, [a, b]] of ref) {
        assert.equal(arena.length(slot, 0), a.length);
        assert.equal(arena.length(slot, 1), b.length);
        const chunk = arena.chunkOf(slot);
        assert.deepEqual(Uint8Array.from(chunk.subarray(arena.start(slot, 0), arena.start(slot, 0) + a.length)), Uint8Array.from(a));
        const host = Buffer.concat([Buffer.from([9]), b]);
        assert.ok(arena.partBEquals(slot, host, 1, b.length));
        const other = Buffer.concat([Buffer.from([9]), b, Buffer.from([0])]);
        assert.ok(!arena.partBEquals(slot, other, 1, b.length + 1), 'a longer body differs');
        if (b.length > 0) {
          const flipped = Buffer.from(host);
          flipped[1 + (b.length >> 1)]! ^= 1;
          assert.ok(!arena.partBEquals(slot, flipped, 1, b.length), 'a body one bit apart differs');
        }
      }
    }),
  );
});
