import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { loadKubeConfig, type FleetKubeConfig } from '../../src/kube/kube-config.js';
import { continueInHead } from '../../src/kube/list-head.js';
import { decodePage, encodePage, projectPage, readListBody } from '../../src/kube/list-page.js';
import { listPages, type PageRequest, type PageResponse } from '../../src/kube/list-pages.js';
import { POD_KIND, type PodRecord } from '../../src/kube/projections/pod.js';
import { createReflector, type Reflector } from '../../src/kube/reflector.js';
import type { RequestReport } from '../../src/kube/request-hook.js';
import { startFakeKubeServer, waitFor, type FakeKubeServer, type FakeObject } from './fake-kube-server.js';
import { mockClock, settle, turns } from '../support/mock-clock.js';

const PODS = '/api/v1/pods';
const N = 250;
const PAGE = 50;

function pod(i: number): FakeObject {
  const name = `p${String(i).padStart(4, '0')}`;
  return { metadata: { name, namespace: 'ns', uid: `uid-${name}` }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } };
}

const isList = (u: URL) => u.pathname === PODS && u.searchParams.get('watch') !== 'true';
const isContinue = (u: URL) => isList(u) && u.searchParams.has('continue');

describe('paged list: retries, 410 restarts, prefetch (reflector against a fake API server)', () => {
  let srv: FakeKubeServer;
  let kc: FleetKubeConfig;
  let refl: Reflector<PodRecord> | undefined;
  let adds: string[];
  let reports: RequestReport[];

  before(async () => {
    srv = await startFakeKubeServer();
    for (let i = 0; i < N; i++) srv.putSilently(PODS, pod(i));
  });
  after(async () => {
    await srv.close();
  });
  beforeEach(() => {
    kc = loadKubeConfig({ yaml: srv.kubeconfigYaml });
    adds = [];
    reports = [];
  });
  afterEach(async () => {
    await refl?.stop();
    refl = undefined;
    srv.route = undefined;
    kc.close();
  });

  function start(opts: Partial<Parameters<typeof createReflector<PodRecord>>[0]> = {}) {
    refl = createReflector<PodRecord>({
      kc,
      kind: POD_KIND,
      pageSize: PAGE,
      backoff: { initialMs: 20, maxMs: 200 },
      listRetry: { initialMs: 10, maxMs: 50 },
      onRequest: (r) => reports.push(r),
      ...opts,
    });
    refl.addHandler({ add: (p) => adds.push(`${p.namespace}/${p.name}`) });
    void refl.start();
    return refl;
  }

  function listUrls(from: number): URL[] {
    return srv.requests.slice(from).map((q) => new URL(q.url, 'http://x')).filter(isList);
  }

  function assertEveryPodOnce(r: Reflector<PodRecord>) {
    assert.equal(adds.length, N);
    assert.equal(new Set(adds).size, N);
    assert.equal(r.size(), N);
  }

  it('retries a 429 on page 2 after its Retry-After and completes the list with every item', async (t) => {
    srv.failNext((_m, u) => isContinue(u), 429, 1, { 'retry-after': '1' });
    const clock = mockClock(t, { performanceNow: false }); // the reflector's waits run on it; the requests on real I/O
    const r = start();
    await settle('the 429 and its retry wait', () => r.stats().listRetries === 1);
    // Retry-After (1 s) on the clock: no request 1 ms before it (the loop turns over, so a request
    // sent would reach the server), the retried page at it.
    const asked = srv.requests.length;
    clock.tick(999);
    await turns(50);
    assert.equal(srv.requests.length, asked, 'the page was asked again before its Retry-After');
    clock.tick(1);
    await settle('sync', () => r.synced());
    t.mock.timers.reset(); // the watch that follows runs on real timers
    assertEveryPodOnce(r);
    assert.equal(r.stats().listRetries, 1);
    assert.equal(r.stats().lastList?.retries, 1);
    assert.equal(r.stats().relists, 0, 'the list itself did not fail');
    const lists = reports.filter((x) => x.verb === 'list');
    const i429 = lists.findIndex((x) => x.code === 429);
    assert.ok(i429 >= 1, 'the 429 came after the first page');
    const retried = lists.slice(i429 + 1).find((x) => x.code === 200);
    assert.ok(retried, 'a page succeeded after the 429');
  });

  it('reads each page through readPage when given one (a worker in the controller) and counts that time apart', async () => {
    const bodies: number[] = [];
    const r = start({
      readPage: async (kind, body) => {
        bodies.push(body.length);
        return decodePage(kind, encodePage(projectPage(kind, body.toString('utf8'))));
      },
    });
    await waitFor(() => r.synced(), 'sync');
    assertEveryPodOnce(r);
    assert.equal(bodies.length, N / PAGE, 'one read per page');
    const last = r.stats().lastList;
    assert.ok(last && last.offThreadMs > 0, 'the reader reports its parse and projection time');
  });

  it('caps a long Retry-After at maxRetryAfterMs', async () => {
    srv.failNext((_m, u) => isContinue(u), 429, 2, { 'retry-after': '120' });
    const r = start({ listRetry: { maxRetryAfterMs: 30 } });
    await waitFor(() => r.synced(), 'sync (a 120 s wait would time this out)');
    assertEveryPodOnce(r);
    assert.equal(r.stats().listRetries, 2);
  });

  it('retries 5xx and connection resets on a continue page with backoff', async () => {
    srv.failNext((_m, u) => isContinue(u), 503, 2);
    let resets = 1;
    srv.route = (req: http.IncomingMessage, _body, url) => {
      if (resets > 0 && isContinue(url) && url.searchParams.get('continue')?.endsWith(':150')) {
        resets--;
        req.socket.destroy();
      }
      return undefined;
    };
    const r = start();
    await waitFor(() => r.synced(), 'sync');
    assertEveryPodOnce(r);
    assert.equal(r.stats().listRetries, 3);
    assert.equal(r.stats().relists, 0);
  });

  it('gives up on the list after its retries and lists again later (backoff), still exactly once per pod', async () => {
    srv.failNext((_m, u) => isContinue(u), 500, 3);
    const r = start({ listRetry: { maxRetries: 2, initialMs: 5, maxMs: 10 } });
    await waitFor(() => r.synced(), 'sync');
    assertEveryPodOnce(r);
    assert.equal(r.stats().listRetries, 2, 'two retries in the failed list, none in the next');
    assert.equal(r.stats().relists, 1);
  });

  it('restarts from the first page when a continue token has expired (410)', async () => {
    const from = srv.requests.length;
    srv.failNext((_m, u) => isContinue(u) && u.searchParams.get('continue')?.endsWith(':100') === true, 410, 1);
    const r = start();
    await waitFor(() => r.synced(), 'sync');
    assertEveryPodOnce(r);
    assert.equal(r.stats().listRestarts, 1);
    assert.equal(r.stats().lastList?.restarts, 1);
    assert.equal(r.stats().lastList?.items, N);
    const firstPages = listUrls(from).filter((u) => !u.searchParams.has('continue'));
    assert.equal(firstPages.length, 2, 'the first page was asked twice');
  });

  it('fills an empty store page by page: a first list\'s objects are in the store before the list ends', async () => {
    let reads = 0;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const r = start({
      readPage: async (kind, body) => {
        if (++reads === N / PAGE) await held; // the last page waits
        return decodePage(kind, encodePage(projectPage(kind, body.toString('utf8'))));
      },
    });
    try {
      await waitFor(() => adds.length === N - PAGE, 'every page but the last added');
      assert.equal(r.size(), N - PAGE);
      assert.equal(r.synced(), false, 'not synced before the list ends');
    } finally {
      release(); // else a failure here would leave the reflector's stop waiting on the held page
    }
    await waitFor(() => r.synced(), 'sync');
    assertEveryPodOnce(r);
    assert.equal(r.stats().lastList?.items, N);
  });

  it('a first list restarted (410) after objects went in deletes what vanished in between', async () => {
    const deleted: string[] = [];
    let reads = 0;
    srv.failNext((_m, u) => isContinue(u) && u.searchParams.get('continue')?.endsWith(':100') === true, 410, 1);
    const r = start({
      readPage: async (kind, body) => {
        // Page 2 is read after page 3 was asked for (and refused): p0000 goes before the restart lists again.
        if (++reads === 2) srv.removeSilently(PODS, 'ns/p0000');
        return decodePage(kind, encodePage(projectPage(kind, body.toString('utf8'))));
      },
    });
    r.addHandler({ delete: (p) => deleted.push(`${p.namespace}/${p.name}`) });
    try {
      await waitFor(() => r.synced(), 'sync');
      assert.equal(r.stats().listRestarts, 1);
      assert.deepEqual(deleted, ['ns/p0000']);
      assert.equal(r.size(), N - 1);
      assert.equal(adds.length, N, 'each pod added once, p0000 before it vanished');
      assert.equal(new Set(adds).size, N);
    } finally {
      srv.putSilently(PODS, pod(0)); // the other tests list all N
    }
  });

  it('fails the list when continue tokens keep expiring', async () => {
    srv.failNext((_m, u) => isContinue(u), 410, 4);
    const r = start({ backoff: { initialMs: 5, maxMs: 10 } });
    await waitFor(() => r.synced(), 'sync');
    assertEveryPodOnce(r);
    assert.equal(r.stats().relists, 1, 'three restarts, then the list failed once');
    assert.equal(r.stats().listRestarts, 3);
  });
});

describe('listPages prefetch', () => {
  const page = (i: number, last: number, cont = i < last ? `tok${i + 1}` : undefined) =>
    JSON.stringify({ kind: 'List', metadata: { resourceVersion: '7', ...(cont ? { continue: cont } : {}) }, items: [{ i }] });
  const response = (text: string): PageResponse<unknown> => ({ ...readListBody(JSON.parse(text)), bytes: text.length, parseMs: 0, projectMs: 0 });

  it('requests page n+1 as soon as page n shows its token, one page ahead at most', async () => {
    const asked: string[] = [];
    const release = new Map<string, () => void>();
    const items: unknown[] = [];
    const done = listPages({
      fetchPage: (req: PageRequest) => {
        const tok = req.continueToken ?? 'tok0';
        asked.push(tok);
        const i = Number(tok.slice(3));
        const text = page(i, 3);
        req.onHead(text.slice(0, text.indexOf('[') + 1));
        return new Promise<PageResponse<unknown>>((resolve) => release.set(tok, () => resolve(response(text))));
      },
      onItem: (raw) => items.push(raw),
    });
    await waitFor(() => asked.length === 2, 'page 1 requested before page 0 arrived');
    assert.deepEqual(asked, ['tok0', 'tok1']);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(asked.length, 2, 'not more than one page ahead');
    release.get('tok0')?.();
    await waitFor(() => asked.length === 3, 'page 2 requested once page 1 is current');
    for (const t of ['tok1', 'tok2', 'tok3']) {
      await waitFor(() => release.has(t), t);
      release.get(t)?.();
    }
    const s = await done;
    assert.deepEqual(asked, ['tok0', 'tok1', 'tok2', 'tok3']);
    assert.equal(s.items, 4);
    assert.equal(s.pages, 4);
    assert.deepEqual(items, [{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }]);
  });

  it('drops a prefetch whose token disagrees with the parsed page and follows the page', async () => {
    const asked: string[] = [];
    const aborted: string[] = [];
    const s = await listPages({
      fetchPage: async (req) => {
        const tok = req.continueToken ?? 'tok0';
        asked.push(tok);
        req.signal.addEventListener('abort', () => aborted.push(tok));
        if (tok === 'tok0') req.onHead('{"metadata":{"continue":"bogus"},"items":[');
        return response(page(Number(tok.slice(3)) || 0, 1));
      },
      onItem: () => {},
    });
    assert.deepEqual(asked, ['tok0', 'bogus', 'tok1']);
    assert.deepEqual(aborted, ['bogus']);
    assert.equal(s.items, 2);
  });

  it('reads the continue token from the start of a body', () => {
    assert.deepEqual(continueInHead('{"kind":"PodList","metadata":{"resourceVersion":"5"'), { done: false });
    assert.deepEqual(continueInHead('{"metadata":{"resourceVersion":"5","continue":"a\\/b"},"items":[{"x'), { done: true, token: 'a/b' });
    assert.deepEqual(continueInHead('{"metadata":{"resourceVersion":"5"},"items":[{"continue":"no"'), { done: true, token: undefined });
  });
});
