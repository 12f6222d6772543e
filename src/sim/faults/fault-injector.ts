/**
 * The fault injector: one seeded source of every fault decision, built from a {@link FaultSpec}
 * that may be replaced while the simulator runs. The fault front (fault-front.ts) asks it about
 * each API request; the fleet actors consult it through {@link FleetFaults}; it counts every
 * fault it injects, per kind.
 *
 * It is also a {@link FaultHooks} (the API server's per-request seam), for in-process tests
 * without the front: there, `gone` on a watch is an HTTP 410, 429s carry `details.retryAfterSeconds`
 * but no Retry-After header, and watch drops and committed-then-failed writes are not available.
 */
import type { FleetFaults } from '../actors/fleet-faults.js';
import { createPrng, type Prng } from '../actors/prng.js';
import type { FaultHooks, RequestFacts } from '../server/faults.js';
import { ApiError } from '../server/status.js';
import { FAULT_KINDS, formatFaultSpec, parseFaultSpec, type FaultKind, type FaultSpec } from './fault-spec.js';

/** What to do with one API request instead of serving it normally. */
export interface RequestFault {
  kind: Extract<FaultKind, 'gone' | 'error500' | 'error429' | 'conflict-node-status'>;
  /** The Status to answer with. */
  error: ApiError;
  /** 429: the `Retry-After` header, seconds. */
  retryAfterSeconds?: number;
  /** Serve the request first, then answer with the error (the write happened; the client does not know). */
  afterServing: boolean;
}

export interface FaultInjector extends FaultHooks, FleetFaults {
  /** The spec now in force. */
  spec(): FaultSpec;
  /** Replaces the spec (text is parsed; a bad text throws FA_ERR_FLAG_INVALID and changes nothing). */
  set(spec: FaultSpec | string): void;
  /** Faults injected so far, per kind (every kind present, zeros included). */
  counts(): Record<FaultKind, number>;
  /** The fault for one resource request, or undefined to serve it. Counts what it returns. */
  decide(facts: RequestFacts): RequestFault | undefined;
  /** Added latency for one request, milliseconds (0 when off). Counts non-zero delays. */
  latencyMs(): number;
  /**
   * When to cut one watch stream and how (`abrupt`: connection destroyed; else the stream ends
   * cleanly), or undefined to leave it alone. The caller counts the drop when it happens.
   */
  watchDrop(): { afterMs: number; abrupt: boolean } | undefined;
  /** Counts one fault carried out by the caller (a dropped watch). */
  count(kind: FaultKind): void;
}

export interface FaultInjectorOptions {
  spec?: FaultSpec | string;
  /** Seed of every draw (default 1). */
  seed?: number;
}

/**
 * @example const faults = createFaultInjector({ spec: 'error500=0.05,drop-watch=10s', seed: 7 });
 *          await startSimulator({ faultInjection: faults }); … faults.set('none');
 */
export function createFaultInjector(opts: FaultInjectorOptions = {}): FaultInjector {
  return new Injector(opts);
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

class Injector implements FaultInjector {
  private current: FaultSpec;
  private readonly prng: Prng;
  private readonly counters = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;

  constructor(opts: FaultInjectorOptions) {
    this.current = toSpec(opts.spec ?? {});
    this.prng = createPrng(opts.seed ?? 1).fork('faults');
  }

  spec(): FaultSpec {
    return structuredClone(this.current);
  }

  set(spec: FaultSpec | string): void {
    this.current = toSpec(spec);
  }

  counts(): Record<FaultKind, number> {
    return { ...this.counters };
  }

  count(kind: FaultKind): void {
    this.counters[kind]++;
  }

  decide(f: RequestFacts): RequestFault | undefined {
    const s = this.current;
    const p = this.prng;
    const write = WRITE_VERBS.has(f.verb);
    if ((f.verb === 'list' || f.verb === 'watch') && p.chance(s.gone ?? 0)) {
      this.counters.gone++;
      return { kind: 'gone', error: new ApiError(410, 'Expired', 'too old resource version (injected fault)'), afterServing: false };
    }
    if (f.resource === 'nodes' && f.subresource === 'status' && (f.verb === 'patch' || f.verb === 'update') && p.chance(s.conflictNodeStatus ?? 0)) {
      this.counters['conflict-node-status']++;
      const error = new ApiError(409, 'Conflict', `Operation cannot be fulfilled on nodes "${f.name ?? ''}": the object has been modified; please apply your changes to the latest version and try again (injected fault)`);
      return { kind: 'conflict-node-status', error, afterServing: false };
    }
    if (s.error500 && p.chance(s.error500.fraction)) {
      this.counters.error500++;
      const afterServing = write && p.chance(s.error500.committed);
      return { kind: 'error500', error: new ApiError(500, 'InternalError', 'Internal error occurred: injected fault'), afterServing };
    }
    if (s.error429 && p.chance(s.error429.fraction)) {
      this.counters.error429++;
      const retryAfterSeconds = s.error429.retryAfterSeconds;
      const error = new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later (injected fault)', { retryAfterSeconds });
      return { kind: 'error429', error, retryAfterSeconds, afterServing: false };
    }
    return undefined;
  }

  latencyMs(): number {
    const l = this.current.latency;
    if (!l || l.maxMs <= 0) return 0;
    this.counters.latency++;
    return l.minMs + this.prng.float() * (l.maxMs - l.minMs);
  }

  watchDrop(): { afterMs: number; abrupt: boolean } | undefined {
    const mean = this.current.dropWatchMs;
    return mean === undefined ? undefined : { afterMs: this.prng.exponential(mean), abrupt: this.prng.chance(0.5) };
  }

  async beforeRequest(f: RequestFacts): Promise<ApiError | undefined> {
    const delay = this.latencyMs();
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    return this.decide(f)?.error;
  }

  // FleetFaults: the actors' knobs.

  attachFails(): boolean {
    if (!this.prng.chance(this.current.attachFail ?? 0)) return false;
    this.counters['attach-fail']++;
    return true;
  }

  detachFails(): boolean {
    if (!this.prng.chance(this.current.detachFail ?? 0)) return false;
    this.counters['detach-fail']++;
    return true;
  }

  extraDetachMs(): number {
    const slow = this.current.slowDetach;
    if (!slow || slow.ms <= 0 || !this.prng.chance(slow.fraction)) return 0;
    this.counters['slow-detach']++;
    return slow.ms;
  }

  flap(): { rate: number; downMs: number } | undefined {
    return this.current.flap;
  }

  nodeDeletion(): { rate: number; gcMs: number; rejoinMs: number } | undefined {
    return this.current.deleteNode;
  }

  churnRate(): number {
    return this.current.churn ?? 0;
  }
}

function toSpec(spec: FaultSpec | string): FaultSpec {
  // Round-tripping an object through the grammar validates it the same way as text.
  return parseFaultSpec(typeof spec === 'string' ? spec : formatFaultSpec(spec));
}
