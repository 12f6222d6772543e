/**
 * /openapi.json: an OpenAPI 3.1 document generated from the routes' own schemas, collected with
 * an `onRoute` hook, so the document cannot drift from what the server validates and serialises.
 * A route opts out with `config: { openapi: false }`; HEAD twins are left out.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import { Type } from 'typebox';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: leave the route out of /openapi.json. */
    openapi?: boolean;
  }
}

interface JsonObject { [key: string]: unknown }

/** Paths reachable without a token (mirrors the auth hook). */
const OPEN_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

const openapiSchema = {
  summary: 'This document (OpenAPI 3.1)',
  response: { 200: Type.Object({}, { additionalProperties: true }) },
};

/** Installs the collector and the route; call before registering the route groups. */
export function installOpenApi(app: FastifyInstance, info: { title: string; version: string; description: string }): void {
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    if (route.config?.openapi !== false) routes.push(route);
  });
  let document: JsonObject | undefined;
  app.get('/openapi.json', { schema: openapiSchema }, () => (document ??= buildDocument(routes, info)));
}

export function buildDocument(routes: readonly RouteOptions[], info: JsonObject): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of routes) {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
    if (methods.length === 0 || route.url.includes('*')) continue;
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    for (const method of methods) {
      (paths[path] ??= {})[method.toLowerCase()] = operation(route);
    }
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Required off loopback (--http-token)' } } },
  };
}

function operation(route: RouteOptions): JsonObject {
  const schema = (route.schema ?? {}) as JsonObject;
  const op: JsonObject = {};
  if (typeof schema.summary === 'string') op.summary = schema.summary;
  const parameters = [...params(schema.params, 'path'), ...params(schema.querystring, 'query')];
  if (parameters.length > 0) op.parameters = parameters;
  op.responses = responses(schema.response);
  if (!OPEN_PATHS.has(route.url)) op.security = [{ bearerAuth: [] }];
  return op;
}

function params(schema: unknown, where: 'path' | 'query'): JsonObject[] {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(schema.properties).map(([name, s]) => {
    const p: JsonObject = { name, in: where, required: where === 'path' || required.has(name), schema: s };
    if (isObject(s) && typeof s.description === 'string') p.description = s.description;
    return p;
  });
}

function responses(schema: unknown): JsonObject {
  const out: JsonObject = {};
  if (!isObject(schema)) return { 200: { description: 'OK' } };
  for (const [status, s] of Object.entries(schema)) {
    if (!isObject(s)) continue;
    const description = typeof s.description === 'string' ? s.description : status.startsWith('2') ? 'OK' : 'Error';
    // A response given per content type (e.g. text/plain for /metrics) is already in OpenAPI form.
    out[status] = isObject(s.content) ? { description, content: s.content } : { description, content: { 'application/json': { schema: s } } };
  }
  return out;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
