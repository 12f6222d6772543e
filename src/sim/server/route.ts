/**
 * Maps a request path to what it names, with kube-apiserver's path layout:
 *   /api/v1/{resource}[/{name}[/{sub}]]                       cluster-scoped, or all namespaces
 *   /api/v1/namespaces/{ns}/{resource}[/{name}[/{sub}]]       namespaced
 *   /apis/{group}/{version}/…                                 the same for named groups
 *   /api, /api/v1, /apis, /apis/{group}, /apis/{group}/{version}, /version, /healthz …
 */
import { findResource, resourcesOf, type ResourceInfo } from '../store/resources.js';

export type Route =
  | { kind: 'health'; path: string }
  | { kind: 'version' }
  | { kind: 'api-versions' }
  | { kind: 'group-list' }
  | { kind: 'group'; group: string }
  | { kind: 'resource-list'; group: string; version: string }
  | { kind: 'resource'; info: ResourceInfo; namespace?: string; name?: string; subresource?: string }
  | { kind: 'not-found' };

const HEALTH = new Set(['/healthz', '/livez', '/readyz']);

/** Paths served without a bearer token, as kube-apiserver allows anonymous health and version checks. */
export function isPublicPath(path: string): boolean {
  return HEALTH.has(path) || path === '/version' || path.startsWith('/healthz/') || path.startsWith('/livez/') || path.startsWith('/readyz/');
}

export function parseRoute(path: string): Route {
  if (isPublicPath(path)) return path === '/version' ? { kind: 'version' } : { kind: 'health', path };
  const raw = path.split('/');
  // Leading '' from the initial slash; a trailing slash leaves one more ''.
  if (raw[raw.length - 1] === '' && raw.length > 2) raw.pop();
  let seg: string[];
  try {
    seg = raw.slice(1).map((s) => decodeURIComponent(s));
  } catch {
    return { kind: 'not-found' };
  }
  let group: string;
  let version: string;
  let rest: string[];
  if (seg[0] === 'api') {
    if (seg.length === 1) return { kind: 'api-versions' };
    group = '';
    version = seg[1];
    rest = seg.slice(2);
  } else if (seg[0] === 'apis') {
    if (seg.length === 1) return { kind: 'group-list' };
    group = seg[1];
    if (seg.length === 2) return resourcesOf(group, 'v1') ? { kind: 'group', group } : { kind: 'not-found' };
    version = seg[2];
    rest = seg.slice(3);
  } else {
    return { kind: 'not-found' };
  }
  if (!resourcesOf(group, version)) return { kind: 'not-found' };
  if (rest.length === 0) return { kind: 'resource-list', group, version };
  let namespace: string | undefined;
  // namespaces/{ns}/{resource}… is a namespaced path; namespaces[/{name}[/status]] is the Namespace resource.
  if (rest[0] === 'namespaces' && rest.length >= 3 && !(group === '' && (rest[2] === 'status' || rest[2] === 'finalize'))) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const info = findResource(group, version, rest[0]);
  if (!info || rest.length > 3) return { kind: 'not-found' };
  if (namespace !== undefined && !info.namespaced) return { kind: 'not-found' };
  const name = rest[1];
  // A namespaced object is only addressable inside its namespace.
  if (name !== undefined && info.namespaced && namespace === undefined) return { kind: 'not-found' };
  if (name === '') return { kind: 'not-found' };
  return { kind: 'resource', info, namespace, name, subresource: rest[2] };
}
