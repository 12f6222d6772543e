/**
 * The simulated Kubernetes API server: node:https (or node:http behind --insecure-http) with
 * a hand-rolled router, so that the hot paths (paged lists, watch fan-out) are string
 * concatenation over the stored JSON. Errors become `Status` responses in one place
 * (sendStatus). `createApiServer` does not listen; `listen` does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { logger } from '../../log/logger.js';
import type { ResourceName, ServableStore } from '../store/index.js';
import { createRequestAuth } from './auth.js';
import { createDiscovery } from './discovery.js';
import { apiVerb } from './api-verb.js';
import type { FaultHooks } from './faults.js';
import { answeringErrors, createHttpListener, splitUrl } from './http-listener.js';
import { handleGet, handleList, handleWatch, type ResourceTarget } from './read-handlers.js';
import { isPublicPath, parseRoute } from './route.js';
import { methodNotAllowed, notFound, sendJson } from './status.js';
import type { TlsMaterial } from './tls.js';
import { createWatchHub, type WatchHub } from './watch-hub.js';
import { handleCreate, handleDelete, handlePatch, handleUpdate } from './write-handlers.js';

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
  const auth = createRequestAuth(opts.token);
  const discovery = createDiscovery();
  const hub: WatchHub = createWatchHub({ store, bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000, maxBacklogBytes: opts.maxWatchBacklogBytes ?? 64 << 20 });
  let address = '127.0.0.1:0';

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { path, query } = splitUrl(req.url);
    const q = new URLSearchParams(query);
    const method = req.method ?? 'GET';
    if (!isPublicPath(path)) auth.check(req);
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
        return serveResource(route, method, q, req, res);
    }
  }

  async function serveResource(t: ResourceTarget, method: string, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const verb = apiVerb(method, t, q);
    if (verb === undefined) throw methodNotAllowed();
    if (opts.faults?.beforeRequest) {
      const injected = await opts.faults.beforeRequest({ method, path: req.url ?? '', verb, resource: t.info.name, namespace: t.namespace, name: t.name, subresource: t.subresource });
      if (injected) throw injected;
    }
    switch (verb) {
      case 'get':
        return handleGet({ store, hub }, t, q, req.headers.accept, res);
      case 'list':
        return handleList({ store, hub }, t, q, req.headers.accept, res);
      case 'watch':
        return handleWatch({ store, hub }, t, q, req.headers.accept, res);
      case 'create':
        return handleCreate(store, t, q, req, res);
      case 'update':
        return handleUpdate(store, t, q, req, res);
      case 'patch':
        return handlePatch(store, t, q, req, res);
      case 'delete':
      case 'deletecollection':
        return handleDelete(store, t, q, req, res);
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
      hub.close();
      return server.close();
    },
  };
}
