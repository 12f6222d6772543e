/**
 * The Kubernetes API verb of a request on a resource path, as kube-apiserver's request info
 * resolver names it (and as RBAC and audit logs see it): GET of a name is `get`, of a
 * collection `list`, or `watch` with `watch=true`; DELETE of a collection is `deletecollection`.
 */
import type { ApiVerb } from './faults.js';
import { isWatch, type ResourceTarget } from './read-handlers.js';

/** The verb, or undefined for an HTTP method the API does not serve. */
export function apiVerb(method: string, t: ResourceTarget, q: URLSearchParams): ApiVerb | undefined {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (t.name !== undefined) return 'get';
      return isWatch(q) ? 'watch' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return t.name === undefined ? 'deletecollection' : 'delete';
    default:
      return undefined;
  }
}
