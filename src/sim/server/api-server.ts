/**
 * The simulated Kubernetes API server: node:https (or node:http behind --insecure-http) with
 * a hand-rolled router, so that the hot paths (paged lists, watch fan-out) are string
 * concatenation over the stored JSON. Errors become `Status` responses in one place
 * (sendStatus). `createApiServer` does not listen; `listen` does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { logger } from '../../log/logger.js';
import type { ResourceName, ServableStore } from '../store/index.js';
import { createRequestAuth, type SimUser } from './auth.js';
import type { Client, ClientFaults } from './client-faults.js';
import { DEBUG_PREFIX, serveDebug } from './debug-endpoints.js';
import { createDiscovery } from './discovery.js';
import { apiVerb } from './api-verb.js';
import type { FaultHooks } from './faults.js';
import { answeringErrors, createHttpListener, splitUrl } from './http-listener.js';
import { handleGet, handleList, handleWatch, type ResourceTarget } from './read-handlers.js';
import { isPublicPath, parseRoute } from './route.js';
import { isClientError, methodNotAllowed, notFound, sendJson } from './status.js';
import type { TlsMaterial } from './tls.js';
import { createWatchHub, type WatchHub } from './watch-hub.js';
import { handleCreate, handleDelete, handlePatch, handleUpdate, type WriteContext } from './write-handlers.js';
import type { WriteLog, WriteVerb } from './write-log.js';

export interface ApiServerOptions {
  store: ServableStore;
  /** Bearer token every non-public request must carry, unless its connection has a client certificate the CA signed. */
  token: string;
  /** Serving certificate and key; undefined serves plain HTTP. */
  tls?: TlsMaterial;
  /** Period of BOOKMARK events on watches that allow them (default 60 s, as kube-apiserver). */
  bookmarkIntervalMs?: number;
  /** Unsent bytes after which a slow watcher is cut off (default 64 MiB). */
  maxWatchBacklogBytes?: number;
  faults?: FaultHooks;
  /** Further users, each with its own token (auth.ts). */
  users?: readonly SimUser[];
  /** Records every committed write with its user; served on /debug/write-log. */
  writeLog?: WriteLog;
  /** Per-client faults, consulted before `faults`; set on /debug/faults. */
  clientFaults?: ClientFaults;
}

export interface ApiServer {
  /** Listens on host:port (port 0 picks a free port); resolves to the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** Open watch streams. */
  watchCount(): number;
  /** Watches cut off for falling behind, since start. */
  watchCutOffs(): number;
  /** Ends the open watches of one resource as a server-side timeout does; returns how many. */
  endWatches(resource: ResourceName): number;
  /** Ends watches, closes every connection and stops listening. */
  close(): Promise<void>;
}

const log = logger('sim-api');

export function createApiServer(opts: ApiServerOptions): ApiServer {
  const { store } = opts;
  const auth = createRequestAuth(opts.token, opts.users);
  const { writeLog, clientFaults } = opts;
  const discovery = createDiscovery();
  const lagFor = (c: Client) => {
    const action = clientFaults?.actionFor(c);
    return action?.kind === 'lag' ? action.ms : 0;
  };
  const hub: WatchHub = createWatchHub({ store, bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000, maxBacklogBytes: opts.maxWatchBacklogBytes ?? 64 << 20, lagFor: clientFaults ? lagFor : undefined });
  let address = '127.0.0.1:0';
  // A partition cuts both ways: a denied client's watches end, a black-holed one's are held
  // until it is lifted, then end so that the client resumes where it was cut off. A lagging
  // client's watches take the rule's lag for what is committed from now on.
  const unwatchFaults = clientFaults?.onChange(() => {
    for (const s of hub.streams()) {
      if (!s.client) continue;
      const action = clientFaults.actionFor(s.client);
      if (action?.kind === 'deny') s.end();
      else if (action?.kind === 'blackhole') s.hold();
      else if (s.isHeld) s.end();
      else s.setLag(action?.kind === 'lag' ? action.ms : 0);
    }
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { path, query } = splitUrl(req.url);
    const q = new URLSearchParams(query);
    const method = req.method ?? 'GET';
    const user = isPublicPath(path) ? undefined : auth.user(req);
    if (path.startsWith(DEBUG_PREFIX)) return serveDebug({ writeLog, clientFaults }, path, q, req, res);
    const route = parseRoute(path);
    const readOnly = () => {
      if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed();
    };
    switch (route.kind) {
      case 'health':
        readOnly();
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        return void res.end('ok');
      case 'version':
        readOnly();
        return sendJson(res, 200, discovery.version());
      case 'api-versions':
        readOnly();
        return sendJson(res, 200, discovery.apiVersions(address));
      case 'group-list':
        readOnly();
        return sendJson(res, 200, discovery.groupList());
      case 'group':
        readOnly();
        return sendJson(res, 200, discovery.group(route.group));
      case 'resource-list':
        readOnly();
        return sendJson(res, 200, discovery.resourceList(route.group));
      case 'not-found':
        throw notFound();
      case 'resource':
        return serveResource(route, method, q, req, res, user as string);
    }
  }

  async function serveResource(t: ResourceTarget, method: string, q: URLSearchParams, req: IncomingMessage, res: ServerResponse, user: string): Promise<void> {
    const verb = apiVerb(method, t, q);
    if (verb === undefined) throw methodNotAllowed();
    const client: Client = { user, userAgent: req.headers['user-agent'] };
    // Most requests match no client rule: no signal, no promise for them. A lag applies to
    // watch frames only (the watch hub); the requests themselves are served as usual.
    const rule = clientFaults?.actionFor(client);
    const faulted = clientFaults !== undefined && rule !== undefined && rule.kind !== 'lag';
    if (faulted || opts.faults?.beforeRequest) {
      let signal: AbortSignal | undefined;
      if (faulted) {
        const gone = new AbortController();
        res.once('close', () => gone.abort());
        signal = gone.signal;
      }
      const facts = { method, path: req.url ?? '', verb, resource: t.info.name, namespace: t.namespace, name: t.name, subresource: t.subresource, user, userAgent: client.userAgent, signal };
      const injected = (faulted ? await clientFaults.beforeRequest(facts) : undefined) ?? (await opts.faults?.beforeRequest?.(facts));
      if (injected) throw injected;
    }
    switch (verb) {
      case 'get':
        return handleGet({ store, hub }, t, q, req.headers.accept, res);
      case 'list':
        return handleList({ store, hub }, t, q, req.headers.accept, res);
      case 'watch':
        return handleWatch({ store, hub, client }, t, q, req.headers.accept, res);
      default:
        return serveWrite(verb, t, q, req, res, user);
    }
  }

  async function serveWrite(verb: WriteVerb, t: ResourceTarget, q: URLSearchParams, req: IncomingMessage, res: ServerResponse, user: string): Promise<void> {
    const subresource = t.subresource === 'status' ? 'status' : undefined;
    const w: WriteContext = { store, commit: writeLog ? (fn) => writeLog.attribute(user, verb, subresource, fn) : (fn) => fn() };
    try {
      switch (verb) {
        case 'create':
          return await handleCreate(w, t, q, req, res);
        case 'update':
          return await handleUpdate(w, t, q, req, res);
        case 'patch':
          return await handlePatch(w, t, q, req, res);
        case 'delete':
        case 'deletecollection':
          return await handleDelete(w, t, q, req, res);
      }
    } catch (err) {
      if (writeLog && isClientError(err)) writeLog.refused(user, (err as { code: number }).code);
      throw err;
    }
  }

  const server = createHttpListener(opts.tls, answeringErrors(serve, log, 'request failed'));

  return {
    async listen(host, port) {
      const a = await server.listen(host, port);
      address = `${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
      return a.port;
    },
    watchCount: () => hub.count(),
    watchCutOffs: () => hub.cutOffCount(),
    endWatches: (resource) => hub.endAll(resource),
    close() {
      unwatchFaults?.();
      hub.close();
      return server.close();
    },
  };
}
