/**
 * ShardRoles: what one replica of several does (`--sharding`): it holds the node buckets its
 * membership wins (src/sharding) and acts on their nodes only.
 *
 * - The state holds adopted buckets' nodes only (`ownsNode`: node events of the others are not
 *   applied, so their pods stay out of the desired state). A claimed bucket is adopted by
 *   NodeHandover (its nodes' actual state from their status and VolumeAttachments, then their
 *   pods) before it acts; buckets claimed together are adopted in one walk.
 * - `mayStart(node)`: operations start only on nodes of acting buckets (claimed, warmed up, not
 *   draining, membership live). `holds(node)`: writes that finish what was started (the status
 *   write that flushes a draining bucket) go on while the bucket is still held.
 * - A drain stops operations at once (mayStart turns false first), then waits until the bucket's
 *   nodes are quiet and drops them from the state; the coordinator then frees the bucket Lease.
 *   A drain that does not get quiet within `drainTimeoutMs` fails and the bucket stays held
 *   (and idle) until a later pass drains it.
 * - Losing the membership (renew deadline passed, or fenced by a peer) ends acting for good:
 *   `onLost` asks for a restart, as losing the leader lease does.
 * - The attach lock sweep (src/sharding/lock-sweep.ts) runs after each adoption and every
 *   `lockSweepMs` while started, over the buckets acting then.
 */
import type { KubeApiClient } from '../kube/api-client.js';
import type { Logger } from '../log/logger.js';
import type { NodeHandover } from '../populator/node-handover.js';
import { bucketOf, createMembership, createShardCoordinator, DEFAULT_BUCKETS, type Membership, type ShardCoordinator } from '../sharding/index.js';
import { sleep } from '../kube/sleep.js';
import type { LockSweep } from '../sharding/lock-sweep.js';

export interface ShardRolesDeps {
  api: Pick<KubeApiClient, 'getLease' | 'createLease' | 'updateLease' | 'listLeases'>;
  namespace: string;
  identity: string;
  buckets?: number;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  graceMs?: number;
  stableMs?: number;
  /** Longest wait for a draining bucket's nodes to get quiet (default 60 s). */
  drainTimeoutMs?: number;
  handover(): NodeHandover;
  /** Stopped: adoptions end early (drains go on: stopping hands every bucket over). */
  stopped(): boolean;
  onLost(reason: string): void;
  /** The attach lock sweep; none with the volume lock switched off. */
  lockSweep?: () => LockSweep | undefined;
  /** Period of the sweep (default 30 s). */
  lockSweepMs?: number;
  log: Logger;
}

export interface ShardRoles {
  readonly membership: Membership;
  readonly coordinator: ShardCoordinator;
  ownsNode(nodeName: string): boolean;
  mayStart(nodeName: string): boolean;
  holds(nodeName: string): boolean;
  /** Starts the membership and the coordinator (once the state is ready to adopt). */
  start(): void;
  /** Drains and releases every bucket, then the membership. */
  stop(): Promise<void>;
}

export function createShardRoles(deps: ShardRolesDeps): ShardRoles {
  return new Roles(deps);
}

/** Coalesces the buckets asked for while one walk runs into the next walk. */
class BucketBatch {
  private next: Uint8Array | undefined;
  private nextDone: Promise<void> | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly buckets: number, private readonly run: (mask: Uint8Array) => Promise<void>) {}

  add(bucket: number): Promise<void> {
    (this.next ??= new Uint8Array(this.buckets))[bucket] = 1;
    this.nextDone ??= (async () => {
      // After the walk under way (its buckets were asked for before this one), and a turn
      // later, so that claims of the same pass join this walk.
      while (this.running) await this.running.catch(() => undefined);
      await new Promise((r) => setImmediate(r));
      const mask = this.next as Uint8Array;
      this.next = undefined;
      this.nextDone = undefined;
      this.running = this.run(mask);
      try {
        await this.running;
      } finally {
        this.running = undefined;
      }
    })();
    return this.nextDone;
  }
}

class Roles implements ShardRoles {
  readonly membership: Membership;
  readonly coordinator: ShardCoordinator;
  private readonly buckets: number;
  /** Buckets whose nodes the state holds (adopting, acting or draining). */
  private readonly adopted: Uint8Array;
  private readonly adoptions: BucketBatch;
  private lostTold = false;
  private sweepTimer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly d: ShardRolesDeps) {
    this.buckets = d.buckets ?? DEFAULT_BUCKETS;
    this.adopted = new Uint8Array(this.buckets);
    this.membership = createMembership({
      api: d.api, namespace: d.namespace, identity: d.identity,
      leaseDurationMs: d.leaseDurationMs, renewDeadlineMs: d.renewDeadlineMs, retryPeriodMs: d.retryPeriodMs,
      ...(d.graceMs !== undefined ? { graceMs: d.graceMs } : {}),
      ...(d.stableMs !== undefined ? { stableMs: d.stableMs } : {}),
    });
    this.membership.subscribe(() => {
      const lost = this.membership.lost();
      if (lost !== undefined && !this.lostTold) {
        this.lostTold = true;
        d.onLost(`lost its shard membership: ${lost}`);
      }
    });
    this.adoptions = new BucketBatch(this.buckets, (mask) => this.adopt(mask));
    this.coordinator = createShardCoordinator({
      api: d.api, namespace: d.namespace, membership: this.membership, buckets: this.buckets,
      retryPeriodMs: d.retryPeriodMs, maxConcurrentWrites: 8,
      warmUp: (b) => this.adoptions.add(b),
      drain: (b) => this.drain(b),
      onChange: (b, acting) => d.log.debug({ bucket: b, acting }, acting ? 'bucket acting' : 'bucket stopped acting'),
    });
  }

  ownsNode(nodeName: string): boolean {
    return this.adopted[bucketOf(nodeName, this.buckets)] === 1;
  }

  mayStart(nodeName: string): boolean {
    return this.coordinator.mayAct(nodeName);
  }

  holds(nodeName: string): boolean {
    return this.coordinator.holds(nodeName);
  }

  start(): void {
    void this.coordinator.start();
    if (this.d.lockSweep?.() !== undefined) {
      this.sweepTimer = setInterval(() => this.sweepLocks(), this.d.lockSweepMs ?? 30_000);
      this.sweepTimer.unref();
    }
  }

  stop(): Promise<void> {
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    return this.coordinator.stop();
  }

  /** A pass over the acting buckets' locks, unless stopping or no longer a member. */
  private sweepLocks(): void {
    if (this.d.stopped() || this.membership.lost() !== undefined) return;
    void this.d.lockSweep?.()?.sweep();
  }

  private async adopt(mask: Uint8Array): Promise<void> {
    const t0 = performance.now();
    for (let b = 0; b < mask.length; b++) if (mask[b]) this.adopted[b] = 1;
    const r = await this.d.handover().adopt((n) => mask[bucketOf(n, this.buckets)] === 1, () => this.d.stopped());
    if (!r.complete) throw new Error('adoption cancelled');
    this.d.log.info({ buckets: count(mask), nodes: r.nodes, attached: r.attached, uncertain: r.uncertain, ms: Math.round(performance.now() - t0) }, 'adopted buckets');
    // After the coordinator marks the adopted buckets acting (warm-up resolved), so that they are swept too.
    setImmediate(() => this.sweepLocks());
  }

  private async drain(bucket: number): Promise<void> {
    const deadline = performance.now() + (this.d.drainTimeoutMs ?? 60_000);
    const on = (n: string) => bucketOf(n, this.buckets) === bucket;
    for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
      const r = await this.d.handover().release(on);
      if (r.outcome === 'released') {
        this.adopted[bucket] = 0;
        this.d.log.debug({ bucket, nodes: r.nodes, pods: r.pods }, 'bucket drained');
        return;
      }
      if (performance.now() > deadline) throw new Error(`bucket ${bucket} not quiet: ${r.reason}`);
      await sleep(wait);
    }
  }
}

function count(mask: Uint8Array): number {
  let n = 0;
  for (const v of mask) n += v;
  return n;
}
