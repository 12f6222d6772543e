/**
 * /api/v1/session: the dashboard's login. A browser posts `{"token": …}` once; a token equal to
 * `--http-token` (compared in constant time by the auth hook's authenticator) earns a session
 * cookie — HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it),
 * Path=/ — that the auth hook accepts on every API path instead of the bearer token. The token is
 * never echoed, logged or put in a URL. GET tells the page whether it must show the login form;
 * DELETE logs out. These paths are open (they reveal nothing about the fleet).
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { fleetError } from '../../errors/index.js';
import type { Authenticator } from '../auth-hook.js';
import { cookieValue, SESSION_COOKIE } from '../session-table.js';
import { createSessionSchema, deleteSessionSchema, getSessionSchema } from '../schemas/session.js';

export interface SessionRouteDeps {
  readonly auth: Authenticator;
}

function cookie(request: FastifyRequest, value: string, maxAgeS: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure}`;
}

export const sessionRoutes: FastifyPluginCallbackTypebox<SessionRouteDeps> = (app, { auth }, done) => {
  const config = { openapi: false };
  app.get('/api/v1/session', { schema: getSessionSchema, config }, (request) => ({
    tokenRequired: auth.tokenRequired,
    authenticated: !auth.tokenRequired || auth.sessions.valid(cookieValue(request.headers.cookie, SESSION_COOKIE)),
  }));

  app.post('/api/v1/session', { schema: createSessionSchema, config }, (request, reply) => {
    if (!auth.tokenRequired) return { tokenRequired: false, authenticated: true };
    if (!auth.tokenMatches(request.body.token)) throw fleetError('FA_ERR_HTTP_UNAUTHORIZED', 'invalid token');
    auth.sessions.remove(cookieValue(request.headers.cookie, SESSION_COOKIE));
    const session = auth.sessions.create();
    reply.header('set-cookie', cookie(request, session.id, session.maxAgeS));
    reply.header('cache-control', 'no-store');
    return { tokenRequired: true, authenticated: true };
  });

  app.delete('/api/v1/session', { schema: deleteSessionSchema, config }, (request, reply) => {
    auth.sessions.remove(cookieValue(request.headers.cookie, SESSION_COOKIE));
    reply.header('set-cookie', cookie(request, '', 0));
    return { tokenRequired: auth.tokenRequired, authenticated: !auth.tokenRequired };
  });
  done();
};
