/** /metrics: the controller's prom-client registry in the Prometheus text format. */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { metricsSchema } from '../schemas/metrics.js';
import type { RouteDeps } from './route-deps.js';

export const metricsRoutes: FastifyPluginCallbackTypebox<RouteDeps> = (app, deps, done) => {
  const registry = deps.metrics.registry;
  app.get('/metrics', { schema: metricsSchema }, async (_request, reply) => {
    const text = await registry.metrics();
    reply.type(registry.contentType);
    return text;
  });
  done();
};
