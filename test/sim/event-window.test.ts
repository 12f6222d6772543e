import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CommittedEvent } from '../../src/sim/store/committed-event.js';
import { EventWindow } from '../../src/sim/store/event-window.js';
import type { StoreEventType } from '../../src/sim/store/sim-store.js';

const text = fc.string({ unit: fc.constantFrom('a', '"', 'é', '€', '😀', '/'), maxLength: 30 });
const event = fc.record({
  type: fc.constantFrom<StoreEventType>('ADDED', 'MODIFIED', 'DELETED'),
  namespace: fc.option(fc.constantFrom('default', 'ns/with/slashes', 'é'), { nil: undefined }),
  name: fc.constantFrom('a', 'b', 'pod-1'),
  json: text.map((t) => JSON.stringify({ t })),
  prev: fc.option(text.map((t) => JSON.stringify({ prev: t })), { nil: undefined }),
  gap: fc.integer({ min: 1, max: 3 }),
});

const fields = (e: CommittedEvent) => ({ type: e.type, resource: e.resource, rv: e.rv, namespace: e.namespace, name: e.name, json: e.json, prevJson: e.prevJson });

test('EventWindow keeps the last `capacity` events, answers those after any rv, and undefined once one was dropped', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 40 }), fc.array(event, { maxLength: 150 }), fc.array(fc.nat(400), { maxLength: 10 }), (capacity, events, probes) => {
      const w = new EventWindow(capacity, 'pods');
      const pushed: CommittedEvent[] = [];
      let rv = 0;
      for (const e of events) {
        rv += e.gap;
        const ev = new CommittedEvent(e.type, 'pods', rv, e.namespace, e.name, e.json, e.type === 'MODIFIED' ? e.prev : undefined);
        w.push(ev);
        pushed.push(ev);
      }
      const kept = pushed.slice(Math.max(0, pushed.length - capacity));
      const dropped = pushed.length > capacity ? pushed[pushed.length - capacity - 1].rv : 0;
      assert.equal(w.oldestResumable(), dropped);
      for (const p of [0, dropped, ...probes]) {
        const got = w.after(p);
        if (p < dropped) {
          assert.equal(got, undefined);
          continue;
        }
        assert.deepEqual(got?.map(fields), kept.filter((e) => e.rv > p).map(fields));
      }
    }),
    { numRuns: 300 },
  );
});

test('EventWindow: a replayed event builds the same frame as the delivered one', () => {
  const w = new EventWindow(4, 'pods');
  const ev = new CommittedEvent('MODIFIED', 'pods', 7, 'default', 'p', '{"metadata":{"name":"p","annotations":{"a":"é€😀"}}}', '{"before":true}');
  const frame = ev.frame();
  w.push(ev);
  const [again] = w.after(6) ?? [];
  assert.deepEqual(again.frame(), frame);
  assert.deepEqual(again.previous(), { before: true });
  assert.deepEqual(again.frameAs('DELETED').toString(), frame.toString().replace('MODIFIED', 'DELETED'));
});

test('EventWindow: a MODIFIED event whose JSON before is an earlier event of the window refers to it, and keeps it once that one is dropped; replays already taken keep their bytes', () => {
  const write = fc.record({ key: fc.constantFrom('a', 'b', 'c', 'd'), del: fc.boolean(), body: text });
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 30 }), fc.constantFrom(64, 256, 1 << 20), fc.array(write, { maxLength: 200 }), (capacity, chunkBytes, writes) => {
      const w = new EventWindow(capacity, 'pods', chunkBytes);
      const stored = new Map<string, { json: string; rv: number }>();
      const pushed: CommittedEvent[] = [];
      const taken: Array<{ events: CommittedEvent[]; expect: ReturnType<typeof fields>[]; frames: string[] }> = [];
      let rv = 0;
      for (const [i, op] of writes.entries()) {
        rv++;
        const before = stored.get(op.key);
        const json = JSON.stringify({ k: op.key, rv, body: op.body });
        let ev: CommittedEvent;
        if (before && op.del) {
          ev = new CommittedEvent('DELETED', 'pods', rv, 'ns', op.key, json);
          stored.delete(op.key);
          w.push(ev);
        } else if (before) {
          ev = new CommittedEvent('MODIFIED', 'pods', rv, 'ns', op.key, json, before.json);
          stored.set(op.key, { json, rv });
          w.push(ev, before.rv);
        } else {
          ev = new CommittedEvent('ADDED', 'pods', rv, 'ns', op.key, json);
          stored.set(op.key, { json, rv });
          w.push(ev);
        }
        pushed.push(ev);
        const kept = pushed.slice(Math.max(0, pushed.length - capacity));
        const got = w.after(w.oldestResumable()) ?? [];
        assert.deepEqual(got.map(fields), kept.map(fields));
        if (i % 7 === 0) taken.push({ events: got, expect: kept.map(fields), frames: kept.map((e) => e.frame().toString()) });
      }
      for (const t of taken) {
        assert.deepEqual(t.events.map(fields), t.expect);
        assert.deepEqual(t.events.map((e) => e.frame().toString()), t.frames);
      }
    }),
    { numRuns: 300 },
  );
});
