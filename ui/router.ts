/**
 * Hash routes, so every view and filter has a URL to paste (the server serves one shell at `/`):
 * `#/`, `#/not-converged?reason=&side=&groupBy=&sort=&q=`, `#/conflicts`, `#/operations`,
 * `#/nodes?q=`, `#/nodes/<name>`, `#/volumes/<encodeURIComponent(uniqueName)>`. Filters live in
 * the URL only, so back and forward restore them.
 */
import { useEffect, useState } from 'preact/hooks';

export type View = 'summary' | 'not-converged' | 'conflicts' | 'operations' | 'nodes' | 'node' | 'volume' | 'unknown';

export interface Route { view: View; name: string; query: URLSearchParams }

export function parseHash(hash: string): Route {
  const h = hash.replace(/^#/, '') || '/';
  const q = h.indexOf('?');
  const path = q < 0 ? h : h.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : h.slice(q + 1));
  const parts = path.split('/').filter((p) => p !== '');
  const name = parts.length > 1 ? safeDecode(parts.slice(1).join('/')) : '';
  if (parts.length === 0) return { view: 'summary', name, query };
  const first = parts[0];
  if (first === 'nodes') return { view: parts.length > 1 ? 'node' : 'nodes', name, query };
  if (first === 'volumes' && parts.length > 1) return { view: 'volume', name, query };
  if (first === 'not-converged' || first === 'conflicts' || first === 'operations') return { view: first, name, query };
  return { view: 'unknown', name, query };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function withQuery(path: string, query: Record<string, string | undefined> = {}): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') p.set(k, v);
  const s = p.toString();
  return `#${path}${s ? `?${s}` : ''}`;
}

export const href = {
  summary: () => '#/',
  notConverged: (q: Record<string, string | undefined> = {}) => withQuery('/not-converged', q),
  conflicts: () => '#/conflicts',
  operations: () => '#/operations',
  nodes: (q: Record<string, string | undefined> = {}) => withQuery('/nodes', q),
  node: (name: string) => `#/nodes/${encodeURIComponent(name)}`,
  volume: (uniqueName: string) => `#/volumes/${encodeURIComponent(uniqueName)}`,
};

/** Replaces the query of the current route (a new history entry, so back undoes a filter change). */
export function setQuery(route: Route, changes: Record<string, string | undefined>): void {
  const q: Record<string, string | undefined> = Object.fromEntries(route.query);
  Object.assign(q, changes);
  const path = location.hash.replace(/^#/, '').split('?')[0] || '/';
  location.hash = withQuery(path, q).slice(1);
}

export function navigate(to: string): void {
  location.hash = to.replace(/^#/, '');
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}
