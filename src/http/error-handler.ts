/**
 * The one place errors become HTTP responses: `{code, message}` with the status the error
 * catalogue (src/errors) gives the code. Validation failures are FA_ERR_HTTP_BAD_REQUEST,
 * unknown routes FA_ERR_HTTP_NOT_FOUND; anything unexpected is a 500 whose details go to the log,
 * never to the client.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERRORS, isFleetError, type ErrorCode } from '../errors/index.js';
import type { ErrorBody } from './schemas/common.js';

export function errorBody(code: ErrorCode, message?: string): ErrorBody {
  return { code, message: message ?? ERRORS[code].message };
}

/** Status and body for any error thrown by a route, hook or validator. */
export function toErrorResponse(err: unknown): { status: number; body: ErrorBody } {
  if (isFleetError(err)) return { status: err.status, body: errorBody(err.code, err.message) };
  const e = err as Partial<FastifyError>;
  if (e.validation !== undefined) return { status: 400, body: errorBody('FA_ERR_HTTP_BAD_REQUEST', e.message) };
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status === 404) return { status, body: errorBody('FA_ERR_HTTP_NOT_FOUND', e.message) };
  // Framework client errors (bad JSON, URI too long, unsupported media type) keep their status.
  if (status >= 400 && status < 500) return { status, body: errorBody('FA_ERR_HTTP_BAD_REQUEST', e.message) };
  return { status: 500, body: errorBody('FA_ERR_INTERNAL') };
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { status, body } = toErrorResponse(err);
    if (status >= 500) request.log.error({ err, url: request.routeOptions.url, method: request.method }, 'request failed');
    return reply.code(status).type('application/json; charset=utf-8').send(body);
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    return reply.code(404).send(errorBody('FA_ERR_HTTP_NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`));
  });
}
