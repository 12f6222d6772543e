/** /healthz (process alive) and /readyz (ready to act; leader, standby or single). Always open. */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { healthzSchema, readyzSchema } from '../schemas/health.js';
import type { RouteDeps } from './route-deps.js';

export const healthRoutes: FastifyPluginCallbackTypebox<RouteDeps> = (app, deps, done) => {
  app.get('/healthz', { schema: healthzSchema }, () => ({ status: 'ok' as const }));
  app.get('/readyz', { schema: readyzSchema }, (_request, reply) => {
    const r = deps.view.readiness();
    if (r.ready) return { ready: true as const, role: r.role };
    reply.code(503);
    return { code: 'FA_ERR_HTTP_NOT_READY', message: r.reason ?? 'not ready', role: r.role };
  });
  done();
};
