/**
 * The inspection HTTP API: a fastify app over the controller's live state. {@link buildServer}
 * never listens (tests use `inject()`); {@link listenServer} binds it to `--listen`.
 *
 * Reads never stall the reconciler: handlers read the shared WorldState directly, synchronously,
 * between or during plans (reads are always allowed), never mutate it, and never copy the world:
 * a request costs O(its answer) — a node's pairs, a page of nodes — except /conflicts (the
 * maintained conflict set) and /api/v1/operations (the operation tables); /summary is O(1).
 *
 * Route groups are plugins (routes/*) typed through the TypeBox type provider; errors become `{code, message}` in error-handler.ts only.
 */
import net from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { WorldState } from '../cache/world-state.js';
import { fleetError } from '../errors/index.js';
import { logger as componentLogger, type Logger } from '../log/logger.js';
import type { ControllerMetrics } from '../metrics/controller-metrics.js';
import { installAuth } from './auth-hook.js';
import { installErrorHandler, toErrorResponse } from './error-handler.js';
import type { InspectionView } from './inspection-view.js';
import { healthRoutes } from './routes/health.js';
import { metricsRoutes } from './routes/metrics.js';
import { nodeRoutes } from './routes/nodes.js';
import { installOpenApi } from './routes/openapi.js';
import { operationRoutes } from './routes/operations.js';
import { sessionRoutes } from './routes/session.js';
import { summaryRoutes } from './routes/summary.js';
import { uiRoutes } from './routes/ui.js';
import { volumeRoutes } from './routes/volumes.js';
import { createSessionTable } from './session-table.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { streamRoutes } from './routes/stream.js';
import { createDashboardModel, type DashboardModel } from '../dashboard/dashboard-model.js';

export interface ServerDeps {
  readonly state: WorldState;
  readonly view: InspectionView;
  readonly metrics: ControllerMetrics;
  /** `--http-token`: required off loopback; when set, required on loopback too. */
  readonly httpToken?: string;
  /** Host part of `--listen`, used to decide whether a token is mandatory. */
  readonly listenHost: string;
  /** Defaults to the `http` component logger. Authorization headers are redacted. */
  readonly logger?: Logger;
  /** Dashboard assets; default build/ui of the package. */
  readonly uiDir?: string;
  /**
   * The dashboard model the controller runs (src/dashboard). Absent: the dashboard routes answer
   * from a model over the same state that is never started (no sweep, history or timeline: empty
   * windows and zero not-converged counts).
   */
  readonly dashboard?: DashboardModel;
}

/** Route parameters can hold 253-character node names and long unique volume names. */
const MAX_PARAM_LENGTH = 1024;

/** Builds the app; throws FA_ERR_FLAG_INVALID off loopback without a token. */
export function buildServer(deps: ServerDeps): FastifyInstance {
  const log: FastifyBaseLogger = (deps.logger ?? componentLogger('http')).child({}, {
    // err.rawPacket: the bytes of a request Node's parser refused (fastify logs the error at
    // trace level), Authorization header included.
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'req.headers.cookie', 'headers.cookie', 'httpToken', 'err.rawPacket'], censor: '[redacted]' },
  });
  const app = Fastify({
    loggerInstance: log,
    // Per-request lines would cost more than the requests at bench rates; errors are logged.
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    return503OnClosing: true,
    // Errors the router raises before any route (bad percent-encoding, an over-long parameter)
    // get the same {code, message} body as the rest.
    frameworkErrors: (err, _request, reply) => {
      const { status, body } = toErrorResponse(err);
      void (reply as FastifyReply).code(status).type('application/json; charset=utf-8').send(body);
    },
  });

  const auth = installAuth(app, { listenHost: deps.listenHost, httpToken: deps.httpToken, sessions: createSessionTable() });
  installErrorHandler(app);
  installOpenApi(app, {
    title: 'fleet-attach inspection API',
    version: '1.0.0',
    description: 'Live, read-only view of the attach/detach controller state. With --http-token (mandatory off loopback) every path except /healthz and /readyz needs it as a bearer token.',
  });
  const dashboard = deps.dashboard ?? createDashboardModel({ state: deps.state, view: deps.view });
  const routeDeps = { state: deps.state, view: deps.view, metrics: deps.metrics, dashboard };
  for (const group of [healthRoutes, metricsRoutes, summaryRoutes, nodeRoutes, volumeRoutes, operationRoutes, dashboardRoutes, streamRoutes]) {
    app.register(group, routeDeps);
  }
  app.register(sessionRoutes, { auth });
  app.register(uiRoutes, { uiDir: deps.uiDir });
  return app;
}

/**
 * Listens on `host:port` (`[::1]:8080` for IPv6; port 0 picks one) and logs
 * `listening on http://HOST:PORT` with the bound port. Resolves with that URL.
 */
export async function listenServer(app: FastifyInstance, listen: string): Promise<string> {
  const { host, port } = parseListen(listen);
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const urlOf = (p: number) => `http://${hostPart}:${p}`;
  let url = urlOf(port);
  // fastify logs this line once bound; the port is the bound one (port 0 picks one).
  try {
    await app.listen({
      host,
      port,
      listenTextResolver: () => {
        const address = app.server.address();
        url = urlOf(typeof address === 'object' && address !== null ? address.port : port);
        return `listening on ${url}`;
      },
    });
  } catch (err) {
    throw listenError(listen, err);
  }
  return url;
}

/**
 * Binds `host:port` and lets go at once: tells whether {@link listenServer} could listen there
 * before seconds of start-up work (the demo's fleet) are spent. Throws as listenServer does.
 */
export async function probeListen(listen: string): Promise<void> {
  const { host, port } = parseListen(listen);
  if (port === 0) return;
  const server = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, exclusive: true }, resolve);
    });
  } catch (err) {
    throw listenError(listen, err);
  }
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A bind failure that the --listen value explains, as a flag error naming it; others unchanged. */
function listenError(listen: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const why: Record<string, string> = {
    EADDRINUSE: 'address already in use',
    EADDRNOTAVAIL: 'address not available on this machine',
    EACCES: 'permission denied (a port below 1024?)',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host not found (name resolution failed)',
  };
  return code !== undefined && why[code] ? fleetError('FA_ERR_FLAG_INVALID', `--listen ${listen}: ${why[code]} (${code})`) : err;
}

/** `host:port` → parts; throws FA_ERR_FLAG_INVALID naming --listen. */
export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(listen);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw fleetError('FA_ERR_FLAG_INVALID', `--listen must be host:port (got ${listen})`);
  return { host: m[1] ?? m[2], port };
}
