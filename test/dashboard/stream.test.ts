import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it } from 'node:test';
import { createDashboardModel } from '../../src/dashboard/dashboard-model.js';
import { dashboardSummary, summaryChangeKey } from '../../src/dashboard/dashboard-summary.js';
import { createStreamHub, parseTopics, type StreamSink } from '../../src/dashboard/stream-hub.js';
import { buildServer, listenServer } from '../../src/http/server.js';
import { createFleet } from '../http/fleet-fixture.js';
import { mockClock } from '../support/mock-clock.js';

interface Message { id?: string; event?: string; data?: string; comment?: string }

/** A sink that records what it was given, split into SSE messages; `full` makes writes report a full buffer. */
function fakeSink() {
  const chunks: string[] = [];
  let drain: (() => void) | undefined;
  const sink = {
    full: false,
    ended: false,
    write(chunk: string) {
      chunks.push(chunk);
      return !sink.full;
    },
    onDrain(fn: () => void) {
      drain = fn;
    },
    end() {
      sink.ended = true;
    },
    drain() {
      sink.full = false;
      drain?.();
    },
    messages(): Message[] {
      return chunks.filter((c) => !c.startsWith('retry:')).map((c) => {
        const m: Message = {};
        for (const line of c.trim().split('\n')) {
          if (line.startsWith(':')) m.comment = line.slice(1).trim();
          else {
            const i = line.indexOf(': ');
            (m as Record<string, string>)[line.slice(0, i)] = line.slice(i + 2);
          }
        }
        return m;
      });
    },
  };
  return sink satisfies StreamSink;
}

function setup() {
  const f = createFleet();
  const model = createDashboardModel({ state: f.state, view: f.view });
  const hub = createStreamHub({ model, summary: () => dashboardSummary(f.state, f.view, model), changeKey: (x) => summaryChangeKey(x as ReturnType<typeof dashboardSummary>) });
  return { f, model, hub };
}

describe('stream hub', () => {
  it('sends a summary at connect, then only when it changed, at most once per interval', async (t) => {
    const clock = mockClock(t);
    const { f, model, hub } = setup();
    model.index.sweepNow();
    const sink = fakeSink();
    const client = hub.add(sink, ['summary']);
    assert.deepEqual(sink.messages().map((m) => [m.id, m.event]), [['1', 'summary']]);
    assert.equal(JSON.parse(sink.messages()[0].data!).tiles.nodes.total, 0);
    clock.tick(1000);
    assert.equal(sink.messages().length, 1, 'unchanged: nothing sent');
    model.index.sweepNow(); // moves the sweep's timing only
    f.view.advance(5000);
    clock.tick(1000);
    assert.equal(sink.messages().length, 1, 'only now and the sweep timing moved: nothing sent');
    f.node('node-a');
    f.node('node-b');
    clock.tick(999);
    assert.equal(sink.messages().length, 1);
    clock.tick(1);
    const msgs = sink.messages();
    assert.deepEqual(msgs.map((m) => [m.id, m.event]), [['1', 'summary'], ['2', 'summary']], 'two changes in a second: one message');
    assert.equal(JSON.parse(msgs[1].data!).tiles.nodes.total, 2);
    client.close();
    await f.close();
  });

  it('coalesces invalidations per topic and sends new history samples', async (t) => {
    const clock = mockClock(t);
    const { f, model, hub } = setup();
    const sink = fakeSink();
    hub.add(sink, ['notConverged', 'conflicts', 'history']);
    assert.deepEqual(sink.messages(), []);
    const v = f.volume('rwo');
    const a = f.node('node-a');
    const b = f.node('node-b');
    f.attach(v, a);
    model.index.sweepNow();
    f.want(v, b, 'uid-1');
    model.index.sweepNow();
    model.sample();
    clock.tick(1000);
    const events = sink.messages().map((m) => [m.event, m.data && JSON.parse(m.data).topic]);
    assert.deepEqual(events.sort(), [['history', undefined], ['invalidate', 'conflicts'], ['invalidate', 'notConverged']]);
    const inv = sink.messages().find((m) => m.event === 'invalidate' && m.data!.includes('notConverged'))!;
    assert.equal(JSON.parse(inv.data!).version, model.index.snapshot().version);
    clock.tick(1000);
    assert.equal(sink.messages().length, 3, 'no change, no message');
    await f.close();
  });

  it('pings every 15 s and stops its timers when the last client leaves', async (t) => {
    const clock = mockClock(t);
    const { f, hub } = setup();
    const sink = fakeSink();
    const client = hub.add(sink, ['conflicts']);
    clock.tick(15_000);
    assert.deepEqual(sink.messages().filter((m) => m.comment !== undefined).map((m) => m.comment), ['ping']);
    assert.equal(hub.clients(), 1);
    client.close();
    assert.equal(hub.clients(), 0);
    const before = sink.messages().length;
    f.node('node-a');
    clock.tick(60_000);
    assert.equal(sink.messages().length, before, 'nothing written after close');
    await f.close();
  });

  it('a blocked client gets only the latest message of each kind on drain', async (t) => {
    const clock = mockClock(t);
    const { f, hub } = setup();
    const sink = fakeSink();
    hub.add(sink, ['summary']);
    sink.full = true;
    f.node('node-a'); // the next summary is written and fills the buffer
    clock.tick(1000);
    const sent = sink.messages().length;
    f.node('node-b');
    clock.tick(1000);
    f.node('node-c');
    clock.tick(1000);
    assert.equal(sink.messages().length, sent, 'nothing written while blocked');
    sink.drain();
    const after = sink.messages().slice(sent);
    assert.equal(after.length, 1);
    assert.equal(JSON.parse(after[0].data!).tiles.nodes.total, 3);
    await f.close();
  });

  it('validates topics', () => {
    assert.deepEqual(parseTopics('summary,node:n1,volume:kubernetes.io/csi/d^h'), ['summary', 'node:n1', 'volume:kubernetes.io/csi/d^h']);
    assert.deepEqual(parseTopics(undefined), ['summary']);
    assert.deepEqual(parseTopics('summary,bogus'), { error: 'unknown topic bogus' });
  });
});

describe('GET /api/v1/stream', () => {
  it('streams text/event-stream from the first summary, and app.close() ends open streams', { timeout: 20_000 }, async () => {
    const f = createFleet();
    const model = createDashboardModel({ state: f.state, view: f.view });
    const app = buildServer({ state: f.state, view: f.view, metrics: f.metrics, listenHost: '127.0.0.1', dashboard: model });
    const url = await listenServer(app, '127.0.0.1:0');
    const bad = await app.inject({ method: 'GET', url: '/api/v1/stream?topics=nope' });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json().code, 'FA_ERR_HTTP_BAD_REQUEST');
    const { res, first } = await new Promise<{ res: http.IncomingMessage; first: string }>((resolve, reject) => {
      const req = http.get(`${url}/api/v1/stream?topics=summary,notConverged`, (r) => {
        r.setEncoding('utf8');
        let text = '';
        r.on('data', (d: string) => {
          text += d;
          if (text.includes('event: summary')) resolve({ res: r, first: text });
        });
      });
      req.on('error', reject);
    });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/event-stream/);
    assert.match(first, /id: 1\nevent: summary\ndata: \{.*"tiles"/);
    const ended = new Promise<void>((resolve) => res.on('end', resolve));
    await app.close();
    await ended;
    await f.close();
  });
});
