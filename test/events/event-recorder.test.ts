import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createEventRecorder, DROP_LOG_INTERVAL_MS, formatEventTime, type CoreV1Event, type EventPatch, type EventSink } from '../../src/events/event-recorder.js';
import { COMBINED_PREFIX } from '../../src/events/event-correlator.js';
import { createFakeEventRecorder } from '../../src/events/fake-event-recorder.js';

function fakeSink() {
  const created: CoreV1Event[] = [];
  const patched: Array<{ namespace: string; name: string; patch: EventPatch }> = [];
  const held: Array<() => void> = [];
  const sink: EventSink & { created: typeof created; patched: typeof patched; hold: boolean; release(): void; patchAnswer: 'patched' | 'not-found' } = {
    created,
    patched,
    hold: false,
    patchAnswer: 'patched',
    async create(namespace, event) {
      if (sink.hold) await new Promise<void>((r) => held.push(r));
      assert.equal(namespace, event.metadata.namespace);
      created.push(structuredClone(event));
    },
    async patch(namespace, name, patch) {
      patched.push({ namespace, name, patch: { ...patch } });
      return sink.patchAnswer;
    },
    release: () => held.splice(0).forEach((r) => r()),
  };
  return sink;
}

const pod = { namespace: 'team-a', name: 'web-0', uid: 'uid-web-0' };
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

test('events are core/v1 Events about the pod, in its namespace, from attachdetach-controller', async () => {
  const sink = fakeSink();
  const events = createEventRecorder({ sink, now: () => T0, host: 'replica-1' });
  events.attachSucceeded([pod], 'pvc-1');
  await events.flush();
  assert.equal(sink.created.length, 1);
  const e = sink.created[0]!;
  assert.match(e.metadata.name, /^web-0\.[0-9a-f]+$/);
  assert.deepEqual({ ...e, metadata: { ...e.metadata, name: 'x' } }, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: 'x', namespace: 'team-a' },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: 'team-a', name: 'web-0', uid: 'uid-web-0' },
    reason: 'SuccessfulAttachVolume',
    message: 'AttachVolume.Attach succeeded for volume "pvc-1" ',
    type: 'Normal',
    source: { component: 'attachdetach-controller', host: 'replica-1' },
    firstTimestamp: '2026-01-02T03:04:05Z',
    lastTimestamp: '2026-01-02T03:04:05Z',
    count: 1,
    reportingComponent: 'attachdetach-controller',
    reportingInstance: 'replica-1',
  });
  assert.equal(formatEventTime(T0), '2026-01-02T03:04:05Z');
});

test('identical events are aggregated: one Event, count and lastTimestamp patched', async () => {
  const sink = fakeSink();
  let now = T0;
  const events = createEventRecorder({ sink, now: () => now });
  events.attachFailed([pod], 'pvc-1', new Error('boom'));
  now += 10_000;
  events.attachFailed([pod], 'pvc-1', new Error('boom'));
  now += 10_000;
  events.attachFailed([pod], 'pvc-1', new Error('boom'));
  await events.flush();
  assert.equal(sink.created.length, 1);
  const name = sink.created[0]!.metadata.name;
  assert.deepEqual(sink.patched.map((p) => [p.name, p.patch.count, p.patch.lastTimestamp]), [
    [name, 2, formatEventTime(T0 + 10_000)],
    [name, 3, formatEventTime(T0 + 20_000)],
  ]);
  // An Event gone from the API is written again, whole.
  sink.patchAnswer = 'not-found';
  events.attachFailed([pod], 'pvc-1', new Error('boom'));
  await events.flush();
  assert.equal(sink.created.length, 2);
  assert.equal(sink.created[1]!.count, 4);
  assert.equal(sink.created[1]!.metadata.name, name);
});

test('a storm on one pod is rate-limited (burst 25, then one per 5 minutes); other pods are unaffected', async () => {
  const sink = fakeSink();
  let now = T0;
  const dropped: string[] = [];
  const events = createEventRecorder({ sink, now: () => now, onDropped: (cause) => dropped.push(cause) });
  for (let i = 0; i < 100; i++) events.attachFailed([pod], 'pvc-1', new Error(`attempt ${i}`));
  events.attachSucceeded([{ ...pod, name: 'web-1', uid: 'uid-web-1' }], 'pvc-1');
  await events.flush();
  const writes = () => sink.created.length + sink.patched.length;
  assert.equal(writes(), 26);
  // Every event the filter held is counted as such (the metric's source).
  assert.deepEqual([dropped.length, new Set(dropped)], [75, new Set(['spam-filter'])]);
  // Ten distinct messages on one pod collapse into one combined Event (client-go aggregation).
  assert.ok(sink.patched.every((p) => p.patch.message.startsWith(COMBINED_PREFIX)));
  now += 5 * 60_000;
  for (let i = 0; i < 5; i++) events.attachFailed([pod], 'pvc-1', new Error('later'));
  await events.flush();
  assert.equal(writes(), 27);
});

test('multiAttach sends each recipient a message naming only its own namespace', async () => {
  const sink = fakeSink();
  const events = createEventRecorder({ sink, now: () => T0, waitingForDetachText: false });
  const recipients = [pod, { namespace: 'team-b', name: 'db-0', uid: 'uid-db-0' }];
  events.multiAttach(recipients, 'pvc-7', [
    { namespace: 'team-a', name: 'web-9' },
    { namespace: 'team-c', name: 'hidden' },
  ]);
  await events.flush();
  const byNs = Object.fromEntries(sink.created.map((e) => [e.metadata.namespace, e]));
  assert.equal(byNs['team-a']!.message, 'Multi-Attach error for volume "pvc-7" Volume is already used by pod(s) web-9 and 1 pod(s) in different namespaces');
  assert.equal(byNs['team-b']!.message, 'Multi-Attach error for volume "pvc-7" Volume is already used by 2 pod(s) in different namespaces');
  assert.ok(sink.created.every((e) => e.type === 'Warning' && e.reason === 'FailedAttachVolume'));
});

test('recording never blocks: a full queue drops events, stop ignores later ones', async () => {
  const sink = fakeSink();
  sink.hold = true;
  const events = createEventRecorder({ sink, now: () => T0, maxQueue: 3, maxInFlight: 1 });
  for (let i = 0; i < 10; i++) events.record({ ...pod, name: `p${i}`, uid: `u${i}` }, 'Normal', 'R', 'm');
  sink.hold = false;
  sink.release();
  await events.flush();
  assert.equal(sink.created.length, 3);
  events.stop();
  events.record(pod, 'Normal', 'R', 'after stop');
  await events.flush();
  assert.equal(sink.created.length, 3);
});

test('drops are counted one by one and logged at once, then at most once per interval with the count since', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const out = new Writable({ write(chunk, _enc, cb) { lines.push(JSON.parse(String(chunk))); cb(); } });
  const sink = fakeSink();
  sink.hold = true;
  let now = T0;
  const causes: string[] = [];
  const events = createEventRecorder({ sink, now: () => now, maxQueue: 1, maxInFlight: 1, log: pino({ level: 'info' }, out), onDropped: (c) => causes.push(c) });
  const drop = (n: number) => {
    for (let i = 0; i < n; i++) events.record({ ...pod, name: `p${now}-${i}`, uid: `u${now}-${i}` }, 'Normal', 'R', 'm');
  };
  drop(5); // one queued, four dropped: the first drop is logged at once
  now += DROP_LOG_INTERVAL_MS / 2;
  drop(3); // within the interval: counted, not logged
  now = T0 + DROP_LOG_INTERVAL_MS;
  drop(1); // the interval is over: one line with every drop since the first line
  const dropLines = lines.filter((l) => l.msg === 'events dropped: write queue full');
  assert.deepEqual(dropLines.map((l) => [l.dropped, l.droppedSoFar]), [[1, 1], [7, 8]]);
  // Every drop reaches the metric, logged or not.
  assert.deepEqual(causes, Array(8).fill('queue-full'));
  sink.hold = false;
  sink.release();
  await events.flush();
  assert.equal(sink.created.length, 1);
});

test('the fake recorder keeps events with the real texts', () => {
  const fake = createFakeEventRecorder();
  fake.attachSucceeded([pod], 'pvc-1');
  fake.multiAttach([pod], 'pvc-1', []);
  assert.deepEqual(fake.events.map((e) => [e.reason, e.message]), [
    ['SuccessfulAttachVolume', 'AttachVolume.Attach succeeded for volume "pvc-1" '],
    ['FailedAttachVolume', 'Waiting for detach for volume "pvc-1" Volume is already exclusively attached to one node, waiting on detach before it can be attached to another node'],
  ]);
});
