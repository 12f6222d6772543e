/**
 * The not-converged index: a time-sliced sweep over every (volume, node) pair that keeps the
 * pairs the decision tree (src/http/waiting-for.ts `diagnose`) does not call settled, with their
 * reason and the time the sweep first saw them so (`since`, kept across sweeps while the pair
 * stays not converged with any reason).
 *
 * Cost: a slice handles nodes until it has seen `slicePairs` pairs (5,000) or spent `sliceMs` (3 ms), then
 * yields to the event loop, so the loop is never held longer than about one slice; a settled pair
 * costs one PairState and two comparisons, a not-converged one a diagnosis. The sweep takes at
 * most `dutyCycle` (10%) of the main thread: after a slice of t ms the next waits t·(1/duty − 1),
 * so a fleet that is mostly not converged (a cold start at 100k nodes: a million diagnoses) is
 * swept slowly rather than taking the reconciler's thread. A new sweep starts `intervalMs` after
 * the previous one started (or at once when a sweep took longer), and only while someone reads the
 * dashboard: with `idleAfterMs`, the index starts idle (no sweep before the first
 * {@link NotConvergedIndex.touch}), and no sweep starts once nothing has touched it for that long
 * (a touch after that starts one at once); the snapshot is then dropped: the
 * first sweep after the touch starts from no pair (`sweptAt` -1 until it ends), so `since` counts
 * from when the dashboard was read again. The snapshot is replaced whole at the end
 * of a sweep: readers never see a half-swept state. Memory: O(not-converged pairs).
 *
 * Never throws from its timers: a failed slice is logged and the sweep starts over next interval.
 */
import type { NodeId, PairState, WorldState } from '../cache/world-state.js';
import type { InspectionView } from '../http/inspection-view.js';
import { nodeFacts, pairFacts, readContext, volumeFacts, type NodeFacts, type ReadContext, type VolumeFacts } from '../http/pair-view.js';
import { diagnose } from '../http/waiting-for.js';
import { logger, type Logger } from '../log/logger.js';
import { REASON_CODES, sideOf, type ReasonCode, type ReasonSide } from './reason-codes.js';

/** One not-converged pair as the sweep saw it. Names, not ids: ids are recycled. */
export interface IndexedPair {
  readonly volume: string;
  readonly node: string;
  readonly side: ReasonSide;
  readonly reason: ReasonCode;
  /** Controller-clock ms: first sweep that saw the pair not converged. */
  readonly since: number;
  /** CSI driver, or the plugin label; absent for volumes without a spec. */
  readonly driver?: string;
  /** Namespace of the first pod wanting the pair (attach side only). */
  readonly namespace?: string;
  /** The diagnosis had an ETA (e.g. a force-detach timer that has started). */
  readonly timed?: true;
}

/** Wait-age buckets: <10 s, 10 s–1 m, 1–6 m, ≥6 m. */
export interface AgeHistogram { readonly lt10s: number; readonly lt1m: number; readonly lt6m: number; readonly ge6m: number }

export interface NotConvergedSnapshot {
  readonly items: readonly IndexedPair[];
  readonly byReason: Readonly<Record<ReasonCode, { readonly count: number; readonly oldestSince?: number }>>;
  readonly attach: number;
  readonly detach: number;
  readonly histogram: AgeHistogram;
  readonly oldestSince?: number;
  /** Changes whenever the set of pairs, a pair's reason, or whether it has an ETA changed; 0 before the first sweep. */
  readonly version: number;
  /** Controller-clock ms at the end of the sweep (-1 before the first). */
  readonly sweptAt: number;
  readonly pairsSeen: number;
  /** Wall time the sweep took, slices and the gaps between them (ms). */
  readonly sweepMs: number;
  /** The longest slice of the sweep (ms): how long it held the event loop at most. */
  readonly maxSliceMs: number;
}

export interface NotConvergedIndex {
  /** Starts the periodic sweeps; idempotent. */
  start(): void;
  stop(): void;
  /** Runs one whole sweep at once (tests, and a first snapshot); cancels a sweep under way. */
  sweepNow(): NotConvergedSnapshot;
  snapshot(): NotConvergedSnapshot;
  /** Someone reads the dashboard: keeps the sweeps going (see `idleAfterMs`). */
  touch(): void;
}

export interface NotConvergedIndexDeps {
  readonly state: WorldState;
  readonly view: InspectionView;
  /** Default 5000 pairs. */
  readonly slicePairs?: number;
  /** Default 3 ms. */
  readonly sliceMs?: number;
  /** Default 1000 ms. */
  readonly intervalMs?: number;
  /** Share of the main thread the sweep may take, in (0, 1]; default 0.1. */
  readonly dutyCycle?: number;
  /** No sweep starts after this long without a touch; default: sweeps never stop. */
  readonly idleAfterMs?: number;
  /** Clock of the touches (ms); default performance.now. */
  readonly now?: () => number;
  readonly log?: Logger;
}

export function createNotConvergedIndex(deps: NotConvergedIndexDeps): NotConvergedIndex {
  return new Sweeper(deps);
}

const KEY_NODE_BITS = 4_194_304; // 2^22 node ids per volume id in a numeric pair key


/** One sweep under way. */
interface Pass {
  cursor: NodeId;
  readonly next: Map<number, IndexedPair>;
  readonly items: IndexedPair[];
  readonly tally: Tally;
  changed: boolean;
  seen: number;
  readonly t0: number;
  maxSliceMs: number;
}

class Sweeper implements NotConvergedIndex {
  private current = summarise([], 0, -1, 0, 0);
  private byKey = new Map<number, IndexedPair>();
  private pass: Pass | undefined;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private running = false;
  private idle = false;
  private lastTouch: number;
  private readonly clock: () => number;
  private readonly log: Logger;

  constructor(private readonly d: NotConvergedIndexDeps) {
    this.log = d.log ?? logger('dashboard');
    this.clock = d.now ?? (() => performance.now());
    // Untouched, an index with idleAfterMs is idle from its start: a cold start's sweep would hold a
    // record per waiting pair (a million at 100k nodes) for nobody.
    this.lastTouch = d.idleAfterMs === undefined ? this.clock() : -Infinity;
  }

  touch(): void {
    this.lastTouch = this.clock();
    if (!this.idle || !this.running) return;
    this.idle = false;
    if (this.timer) clearTimeout(this.timer);
    this.schedule(0);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    this.pass = undefined;
  }

  snapshot(): NotConvergedSnapshot {
    return this.current;
  }

  sweepNow(): NotConvergedSnapshot {
    this.pass = this.newPass();
    while (!this.slice(Infinity, Infinity));
    return this.current;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const idleAfter = this.d.idleAfterMs;
      if (idleAfter !== undefined && this.clock() - this.lastTouch > idleAfter) {
        // touch() starts the next sweep. The last snapshot goes: unread, it would only grow stale
        // while holding a record per pair that was waiting then (a cold start's million).
        this.idle = true;
        this.current = summarise([], this.current.version + 1, -1, 0, 0);
        this.byKey = new Map();
        return;
      }
      this.pass = this.newPass();
      this.runSlices();
    }, Math.max(0, delayMs));
    this.timer.unref?.();
  }

  private runSlices(): void {
    if (!this.running) return;
    // sweepNow took over the sweep under way: wait for the next interval.
    if (!this.pass) return this.schedule(this.d.intervalMs ?? 1000);
    let done: boolean;
    const t0 = performance.now();
    try {
      done = this.slice(this.d.slicePairs ?? 5000, this.d.sliceMs ?? 3);
    } catch (err) {
      this.log.error({ err }, 'not-converged sweep failed');
      this.pass = undefined;
      done = true;
    }
    if (!done) {
      const duty = Math.min(1, Math.max(0.01, this.d.dutyCycle ?? 0.1));
      const rest = (performance.now() - t0) * (1 / duty - 1);
      if (rest < 1) {
        this.immediate = setImmediate(() => {
          this.immediate = undefined;
          this.runSlices();
        });
      } else {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.runSlices();
        }, rest);
        this.timer.unref?.();
      }
      return;
    }
    const took = this.current.sweepMs;
    if (this.running) this.schedule((this.d.intervalMs ?? 1000) - took);
  }

  private newPass(): Pass {
    return { cursor: -1, next: new Map(), items: [], tally: new Tally(), changed: false, seen: 0, t0: performance.now(), maxSliceMs: 0 };
  }

  /** Handles nodes until a budget is spent; true once the sweep has ended (snapshot replaced). */
  private slice(maxPairs: number, maxMs: number): boolean {
    const pass = this.pass;
    if (!pass) return true;
    const { state, view } = this.d;
    const ctx = readContext(state, view);
    const t0 = performance.now();
    let pairs = 0;
    // The budget is checked before each node: a slice overruns it by one node's pairs at most.
    const spent = () => pairs >= maxPairs || performance.now() - t0 >= maxMs;
    while (!spent()) {
      const ids = state.nodeIds(pass.cursor, 64);
      if (ids.length === 0) {
        pass.maxSliceMs = Math.max(pass.maxSliceMs, performance.now() - t0);
        this.finish(pass, ctx.now);
        return true;
      }
      for (const id of ids) {
        if (spent()) break;
        pass.cursor = id;
        const nf = nodeFacts(state, id);
        if (!nf) continue;
        state.forEachPairOfNode(id, (p) => {
          pairs++;
          this.visit(ctx, pass, p, nf);
        });
      }
    }
    pass.maxSliceMs = Math.max(pass.maxSliceMs, performance.now() - t0);
    return false;
  }

  private visit(ctx: ReadContext, pass: Pass, p: PairState, nf: NodeFacts): void {
    pass.seen++;
    const desired = p.desiredPods > 0;
    // Settled without a diagnosis: desired, attached and reported; or gone with no operation.
    if (desired && p.attachState === 'attached' && p.reportedAttached) return;
    if (!desired && p.attachState === 'detached' && ctx.view.pendingOperation(p.volume, p.node)?.node !== p.node) return;
    const vf: VolumeFacts = volumeFacts(ctx.state, p.volume);
    const d = diagnose(pairFacts(ctx, p, nf, vf), ctx.now, ctx.options);
    if (d === undefined) return;
    const key = p.volume * KEY_NODE_BITS + p.node;
    const prev = this.byKey.get(key);
    const same = prev !== undefined && prev.volume === vf.name && prev.node === nf.name;
    const timed = d.etaMs !== undefined;
    if (same && prev.reason === d.reason && (prev.timed === true) === timed) {
      // Unchanged: the previous sweep's record is kept (its driver and namespace as first seen).
      this.keep(pass, key, prev, ctx.now);
      return;
    }
    pass.changed = true;
    const item: { -readonly [K in keyof IndexedPair]: IndexedPair[K] } = {
      volume: vf.name, node: nf.name, side: sideOf(d.reason), reason: d.reason, since: same ? prev.since : ctx.now,
    };
    const driver = vf.info?.csi?.driver ?? vf.info?.plugin;
    if (driver !== undefined) item.driver = driver;
    if (timed) item.timed = true;
    if (desired) {
      const uids = ctx.state.desiredPods(p.volume, p.node);
      const ns = uids.length > 0 ? ctx.view.podName(uids[0])?.namespace : undefined;
      if (ns !== undefined) item.namespace = ns;
    }
    this.keep(pass, key, item, ctx.now);
  }

  private keep(pass: Pass, key: number, item: IndexedPair, now: number): void {
    pass.next.set(key, item);
    pass.items.push(item);
    pass.tally.add(item, now);
  }

  private finish(pass: Pass, now: number): void {
    const changed = pass.changed || pass.next.size !== this.byKey.size;
    this.byKey = pass.next;
    const version = changed || this.current.sweptAt < 0 ? this.current.version + 1 : this.current.version;
    this.current = pass.tally.snapshot(pass.items, version, now, pass.seen, performance.now() - pass.t0, pass.maxSliceMs);
    this.pass = undefined;
  }
}

/** Counts by reason, wait-age histogram and oldest wait, accumulated pair by pair (so a sweep's end is O(1)). */
export class Tally {
  private readonly byReason = Object.fromEntries(REASON_CODES.map((c) => [c, { count: 0 }])) as Record<ReasonCode, { count: number; oldestSince?: number }>;
  private readonly h = { lt10s: 0, lt1m: 0, lt6m: 0, ge6m: 0 };
  private attach = 0;
  private oldest: number | undefined;

  add(it: IndexedPair, now: number): void {
    const r = this.byReason[it.reason];
    r.count++;
    if (r.oldestSince === undefined || it.since < r.oldestSince) r.oldestSince = it.since;
    if (this.oldest === undefined || it.since < this.oldest) this.oldest = it.since;
    if (it.side === 'attach') this.attach++;
    const age = now - it.since;
    if (age < 10_000) this.h.lt10s++;
    else if (age < 60_000) this.h.lt1m++;
    else if (age < 360_000) this.h.lt6m++;
    else this.h.ge6m++;
  }

  snapshot(items: IndexedPair[], version: number, now: number, seen: number, sweepMs: number, maxSliceMs: number): NotConvergedSnapshot {
    const out = { items, byReason: this.byReason, attach: this.attach, detach: items.length - this.attach, histogram: this.h, version, sweptAt: now, pairsSeen: seen, sweepMs, maxSliceMs };
    return this.oldest === undefined ? out : { ...out, oldestSince: this.oldest };
  }
}

/** Counts, histogram and oldest wait of a set of not-converged pairs at `now`. */
export function summarise(items: IndexedPair[], version: number, now: number, seen: number, sweepMs: number, maxSliceMs = 0): NotConvergedSnapshot {
  const tally = new Tally();
  for (const it of items) tally.add(it, now);
  return tally.snapshot(items, version, now, seen, sweepMs, maxSliceMs);
}
