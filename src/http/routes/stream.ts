/**
 * `GET /api/v1/stream?topics=…`: Server-Sent Events (src/dashboard/stream-hub.ts). The reply is
 * hijacked and written to directly (`reply.raw`); the connection closing removes the client, and
 * the server closing ends every stream first (a preClose hook), so `app.close()` never waits on
 * an open stream. Authentication is the route's like any other API path (the auth hook runs
 * before the handler).
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { dashboardSummary, summaryChangeKey } from '../../dashboard/dashboard-summary.js';
import type { DashboardSummary } from '../schemas/dashboard.js';
import { createStreamHub, parseTopics } from '../../dashboard/stream-hub.js';
import { fleetError } from '../../errors/index.js';
import { protectedErrors } from '../schemas/common.js';
import type { RouteDeps } from './route-deps.js';

const streamSchema = {
  summary: 'Server-Sent Events: summary, history, invalidate {topic, version}; a ping comment every 15 s',
  querystring: Type.Object({
    topics: Type.Optional(Type.String({ maxLength: 8192, description: 'Comma-separated: summary, history, notConverged, conflicts, operations, nodes, node:<name>, volume:<uniqueName> (default summary)' })),
  }),
  response: { 200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: { type: 'string' } } } }, ...protectedErrors },
};

export const streamRoutes: FastifyPluginCallbackTypebox<RouteDeps> = (app, deps, done) => {
  const hub = createStreamHub({
    model: deps.dashboard,
    summary: () => dashboardSummary(deps.state, deps.view, deps.dashboard),
    changeKey: (s) => summaryChangeKey(s as DashboardSummary),
  });
  app.addHook('preClose', (hookDone) => {
    hub.closeAll();
    hookDone();
  });

  app.get('/api/v1/stream', { schema: streamSchema }, (request, reply) => {
    const topics = parseTopics(request.query.topics);
    if (!Array.isArray(topics)) throw fleetError('FA_ERR_HTTP_BAD_REQUEST', topics.error);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    const client = hub.add({
      write: (chunk) => res.write(chunk),
      onDrain: (fn) => res.on('drain', fn),
      end: () => res.end(),
    }, topics);
    request.raw.on('close', () => client.close());
    res.on('close', () => client.close());
  });
  done();
};
