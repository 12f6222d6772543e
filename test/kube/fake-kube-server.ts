/**
 * A minimal Kubernetes-like HTTP server for the kube-layer tests (plain HTTP on 127.0.0.1:0,
 * kubeconfig with insecure-skip-tls-verify as client-node 1.4 requires for http).
 *
 * Collections: paged lists (`limit`/`continue`, one snapshot per list), and watches from a
 * resourceVersion replaying a retained event log (older than the log ⇒ 410, as an ERROR event
 * or an HTTP status). Test controls: put/remove objects, send bookmarks or raw lines, compact
 * the log, drop or stall watches, fail the next requests. Other requests go to `route`.
 */
import http from 'node:http';
import { after, afterEach, before, beforeEach } from 'node:test';
import { loadKubeConfig, type FleetKubeConfig } from '../../src/kube/kube-config.js';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  [k: string]: unknown;
}

type Route = (req: http.IncomingMessage, body: string, url: URL) => { status: number; body?: unknown; headers?: Record<string, string> } | undefined;

interface Watcher {
  path: string;
  res: http.ServerResponse;
}

export interface FakeKubeServer {
  url: string;
  kubeconfigYaml: string;
  /** Requests seen (method, path+query). */
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; rawHeaders: string[]; body: string }>;
  /** TCP connections accepted so far. */
  connections(): number;
  put(path: string, obj: FakeObject): string;
  remove(path: string, key: string): void;
  /** Stores an object without an event (as if the watch missed it). */
  putSilently(path: string, obj: FakeObject): void;
  removeSilently(path: string, key: string): void;
  bookmark(path: string): void;
  sendRaw(path: string, line: string): void;
  /** Forget the event log: watches from an older resourceVersion get 410. */
  compact(): void;
  dropWatches(): void;
  /** While stalled, watch requests are answered (headers) but get no events at all. */
  stall(on: boolean): void;
  /** How 410 is signalled on a watch: ERROR event (default) or HTTP status. */
  goneAs: 'event' | 'status';
  /** The next `times` requests matching `pred` get `status`. */
  failNext(pred: (method: string, url: URL) => boolean, status: number, times?: number, headers?: Record<string, string>): void;
  watchers(path: string): number;
  route: Route | undefined;
  rv(): number;
  close(): Promise<void>;
}

const keyOf = (o: FakeObject) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);

export async function startFakeKubeServer(): Promise<FakeKubeServer> {
  let rv = 100;
  let oldestRetained = 0; // watches from rv < oldestRetained - 1 are too old
  let stalled = false;
  let conns = 0;
  const sockets = new Set<Socket>();
  const store = new Map<string, Map<string, FakeObject>>();
  const log: Array<{ rv: number; path: string; line: string }> = [];
  const watchers = new Set<Watcher>();
  const snapshots = new Map<string, { items: FakeObject[]; rv: number }>();
  const failures: Array<{ pred: (m: string, u: URL) => boolean; status: number; left: number; headers?: Record<string, string> }> = [];
  let snapSeq = 0;

  const coll = (path: string) => {
    let m = store.get(path);
    if (!m) store.set(path, (m = new Map()));
    return m;
  };
  const emit = (path: string, type: string, obj: FakeObject) => {
    const line = JSON.stringify({ type, object: obj }) + '\n';
    log.push({ rv: Number(obj.metadata.resourceVersion), path, line });
    if (stalled) return;
    for (const w of watchers) if (w.path === path) w.res.write(line);
  };

  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      srv.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders, body });
      const f = failures.find((x) => x.left > 0 && x.pred(req.method ?? '', url));
      if (f) {
        f.left--;
        res.writeHead(f.status, { 'content-type': 'application/json', ...(f.headers ?? {}) });
        return res.end(JSON.stringify({ kind: 'Status', code: f.status, reason: 'Injected', message: 'injected failure' }));
      }
      const custom = srv.route?.(req, body, url);
      if (custom) {
        res.writeHead(custom.status, { 'content-type': 'application/json', ...(custom.headers ?? {}) });
        return res.end(custom.body === undefined ? '' : JSON.stringify(custom.body));
      }
      if (req.method !== 'GET') {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound' }));
      }
      if (url.searchParams.get('watch') === 'true') return serveWatch(url, res);
      return serveList(url, res);
    });
  });

  function serveList(url: URL, res: http.ServerResponse) {
    const limit = Number(url.searchParams.get('limit') ?? '0');
    const cont = url.searchParams.get('continue');
    let snapId: string;
    let offset = 0;
    if (cont) {
      [snapId, offset] = [cont.split(':')[0] as string, Number(cont.split(':')[1])];
      if (!snapshots.has(snapId)) {
        res.writeHead(410, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'continue token expired' }));
      }
    } else {
      snapId = String(++snapSeq);
      const items = [...coll(url.pathname).values()].sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
      snapshots.set(snapId, { items: items.map((o) => structuredClone(o)), rv });
    }
    const snap = snapshots.get(snapId) as { items: FakeObject[]; rv: number };
    const end = limit > 0 ? Math.min(snap.items.length, offset + limit) : snap.items.length;
    const more = end < snap.items.length;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'List', metadata: { resourceVersion: String(snap.rv), ...(more ? { continue: `${snapId}:${end}` } : {}) }, items: snap.items.slice(offset, end) }));
  }

  function serveWatch(url: URL, res: http.ServerResponse) {
    const from = Number(url.searchParams.get('resourceVersion') ?? '0');
    if (from < oldestRetained - 1 && srv.goneAs === 'status') {
      res.writeHead(410, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' }));
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    if (from < oldestRetained - 1) {
      res.write(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } }) + '\n');
      return res.end();
    }
    const w: Watcher = { path: url.pathname, res };
    watchers.add(w);
    res.on('close', () => watchers.delete(w));
    if (stalled) return;
    for (const e of log) if (e.path === url.pathname && e.rv > from) res.write(e.line);
  }

  server.on('connection', (s) => {
    conns++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  const srv: FakeKubeServer = {
    url,
    kubeconfigYaml: [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: fake, cluster: {server: "' + url + '", insecure-skip-tls-verify: true}}]',
      'users: [{name: u, user: {token: fake-token}}]',
      'contexts: [{name: c, context: {cluster: fake, user: u}}]',
      'current-context: c',
    ].join('\n'),
    requests: [],
    connections: () => conns,
    put(path, obj) {
      const key = keyOf(obj);
      const existed = coll(path).has(key);
      const o = structuredClone(obj);
      o.metadata.resourceVersion = String(++rv);
      coll(path).set(key, o);
      emit(path, existed ? 'MODIFIED' : 'ADDED', o);
      return o.metadata.resourceVersion;
    },
    remove(path, key) {
      const o = coll(path).get(key);
      if (!o) return;
      coll(path).delete(key);
      const d = structuredClone(o);
      d.metadata.resourceVersion = String(++rv);
      emit(path, 'DELETED', d);
    },
    putSilently(path, obj) {
      const o = structuredClone(obj);
      o.metadata.resourceVersion = String(++rv);
      coll(path).set(keyOf(o), o);
    },
    removeSilently(path, key) {
      coll(path).delete(key);
      ++rv;
    },
    bookmark(path) {
      const line = JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Bookmark', metadata: { resourceVersion: String(rv) } } }) + '\n';
      for (const w of watchers) if (w.path === path) w.res.write(line);
    },
    sendRaw(path, line) {
      for (const w of watchers) if (w.path === path) w.res.write(line + '\n');
    },
    compact() {
      log.length = 0;
      oldestRetained = rv + 1;
    },
    dropWatches() {
      for (const w of watchers) w.res.socket?.destroy();
      watchers.clear();
    },
    stall(on) {
      stalled = on;
    },
    goneAs: 'event',
    failNext(pred, status, times = 1, headers) {
      failures.push({ pred, status, left: times, ...(headers ? { headers } : {}) });
    },
    watchers: (path) => [...watchers].filter((w) => w.path === path).length,
    route: undefined,
    rv: () => rv,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return srv;
}

/** Polls `cond` every 10 ms until true; rejects after `timeoutMs` (default 5 s) naming `what`. */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Inside a `describe`: one fake server for the suite and a fresh kubeconfig per test (its routes
 * cleared). Read `srv` and `kc` from the returned object inside tests.
 */
export function useFakeKubeServer(): { readonly srv: FakeKubeServer; readonly kc: FleetKubeConfig } {
  const fixture = {} as { srv: FakeKubeServer; kc: FleetKubeConfig };
  before(async () => {
    fixture.srv = await startFakeKubeServer();
  });
  after(async () => {
    await fixture.srv.close();
  });
  beforeEach(() => {
    fixture.kc = loadKubeConfig({ yaml: fixture.srv.kubeconfigYaml });
    fixture.srv.route = undefined;
  });
  afterEach(() => fixture.kc.close());
  return fixture;
}
