import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ByteArena } from '../../src/packed/byte-arena.js';
import { KeyIndex } from '../../src/packed/key-index.js';

/** Text with non-ASCII (two-, three- and four-byte UTF-8) characters, so byte and char lengths differ. */
const text = fc.string({ unit: fc.constantFrom('a', 'z', '/', '"', 'é', '€', '😀', '0'), maxLength: 40 });

const sparse = fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 1, arbitrary: text });

test('ByteArena: records round-trip through set, clear, release and compaction, against a Map', () => {
  fc.assert(
    fc.property(
      fc.boolean(),
      // Parts b and c mostly absent: their lengths are kept only once some record has one.
      fc.array(fc.tuple(fc.nat(30), fc.constantFrom('set', 'set', 'set', 'clear', 'release'), text, sparse, sparse), { maxLength: 300 }),
      (compact, ops) => {
        // Small chunks so that compaction and chunk release happen within a few hundred writes.
        const arena = new ByteArena({ chunkBytes: 256, compact });
        const ref = new Map<number, [string, string, string]>();
        const slots: number[] = [];
        for (const [pick, op, a, b, c] of ops) {
          if (op === 'set' || slots.length === 0) {
            const slot = slots.length > 0 && pick % 2 === 0 ? slots[pick % slots.length] : arena.newSlot();
            if (!slots.includes(slot)) slots.push(slot);
            arena.set(slot, a, b, c);
            ref.set(slot, [a, b, c]);
          } else if (op === 'clear') {
            const slot = slots[pick % slots.length];
            arena.clear(slot);
            ref.delete(slot);
          } else {
            const slot = slots.splice(pick % slots.length, 1)[0];
            arena.releaseSlot(slot);
            ref.delete(slot);
          }
          let bytes = 0;
          for (const s of slots) {
            const want = ref.get(s);
            assert.equal(arena.has(s), want !== undefined);
            if (!want) continue;
            for (const part of [0, 1, 2] as const) {
              assert.equal(arena.text(s, part), want[part]);
              assert.equal(arena.length(s, part), Buffer.byteLength(want[part]));
              bytes += Buffer.byteLength(want[part]);
            }
          }
          assert.equal(arena.bytes, bytes);
          // A record rewritten in place occupies at most twice its bytes; compaction keeps the
          // chunks at most twice what the records occupy.
          if (compact) assert.ok(arena.heldBytes <= 2 * (2 * bytes + 8 * ref.size) + 2 * 256 + 8 * 64, `held ${arena.heldBytes} for ${bytes} live`);
        }
      },
    ),
    { numRuns: 200 },
  );
});

test('ByteArena: a rewrite that fits is made in place (no bytes held more), except in a lent chunk', () => {
  const arena = new ByteArena({ chunkBytes: 4096 });
  const slots = Array.from({ length: 20 }, () => arena.newSlot());
  for (const s of slots) arena.set(s, `key-${s}`, 'status: pending');
  const held = arena.heldBytes;
  const before = arena.chunkOf(slots[0]);
  // Same length, shorter (within half): in place, the chunk is the same and nothing is appended.
  for (let round = 0; round < 500; round++) for (const s of slots) arena.set(s, `key-${s}`, round % 2 === 0 ? 'status: attached' : 'status: ok');
  assert.equal(arena.heldBytes, held);
  assert.equal(arena.chunkOf(slots[0]), before);
  for (const s of slots) assert.equal(arena.text(s, 1), 'status: ok');
  // A lent chunk keeps its bytes: the rewrite goes elsewhere and the reader's view is unchanged.
  arena.lend(slots[3]);
  const view = arena.chunkOf(slots[3]);
  const at = arena.start(slots[3], 1);
  arena.set(slots[3], `key-${slots[3]}`, 'status: XX');
  assert.equal(view.toString('utf8', at, at + 10), 'status: ok');
  assert.equal(arena.text(slots[3], 1), 'status: XX');
  // Far shorter than its room (under half): appended, so a shrunk record does not hold its old room.
  const was = arena.start(slots[5], 0);
  arena.set(slots[5], `key-${slots[5]}`, 'x');
  assert.equal(arena.text(slots[5], 1), 'x');
  assert.notEqual(arena.start(slots[5], 0), was);
});

test('ByteArena: compares keys bytewise, in code point order', () => {
  const arena = new ByteArena();
  const keys = ['a', 'ab', 'b', 'é', '€', '😀', '\uffff', ''];
  const slots = keys.map((k) => {
    const s = arena.newSlot();
    arena.set(s, k, 'body');
    return s;
  });
  const byCodePoint = (x: string, y: string) => Buffer.compare(Buffer.from(x), Buffer.from(y));
  for (let i = 0; i < keys.length; i++) {
    for (let j = 0; j < keys.length; j++) {
      assert.equal(Math.sign(arena.compareKeys(slots[i], slots[j])), byCodePoint(keys[i], keys[j]), `${keys[i]} vs ${keys[j]}`);
      const b = Buffer.from(keys[j]);
      assert.equal(Math.sign(arena.compareKey(slots[i], b, b.length)), byCodePoint(keys[i], keys[j]));
    }
  }
});

test('KeyIndex: find, insert and remove agree with a Map', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.boolean(), text), { maxLength: 400 }), (ops) => {
      const arena = new ByteArena({ chunkBytes: 512 });
      const index = new KeyIndex(arena);
      const ref = new Map<string, number>();
      for (const [add, key] of ops) {
        const had = ref.get(key);
        assert.equal(index.find(key), had ?? -1);
        if (add && had === undefined) {
          const slot = arena.newSlot();
          arena.set(slot, key, `{"k":${JSON.stringify(key)}}`);
          index.insert(slot);
          ref.set(key, slot);
        } else if (!add && had !== undefined) {
          index.remove(had);
          arena.releaseSlot(had);
          ref.delete(key);
        }
        assert.equal(index.count, ref.size);
      }
      for (const [key, slot] of ref) {
        assert.equal(index.find(key), slot);
        assert.equal(arena.text(slot, 1), `{"k":${JSON.stringify(key)}}`);
      }
    }),
    { numRuns: 200 },
  );
});

test('ByteArena: a rewrite whose free compacts a chunk into the chunk being written keeps every record', () => {
  // 64-byte chunks, 8-byte headers. Chunk 0 ends half live (c, d); the chunk being written ends
  // more than half dead with 11 bytes left. Rewriting c with 3 bytes (not in place) takes those
  // 11 bytes; freeing c's old record compacts chunk 0 into the chunk being written, which is full,
  // so that one is retired and compacted too.
  const arena = new ByteArena({ chunkBytes: 64 });
  const [a, b, c, d, e, f] = Array.from({ length: 6 }, () => arena.newSlot());
  for (const [slot, k] of [[a, 'a'], [b, 'b'], [c, 'c'], [d, 'd'], [e, 'e']] as const) arena.set(slot, `${k}1234567`, '');
  arena.set(f, 'f1234', '');
  arena.clear(a);
  arena.clear(b);
  arena.set(f, 'f'.repeat(16), '');
  arena.clear(e);
  arena.set(c, 'cXY', '');
  // Later records land where c's reserved room was, were it not counted.
  const g = arena.newSlot();
  arena.set(g, 'g'.repeat(40), '');
  const h = arena.newSlot();
  arena.set(h, 'hhh', '');
  assert.deepEqual([c, d, f, g, h].map((s) => arena.text(s, 0)), ['cXY', 'd1234567', 'f'.repeat(16), 'g'.repeat(40), 'hhh']);
  assert.equal(arena.bytes, 3 + 8 + 16 + 40 + 3);
});

test('ByteArena: records near the chunk size keep their bytes through rewrites, frees and compaction', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(40), fc.constantFrom('set', 'set', 'set', 'set', 'release'), fc.nat(48)), { minLength: 50, maxLength: 400 }),
      (ops) => {
        const arena = new ByteArena({ chunkBytes: 64 });
        const ref = new Map<number, string>();
        const slots: number[] = [];
        let n = 0;
        for (const [pick, op, len] of ops) {
          if (op === 'set' || slots.length === 0) {
            const slot = slots.length > 0 && pick % 3 !== 0 ? slots[pick % slots.length] : arena.newSlot();
            if (!slots.includes(slot)) slots.push(slot);
            const key = `${(n++ % 36).toString(36)}${'.'.repeat(len)}`;
            arena.set(slot, key, '');
            ref.set(slot, key);
          } else {
            const slot = slots.splice(pick % slots.length, 1)[0];
            arena.releaseSlot(slot);
            ref.delete(slot);
          }
          for (const [slot, key] of ref) assert.equal(arena.text(slot, 0), key);
        }
      },
    ),
    { numRuns: 300 },
  );
});
