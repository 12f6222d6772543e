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
