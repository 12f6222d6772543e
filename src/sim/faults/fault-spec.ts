/**
 * The `--faults` spec: which faults the simulator injects and how often. One string, so that a
 * flag, an environment variable and the admin endpoint all take the same text.
 *
 * Grammar (whitespace around items is ignored; `none` or the empty string means no faults):
 *
 *   SPEC   := 'none' | ITEM (',' ITEM)*
 *   ITEM   := KIND '=' VALUE (':' OPTION '=' VALUE)*
 *
 * | item                                   | meaning |
 * |----------------------------------------|---------|
 * | `drop-watch=DUR`                       | every open watch stream is cut after a random lifetime with mean DUR (exponential); half are reset (connection destroyed), half end cleanly |
 * | `gone=P`                               | fraction P of list and watch requests is answered 410: lists with an HTTP 410 Expired Status, watches with a 200 stream holding one ERROR event (410 Expired), as kube-apiserver sends for a too-old resourceVersion |
 * | `error500=P[:committed=Q]`             | fraction P of resource requests is answered 500 InternalError; of those that are writes, a fraction Q (default 0.5) is served first and then answered 500 (the write happened, the client cannot know) |
 * | `error429=P[:retry-after=SECONDS]`     | fraction P of resource requests is answered 429 TooManyRequests with `Retry-After` (default 1 s) |
 * | `conflict-node-status=P`               | fraction P of node status writes (PATCH/PUT `nodes/{name}/status`) is answered 409 Conflict |
 * | `latency=DUR` or `latency=MIN..MAX`    | every resource request waits a uniform random time in [MIN, MAX] before it is served |
 * | `attach-fail=P`                        | the CSI attacher fails an attach attempt with probability P (`status.attachError`, retried with backoff) |
 * | `detach-fail=P`                        | the attacher fails a detach attempt with probability P (`status.detachError`, finalizer kept, retried) |
 * | `slow-detach=DUR[:p=P]`                | a fraction P (default 1) of detaches takes DUR longer |
 * | `flap=RATE[:down=DUR]`                 | RATE flaps per second across the fleet: a random Ready node turns NotReady (Ready=Unknown) for DUR (default 3s) |
 * | `delete-node=RATE[:gc=DUR][:rejoin=DUR]` | RATE deletions per second across the fleet of a random Ready node that has volumes attached; after `gc` (default 2s) its pods are force-deleted and recreated on other Ready nodes (pod GC and workload controllers), after `rejoin` (default 15s) the node is created again, empty and Ready |
 * | `churn=RATE`                           | pod changes per second while the spec is active (not a fault: the disturbance faults are measured against; stops with the faults) |
 *
 * P is a fraction in [0, 1]; DUR a Go duration (`500ms`, `30s`, `1m30s`); RATE a non-negative
 * number. Every random draw comes from the injector's seed.
 *
 * @example parseFaultSpec('drop-watch=30s,gone=0.01,error429=0.02:retry-after=1,latency=5ms..50ms,flap=0.5:down=2s')
 */
import { fleetError } from '../../errors/index.js';
import { formatDuration, parseDuration } from '../../cli/duration.js';

export interface FaultSpec {
  dropWatchMs?: number;
  gone?: number;
  error500?: { fraction: number; committed: number };
  error429?: { fraction: number; retryAfterSeconds: number };
  conflictNodeStatus?: number;
  latency?: { minMs: number; maxMs: number };
  attachFail?: number;
  detachFail?: number;
  slowDetach?: { ms: number; fraction: number };
  flap?: { rate: number; downMs: number };
  deleteNode?: { rate: number; gcMs: number; rejoinMs: number };
  churn?: number;
}

/** Counter names, one per fault kind (the soak report's `faults` keys). */
export const FAULT_KINDS = [
  'drop-watch', 'gone', 'error500', 'error429', 'conflict-node-status', 'latency',
  'attach-fail', 'detach-fail', 'slow-detach', 'flap', 'delete-node',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const NO_FAULTS: Readonly<FaultSpec> = Object.freeze({});

const MAX_RATE = 1_000_000;

function bad(item: string, why: string): Error {
  return fleetError('FA_ERR_FLAG_INVALID', `invalid fault spec item "${item}": ${why}`);
}

function fraction(item: string, raw: string): number {
  const v = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(v) || v < 0 || v > 1) throw bad(item, `"${raw}" is not a fraction in [0, 1]`);
  return v;
}

function rate(item: string, raw: string): number {
  const v = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(v) || v < 0 || v > MAX_RATE) throw bad(item, `"${raw}" is not a rate in [0, ${MAX_RATE}] per second`);
  return v;
}

function duration(item: string, raw: string): number {
  const v = parseDuration(raw);
  if (v === undefined || !Number.isFinite(v) || v < 0 || v > 86_400_000) throw bad(item, `"${raw}" is not a duration between 0 and 24h (e.g. 500ms, 30s)`);
  // Microsecond precision: `4.06s` is 4060 ms, not 4059.9999999999995.
  return Math.round(v * 1000) / 1000;
}

/** Parses a spec; throws FA_ERR_FLAG_INVALID naming the offending item. */
export function parseFaultSpec(text: string): FaultSpec {
  const spec: FaultSpec = {};
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === 'none') return spec;
  const seen = new Set<string>();
  for (const rawItem of trimmed.split(',')) {
    const item = rawItem.trim();
    if (item === '') throw bad(rawItem, 'empty item');
    const [head, ...optionParts] = item.split(':');
    const eq = head.indexOf('=');
    if (eq <= 0) throw bad(item, 'expected KIND=VALUE');
    const kind = head.slice(0, eq).trim();
    const value = head.slice(eq + 1).trim();
    if (seen.has(kind)) throw bad(item, `${kind} given twice`);
    seen.add(kind);
    const options = new Map<string, string>();
    for (const part of optionParts) {
      const oeq = part.indexOf('=');
      if (oeq <= 0) throw bad(item, `option "${part}" must be NAME=VALUE`);
      options.set(part.slice(0, oeq).trim(), part.slice(oeq + 1).trim());
    }
    const allow = (...names: string[]) => {
      for (const k of options.keys()) if (!names.includes(k)) throw bad(item, `unknown option "${k}" for ${kind}${names.length ? ` (known: ${names.join(', ')})` : ''}`);
    };
    switch (kind) {
      case 'drop-watch':
        allow();
        spec.dropWatchMs = duration(item, value);
        if (spec.dropWatchMs === 0) throw bad(item, 'the mean watch lifetime must be above 0');
        break;
      case 'gone':
        allow();
        spec.gone = fraction(item, value);
        break;
      case 'error500':
        allow('committed');
        spec.error500 = { fraction: fraction(item, value), committed: fraction(item, options.get('committed') ?? '0.5') };
        break;
      case 'error429': {
        allow('retry-after');
        const ra = options.get('retry-after') ?? '1';
        const secs = Number(ra);
        if (!Number.isInteger(secs) || secs < 0 || secs > 3600) throw bad(item, `retry-after "${ra}" is not a whole number of seconds in [0, 3600]`);
        spec.error429 = { fraction: fraction(item, value), retryAfterSeconds: secs };
        break;
      }
      case 'conflict-node-status':
        allow();
        spec.conflictNodeStatus = fraction(item, value);
        break;
      case 'latency': {
        allow();
        const [lo, hi] = value.includes('..') ? value.split('..') : [value, value];
        const minMs = duration(item, lo);
        const maxMs = duration(item, hi);
        if (maxMs < minMs) throw bad(item, 'the range must be MIN..MAX with MIN ≤ MAX');
        if (maxMs > 60_000) throw bad(item, 'latency above 1m is not a useful fault');
        spec.latency = { minMs, maxMs };
        break;
      }
      case 'attach-fail':
        allow();
        spec.attachFail = fraction(item, value);
        break;
      case 'detach-fail':
        allow();
        spec.detachFail = fraction(item, value);
        break;
      case 'slow-detach':
        allow('p');
        spec.slowDetach = { ms: duration(item, value), fraction: fraction(item, options.get('p') ?? '1') };
        break;
      case 'flap':
        allow('down');
        spec.flap = { rate: rate(item, value), downMs: duration(item, options.get('down') ?? '3s') };
        break;
      case 'delete-node':
        allow('gc', 'rejoin');
        spec.deleteNode = { rate: rate(item, value), gcMs: duration(item, options.get('gc') ?? '2s'), rejoinMs: duration(item, options.get('rejoin') ?? '15s') };
        break;
      case 'churn':
        allow();
        spec.churn = rate(item, value);
        break;
      default:
        throw bad(item, `unknown fault kind "${kind}" (known: ${[...FAULT_KINDS, 'churn'].join(', ')})`);
    }
  }
  return spec;
}

/** The canonical text of a spec (parses back to an equal spec). */
export function formatFaultSpec(s: FaultSpec): string {
  const d = formatDuration;
  const items: string[] = [];
  if (s.dropWatchMs !== undefined) items.push(`drop-watch=${d(s.dropWatchMs)}`);
  if (s.gone !== undefined) items.push(`gone=${s.gone}`);
  if (s.error500) items.push(`error500=${s.error500.fraction}:committed=${s.error500.committed}`);
  if (s.error429) items.push(`error429=${s.error429.fraction}:retry-after=${s.error429.retryAfterSeconds}`);
  if (s.conflictNodeStatus !== undefined) items.push(`conflict-node-status=${s.conflictNodeStatus}`);
  if (s.latency) items.push(`latency=${d(s.latency.minMs)}..${d(s.latency.maxMs)}`);
  if (s.attachFail !== undefined) items.push(`attach-fail=${s.attachFail}`);
  if (s.detachFail !== undefined) items.push(`detach-fail=${s.detachFail}`);
  if (s.slowDetach) items.push(`slow-detach=${d(s.slowDetach.ms)}:p=${s.slowDetach.fraction}`);
  if (s.flap) items.push(`flap=${s.flap.rate}:down=${d(s.flap.downMs)}`);
  if (s.deleteNode) items.push(`delete-node=${s.deleteNode.rate}:gc=${d(s.deleteNode.gcMs)}:rejoin=${d(s.deleteNode.rejoinMs)}`);
  if (s.churn !== undefined) items.push(`churn=${s.churn}`);
  return items.length ? items.join(',') : 'none';
}
