/**
 * Which node buckets this replica acts on: a level-triggered loop that claims the buckets whose
 * target (rendezvous over the stable Ready members) is this replica and releases, after
 * draining, the ones whose target is another member. One pass per retry period and on every
 * membership change.
 *
 * Guarantees:
 * - `mayAct(node)` is true only while all hold: this replica's own compare-and-swap made it the
 *   holder of the node's bucket Lease, it has not started releasing the bucket, `warmUp` has
 *   completed since that claim, and the membership is live (renewed within renewDeadline on
 *   the monotonic clock). It is O(1) and allocation-free: it is asked before every API write.
 * - Never two owners: a bucket changes holder only by CAS (bucket-leases.ts). A replica claims a
 *   bucket only when its Lease is absent, free, or held by a member that can never act again
 *   (fenced or released, membership.ts); an owner frees it only after `drain(bucket)` resolved,
 *   i.e. after the controller stopped starting operations for the bucket's nodes, waited for its
 *   calls in flight and flushed their status writes. A replica that is not live writes nothing.
 * - A claim whose answer was lost leaves the Lease naming us with nothing acting on it: the next
 *   pass claims it again by CAS (a new epoch) when it is ours to own, or frees it by CAS.
 * - The loop never throws: a bucket whose claim, warm-up, drain or release fails is logged and
 *   tried again next pass. CAS writes run with bounded concurrency.
 * - `stop()` drains and releases every bucket held, then releases the membership, so that
 *   successors claim at once instead of waiting for the fence.
 */
import { logger } from '../log/logger.js';
import { isConflict } from '../kube/kube-errors.js';
import type { LeaseRecord } from '../kube/projections/lease.js';
import { sleep } from '../kube/sleep.js';
import { assignTargets } from './assignment.js';
import { bucketOf, DEFAULT_BUCKETS } from './bucket-hash.js';
import { createBucketLeases, type BucketLeases } from './bucket-leases.js';
import type { ShardLeaseApi } from './lease-api.js';
import type { Membership } from './membership.js';
import { runBounded } from './run-bounded.js';

export interface ShardCoordinatorOptions {
  api: ShardLeaseApi;
  namespace: string;
  /** This replica's membership; the coordinator starts and stops it. */
  membership: Membership;
  /** Default {@link DEFAULT_BUCKETS}; every replica must use the same number. */
  buckets?: number;
  /** Stop starting operations for the bucket's nodes, wait for calls in flight, flush status writes. */
  drain(bucket: number): Promise<void>;
  /** Rebuild the bucket's state from the API; the bucket acts once it resolves. Must time out on its own. */
  warmUp(bucket: number): Promise<void>;
  /** A bucket started (true) or stopped (false) acting. */
  onChange?(bucket: number, acting: boolean): void;
  /** Default 2 s. */
  retryPeriodMs?: number;
  /** Bucket Lease writes in flight at once (default 16). */
  maxConcurrentWrites?: number;
}

export interface ShardCoordinator {
  /** Runs the membership and the loop until stop(); never rejects. */
  start(): Promise<void>;
  /** One level-triggered pass (the loop's step; tests drive it). Never rejects. */
  pass(): Promise<void>;
  /** O(1), allocation-free: this replica may write for `nodeName` now. */
  mayAct(nodeName: string): boolean;
  mayActOnBucket(bucket: number): boolean;
  /**
   * O(1): this replica holds the node's bucket (warming up, acting or draining it) and is live.
   * Writes that finish what was started (a drain's status flush) may go on while it holds.
   */
  holds(nodeName: string): boolean;
  bucketOf(nodeName: string): number;
  /** Buckets acting now, ascending. */
  ownedBuckets(): number[];
  /** Fencing token of our ownership of `bucket` (its Lease's leaseTransitions); 0 when not held. */
  epoch(bucket: number): number;
  /** Drains and releases all buckets, then the membership. Idempotent. */
  stop(): Promise<void>;
}

const NONE = 0;
const WARMING = 1;
const ACTING = 2;
const RELEASING = 3;

export function createShardCoordinator(opts: ShardCoordinatorOptions): ShardCoordinator {
  const buckets = opts.buckets ?? DEFAULT_BUCKETS;
  if (!Number.isInteger(buckets) || buckets < 1 || buckets >= 2 ** 21) throw new RangeError('sharding: buckets must be an integer in [1, 2^21)');
  return new LeaseShardCoordinator(opts, buckets);
}

class LeaseShardCoordinator implements ShardCoordinator {
  private readonly log = logger('sharding');
  private readonly leases: BucketLeases;
  private readonly me: string;
  private readonly state: Uint8Array;
  /** A claim, warm-up or release of the bucket is under way. */
  private readonly busy: Uint8Array;
  private readonly epochs: Float64Array;
  /** Our last written record of each bucket we hold (the CAS guard of its release). */
  private readonly held: Array<LeaseRecord | undefined>;
  private readonly warmUps = new Map<number, Promise<void>>();
  private targets: string[] = [];
  private readyKey: string | undefined;
  private passing: Promise<void> | undefined;
  private running: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private stopped = false;
  private lostSeen = false;
  private readonly abort = new AbortController();
  private wake: (() => void) | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly opts: ShardCoordinatorOptions,
    private readonly buckets: number,
  ) {
    this.me = opts.membership.identity;
    this.leases = createBucketLeases({ api: opts.api, namespace: opts.namespace, buckets });
    this.state = new Uint8Array(buckets);
    this.busy = new Uint8Array(buckets);
    this.epochs = new Float64Array(buckets);
    this.held = new Array<LeaseRecord | undefined>(buckets).fill(undefined);
    this.unsubscribe = opts.membership.subscribe(() => this.membershipChanged());
  }

  start(): Promise<void> {
    this.running ??= (async () => {
      void this.opts.membership.start();
      const signal = this.abort.signal;
      while (!signal.aborted) {
        await this.pass();
        const woken = new Promise<void>((r) => (this.wake = r));
        await Promise.race([sleep(this.opts.retryPeriodMs ?? 2_000, signal), woken]);
        this.wake = undefined;
      }
    })();
    return this.running;
  }

  pass(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.passing ??= this.runPass()
      .catch((err: unknown) => this.log.error({ err }, 'sharding pass failed'))
      .finally(() => (this.passing = undefined));
    return this.passing;
  }

  mayAct(nodeName: string): boolean {
    return this.state[bucketOf(nodeName, this.buckets)] === ACTING && this.opts.membership.isLive();
  }

  mayActOnBucket(bucket: number): boolean {
    return this.state[bucket] === ACTING && this.opts.membership.isLive();
  }

  holds(nodeName: string): boolean {
    return this.state[bucketOf(nodeName, this.buckets)] !== NONE && this.opts.membership.isLive();
  }

  bucketOf(nodeName: string): number {
    return bucketOf(nodeName, this.buckets);
  }

  ownedBuckets(): number[] {
    const out: number[] = [];
    if (!this.opts.membership.isLive()) return out;
    for (let b = 0; b < this.buckets; b++) if (this.state[b] === ACTING) out.push(b);
    return out;
  }

  epoch(bucket: number): number {
    return this.state[bucket] === NONE ? 0 : (this.epochs[bucket] as number);
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopped = true;
      this.abort.abort();
      this.wake?.();
      await this.passing;
      await this.running;
      const held: number[] = [];
      for (let b = 0; b < this.buckets; b++) if (this.state[b] !== NONE) held.push(b);
      await runBounded(held.map((b) => () => this.release(b, 'stopping')), this.concurrency(), (err) => this.log.warn({ err }, 'release on stop failed'));
      this.unsubscribe?.();
      await this.opts.membership.stop();
    })();
    return this.stopping;
  }

  private concurrency(): number {
    return this.opts.maxConcurrentWrites ?? 16;
  }

  private membershipChanged(): void {
    if (this.opts.membership.lost() !== undefined && !this.stopping && !this.lostSeen) {
      this.lostSeen = true;
      // Not live: nothing acts any more (mayAct already says so); the buckets stay ours on the
      // server until a peer fences our membership.
      for (let b = 0; b < this.buckets; b++) if (this.state[b] === ACTING) this.notify(b, false);
    }
    this.wake?.();
  }

  private async runPass(): Promise<void> {
    const m = this.opts.membership;
    if (!m.isLive()) return;
    let listed: Array<LeaseRecord | undefined>;
    try {
      listed = await this.leases.list();
    } catch (err) {
      this.log.warn({ err }, 'listing bucket leases failed; next pass retries');
      return;
    }
    if (!m.isLive() || this.stopped) return;
    const ready = m.readyMembers();
    const key = ready.join(',');
    if (key !== this.readyKey) {
      this.readyKey = key;
      this.targets = assignTargets(ready, this.buckets);
      this.log.info({ members: ready }, 'bucket targets recomputed');
    }
    const tasks: Array<() => Promise<void>> = [];
    for (let b = 0; b < this.buckets; b++) {
      if (this.busy[b]) continue;
      const target = this.targets[b] ?? '';
      const toOther = target !== '' && target !== this.me;
      const st = this.state[b];
      if (st === ACTING || st === WARMING || st === RELEASING) {
        if (toOther) tasks.push(() => this.release(b, `target ${target}`));
        else if (st !== ACTING) this.warm(b);
        continue;
      }
      const rec = listed[b];
      const holder = rec?.holderIdentity ?? '';
      if (target === this.me && (holder === '' || holder === this.me || m.isGone(holder))) tasks.push(() => this.claim(b, rec));
      else if (holder === this.me && rec) tasks.push(() => this.freeUnused(b, rec));
    }
    await runBounded(tasks, this.concurrency(), (err) => this.log.warn({ err }, 'bucket task failed'));
  }

  private async claim(b: number, seen: LeaseRecord | undefined): Promise<void> {
    if (!this.opts.membership.isLive()) return;
    this.busy[b] = 1;
    try {
      const rec = await this.leases.claim(b, seen, this.me);
      this.held[b] = rec;
      this.epochs[b] = rec.leaseTransitions;
      this.state[b] = WARMING;
      this.log.debug({ bucket: b, epoch: rec.leaseTransitions, from: seen?.holderIdentity ?? '' }, 'claimed bucket');
    } catch (err) {
      if (!isConflict(err)) this.log.warn({ err, bucket: b }, 'claiming bucket failed; next pass retries');
      return;
    } finally {
      this.busy[b] = 0;
    }
    this.warm(b);
  }

  /** Starts the warm-up of a claimed bucket unless one runs; it acts when the warm-up resolves. */
  private warm(b: number): void {
    if (this.stopping || this.state[b] === ACTING || this.warmUps.has(b)) return;
    this.state[b] = WARMING;
    const epoch = this.epochs[b];
    const run = (async () => {
      try {
        await this.opts.warmUp(b);
        if (this.state[b] === WARMING && this.epochs[b] === epoch && !this.stopping) {
          this.state[b] = ACTING;
          this.notify(b, true);
        }
      } catch (err) {
        this.log.warn({ err, bucket: b }, 'bucket warm-up failed; next pass retries');
      } finally {
        this.warmUps.delete(b);
      }
    })();
    this.warmUps.set(b, run);
  }

  /** Stops acting on `b` at once, drains it, then frees its Lease by CAS. */
  private async release(b: number, why: string): Promise<void> {
    if (this.busy[b]) return;
    this.busy[b] = 1;
    try {
      if (this.state[b] === ACTING) this.notify(b, false);
      this.state[b] = RELEASING;
      await this.warmUps.get(b);
      try {
        await this.opts.drain(b);
      } catch (err) {
        this.log.warn({ err, bucket: b }, 'draining bucket failed; next pass retries');
        return;
      }
      const held = this.held[b];
      if (!held) return this.forget(b);
      try {
        await this.leases.release(held);
        this.log.debug({ bucket: b, why }, 'released bucket');
        this.forget(b);
      } catch (err) {
        if (!isConflict(err)) {
          this.log.warn({ err, bucket: b }, 'releasing bucket failed; next pass retries');
          return;
        }
        const cur = await this.leases.get(b);
        if (cur?.holderIdentity === this.me) this.held[b] = cur;
        else {
          this.log.error({ bucket: b, holder: cur?.holderIdentity }, 'bucket was taken from us while we held it');
          this.forget(b);
        }
      }
    } finally {
      this.busy[b] = 0;
    }
  }

  /** Frees a Lease naming us that nothing here acts on (a claim whose answer was lost). */
  private async freeUnused(b: number, rec: LeaseRecord): Promise<void> {
    if (!this.opts.membership.isLive()) return;
    this.busy[b] = 1;
    try {
      await this.leases.release(rec);
    } catch (err) {
      if (!isConflict(err)) this.log.warn({ err, bucket: b }, 'freeing bucket failed; next pass retries');
    } finally {
      this.busy[b] = 0;
    }
  }

  private forget(b: number): void {
    this.state[b] = NONE;
    this.held[b] = undefined;
    this.epochs[b] = 0;
  }

  private notify(b: number, acting: boolean): void {
    try {
      this.opts.onChange?.(b, acting);
    } catch (err) {
      this.log.error({ err, bucket: b }, 'onChange threw');
    }
  }
}
