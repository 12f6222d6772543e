/**
 * What a bench reads from a running `fleet-attach run`: the inspection API's summary, the
 * /metrics exposition, and the reflectors' `listed` log lines (pino JSON on stdout: items,
 * bytes and where the list time went, per resource).
 */
import { parsePromText, type PromSample } from './prom-text.js';

export interface SummaryTiming { lastMs: number; p50Ms: number; p99Ms: number; samples: number }

/** The fields of /api/v1/summary the benches read. */
export interface ControllerSummary {
  ready: boolean;
  pairs: { total: number; desired: number; attached: number; uncertain: number; reportedAsAttached: number };
  operations: { pending: number; backoff: number };
  conflicts: number;
  loop: { pass: SummaryTiming; plan: SummaryTiming };
  watches: Array<{ resource: string; synced: boolean; events: number; relists: number; restarts: number }>;
}

export interface ListedLine {
  resource: string;
  /** Log time (epoch ms) at the end of the list. */
  time: number;
  items: number;
  bytes: number;
  pages: number;
  fetchMs: number;
  /** Main-thread parse and projection; with list pages read in workers, `offThreadMs` is theirs. */
  parseMs: number;
  projectMs: number;
  offThreadMs: number;
  totalMs: number;
}

export interface ControllerProbe {
  summary(): Promise<ControllerSummary>;
  metrics(): Promise<PromSample[]>;
}

export function createControllerProbe(url: string): ControllerProbe {
  const get = async (path: string) => {
    // A controller whose event loop is stuck must not hang the bench: the caller decides.
    const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(30_000) });
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
    return res;
  };
  return {
    summary: async () => (await (await get('/api/v1/summary')).json()) as ControllerSummary,
    metrics: async () => parsePromText(await (await get('/metrics')).text()),
  };
}

/** A reflector's `listed` line, or undefined for any other output line. */
export function parseListedLine(line: string): ListedLine | undefined {
  if (!line.includes('"msg":"listed"')) return undefined;
  try {
    const o = JSON.parse(line) as Record<string, unknown>;
    const n = (k: string) => (typeof o[k] === 'number' ? (o[k] as number) : 0);
    if (typeof o.resource !== 'string') return undefined;
    return {
      resource: o.resource, time: n('time'), items: n('items'), bytes: n('bytes'), pages: n('pages'),
      fetchMs: n('fetchMs'), parseMs: n('parseMs'), projectMs: n('projectMs'), offThreadMs: n('offThreadMs'), totalMs: n('totalMs'),
    };
  } catch {
    return undefined;
  }
}

/** The bound URL from the controller's `listening on http://…` log line. */
export function listeningUrl(output: string): string | undefined {
  return /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
}
