/**
 * Browser sessions of the dashboard: a random id handed out as an HttpOnly cookie after the
 * browser proved it knows `--http-token` (POST /api/v1/session), so that EventSource, which
 * cannot set an Authorization header, and plain fetches authenticate without the token ever
 * being stored by the page or put in a URL.
 *
 * The table keeps SHA-256 digests of the ids, never the ids: a lookup's timing then says nothing
 * about the id, and a heap dump holds no usable cookie. Entries expire after `ttlMs`; the table
 * is bounded, and when full the oldest session is dropped (insertion order of the Map).
 */
import { hash, randomBytes } from 'node:crypto';

export const SESSION_COOKIE = 'fa_session';
export const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60 * 1000;
export const DEFAULT_MAX_SESSIONS = 1024;

export interface SessionTable {
  /** A new session; its id is the cookie value. */
  create(): { id: string; maxAgeS: number };
  /** True when `id` names a session that has not expired. */
  valid(id: string | undefined): boolean;
  /** Ends the session `id` (unknown ids are ignored). */
  remove(id: string | undefined): void;
  size(): number;
}

export function createSessionTable(opts: { ttlMs?: number; max?: number; now?: () => number } = {}): SessionTable {
  const ttlMs = opts.ttlMs ?? DEFAULT_SESSION_TTL_MS;
  const max = opts.max ?? DEFAULT_MAX_SESSIONS;
  const now = opts.now ?? Date.now;
  /** digest of the id → expiry (epoch ms); insertion order is creation order. */
  const sessions = new Map<string, number>();
  const key = (id: string) => hash('sha256', id, 'base64url');

  function sweep(t: number): void {
    for (const [k, expires] of sessions) if (expires <= t) sessions.delete(k);
  }

  return {
    create() {
      const t = now();
      if (sessions.size >= max) sweep(t);
      while (sessions.size >= max) sessions.delete(sessions.keys().next().value!);
      const id = randomBytes(32).toString('base64url');
      sessions.set(key(id), t + ttlMs);
      return { id, maxAgeS: Math.floor(ttlMs / 1000) };
    },
    valid(id) {
      if (id === undefined || id === '' || id.length > 128) return false;
      const k = key(id);
      const expires = sessions.get(k);
      if (expires === undefined) return false;
      if (expires > now()) return true;
      sessions.delete(k);
      return false;
    },
    remove(id) {
      if (id !== undefined && id !== '' && id.length <= 128) sessions.delete(key(id));
    },
    size: () => sessions.size,
  };
}

/** The value of cookie `name` in a Cookie header, undefined when absent. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
