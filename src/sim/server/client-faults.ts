/**
 * Per-client faults: partitions one client (a controller replica) from the simulated API
 * server while the others carry on. A rule names a client by its authenticated user name
 * and/or a substring of its User-Agent, and says what its requests get:
 *
 * - `delay`: served after `ms`;
 * - `deny`: answered with a Status of `code` (403, 429, 500, 503 …) instead of served;
 * - `blackhole`: accepted and never answered while the rule holds; served once it is lifted
 *   (as a partition's retransmitted request arrives late), or dropped when the client gives up;
 * - `lag`: requests are served as usual, but every frame of the client's watch streams (events
 *   and bookmarks, and the end of the stream) reaches it `ms` late, in order and none dropped:
 *   a replica whose watch cache trails the others. Watches opened while the rule holds lag from
 *   their first frame; lifting the rule delivers what waits at its due time, then the streams
 *   are live. Lagged frames count against the server's watch backlog bound
 *   (`maxWatchBacklogBytes`, 64 MiB): past it the stream is cut off as a slow watcher's is, and
 *   the client watches again from the last resourceVersion it saw (410 Gone, and a relist, if
 *   the watch window no longer holds it).
 *
 * A partition cuts both ways: the API server ends a denied client's open watches and holds a
 * black-holed one's (nothing more reaches it, bookmarks included, and the stream ends once the
 * rule is lifted, so the client resumes from the last event it saw); a lagging watch that is
 * ended (by a deny rule, its timeout) ends once the frames it is owed are out. The first
 * matching rule applies; rules change at run time, in-process or over `/debug/faults`
 * (api-server.ts).
 */
import type { FaultHooks, RequestFacts } from './faults.js';
import { MAX_TIMER_MS } from '../../cli/flags.js';
import { ApiError, badRequest, type StatusReason } from './status.js';

export type ClientFaultAction = { kind: 'delay'; ms: number } | { kind: 'deny'; code: number } | { kind: 'blackhole' } | { kind: 'lag'; ms: number };


export interface ClientMatch {
  /** The authenticated user name, exactly. */
  user?: string;
  /** A substring of the User-Agent header. */
  userAgent?: string;
}

export interface ClientFaultRule extends ClientMatch {
  action: ClientFaultAction;
}

export interface Client {
  user: string;
  userAgent: string | undefined;
}

export interface ClientFaults extends FaultHooks {
  /** Adds a rule, replacing one with the same match. */
  set(rule: ClientFaultRule): void;
  /** Removes the rule with this match, or every rule. */
  clear(match?: ClientMatch): void;
  rules(): ClientFaultRule[];
  /** What a client's requests get now. */
  actionFor(client: Client): ClientFaultAction | undefined;
  /** Called after every change of the rules; returns the unsubscribe function. */
  onChange(fn: () => void): () => void;
  /** Applies the client's rule to a request: delays, denies, or holds it while black-holed (a lag is the watch streams' business). */
  beforeRequest(facts: RequestFacts): Promise<ApiError | undefined>;
}

const REASONS: Record<number, StatusReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

const sameMatch = (a: ClientMatch, b: ClientMatch) => (a.user ?? undefined) === (b.user ?? undefined) && (a.userAgent ?? undefined) === (b.userAgent ?? undefined);

function matches(rule: ClientMatch, c: Client): boolean {
  if (rule.user !== undefined && rule.user !== c.user) return false;
  if (rule.userAgent !== undefined && !(c.userAgent ?? '').includes(rule.userAgent)) return false;
  return true;
}

/** Checks a rule from outside (the debug endpoint); throws 400 BadRequest naming what is wrong. */
export function parseClientFaultRule(raw: unknown): ClientFaultRule {
  const r = (raw ?? {}) as Record<string, unknown>;
  const a = (r.action ?? {}) as Record<string, unknown>;
  const user = typeof r.user === 'string' && r.user !== '' ? r.user : undefined;
  const userAgent = typeof r.userAgent === 'string' && r.userAgent !== '' ? r.userAgent : undefined;
  if (user === undefined && userAgent === undefined) throw badRequest('a client fault rule needs "user" or "userAgent"');
  let action: ClientFaultAction;
  if (a.kind === 'delay' && typeof a.ms === 'number' && a.ms >= 0) action = { kind: 'delay', ms: a.ms };
  else if (a.kind === 'deny' && typeof a.code === 'number' && Number.isInteger(a.code) && a.code >= 400 && a.code <= 599) action = { kind: 'deny', code: a.code };
  else if (a.kind === 'blackhole') action = { kind: 'blackhole' };
  else if (a.kind === 'lag' && typeof a.ms === 'number' && a.ms >= 0 && a.ms <= MAX_TIMER_MS) action = { kind: 'lag', ms: a.ms };
  else throw badRequest(`"action" must be {"kind":"delay","ms":N}, {"kind":"deny","code":4xx|5xx}, {"kind":"blackhole"} or {"kind":"lag","ms":0..${MAX_TIMER_MS}}`);
  return { ...(user !== undefined ? { user } : {}), ...(userAgent !== undefined ? { userAgent } : {}), action };
}

export function createClientFaults(): ClientFaults {
  let rules: ClientFaultRule[] = [];
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const fn of [...listeners]) fn();
  };
  const actionFor = (c: Client) => rules.find((r) => matches(r, c))?.action;

  /** Resolves when the rules change or the client goes away. */
  const nextChange = (signal: AbortSignal | undefined) =>
    new Promise<void>((resolve) => {
      const done = () => {
        off();
        signal?.removeEventListener('abort', done);
        resolve();
      };
      listeners.add(done);
      const off = () => listeners.delete(done);
      signal?.addEventListener('abort', done);
    });

  return {
    set(rule) {
      rules = [...rules.filter((r) => !sameMatch(r, rule)), rule];
      changed();
    },
    clear(match) {
      rules = match ? rules.filter((r) => !sameMatch(r, match)) : [];
      changed();
    },
    rules: () => rules.map((r) => ({ ...r, action: { ...r.action } })),
    actionFor,
    onChange(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    async beforeRequest(facts: RequestFacts) {
      if (facts.user === undefined) return undefined;
      const client = { user: facts.user, userAgent: facts.userAgent };
      for (;;) {
        const action = actionFor(client);
        if (action === undefined || action.kind === 'lag') return undefined;
        if (action.kind === 'delay') {
          await new Promise((r) => setTimeout(r, action.ms));
          return undefined;
        }
        if (action.kind === 'deny') return new ApiError(action.code, REASONS[action.code] ?? 'InternalError', `the simulator denies requests of ${facts.user} (client fault rule)`);
        if (facts.signal?.aborted) return new ApiError(503, 'ServiceUnavailable', 'the client went away while black-holed');
        await nextChange(facts.signal);
      }
    },
  };
}
