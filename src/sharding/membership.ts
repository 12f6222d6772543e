/**
 * This replica's membership in the ring, and its view of the other members: one Lease per
 * replica, `fleet-attach-m-<identity>`, labelled `fleet-attach.io/ring=adc`, which only its
 * replica renews (every retry period) and which a peer takes over only to fence a dead member.
 *
 * Guarantees:
 * - Liveness of this replica is client-go's leader rule: `isLive()` is true only before
 *   `renewDeadline` after the *start* of the last successful renewal (which precedes the server's
 *   commit and so any peer's observation of it), on the monotonic clock. In-flight renewals are
 *   aborted at that deadline. Once this replica is not live (deadline passed, or its Lease found
 *   fenced) it never becomes live again: `lost()` says why, listeners hear it, and the caller is
 *   expected to exit, as kube-controller-manager does.
 * - `readyMembers()` lists the stable Ready members, this replica included once it has been live
 *   for as long as its peers need to count it stable, so that replicas starting together agree.
 * - Peers are judged by the observed-time rule on this replica's monotonic clock, never by
 *   `renewTime` (peer-view.ts: Ready, stable, expired, gone).
 * - `fence(peer)` acquires an expired peer's Lease by compare-and-swap on the record observed
 *   unchanged (or creates it, when the Lease is absent), with holder `fenced-by-<me>`. A renewal
 *   the peer makes after our observation changes the resourceVersion and fails the fence; once
 *   fenced, every renewal of the peer fails and it stops. Because its deadline (renewDeadline <
 *   leaseDuration) ran out before our wait did, it had stopped acting before the fence committed.
 * - `isGone(peer)`: the peer can never act again, because its Lease is fenced or released
 *   (holder other than itself). Identities must be unique per process (e.g. pod name + random
 *   suffix), so a restarted replica is a new member and a released Lease is never renewed again.
 */
import { logger } from '../log/logger.js';
import { isConflict, isNotFound } from '../kube/kube-errors.js';
import type { LeaseRecord } from '../kube/projections/lease.js';
import { sleep } from '../kube/sleep.js';
import type { ShardLeaseApi } from './lease-api.js';
import { createPeerView, type PeerView } from './peer-view.js';

export const MEMBER_LEASE_PREFIX = 'fleet-attach-m-';
export const RING_LABEL = 'fleet-attach.io/ring';
export const RING = 'adc';
export const FENCED_PREFIX = 'fenced-by-';

const memberLabels = () => ({ metadata: { labels: { [RING_LABEL]: RING } }, spec: {} });

export interface MembershipOptions {
  api: ShardLeaseApi;
  namespace: string;
  /** Unique per process; a DNS label (it names the Lease). */
  identity: string;
  /** Defaults 15 s, 10 s, 2 s (KCM's); leaseDuration > renewDeadline > retryPeriod > 0. */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Extra wait beyond the lease duration before fencing (default 5 s). */
  graceMs?: number;
  /** How long a member must be Ready before it is given buckets (default 10 s). */
  stableMs?: number;
  /** Monotonic clock, ms (tests). */
  now?: () => number;
}

export interface Membership {
  readonly identity: string;
  /** Renews, observes and fences every retry period until stop(); never rejects. */
  start(): Promise<void>;
  /** One step: renew our Lease, list the members, fence the expired. Never rejects. */
  tick(): Promise<void>;
  /** O(1): this replica may act (see the contract). */
  isLive(): boolean;
  /** Why this replica stopped being live, or undefined. */
  lost(): string | undefined;
  /** The stable Ready members, this replica included when live and stable; sorted. */
  readyMembers(): string[];
  /** The member's Lease is fenced or released: it can never act again. */
  isGone(identity: string): boolean;
  /** Fences `identity` if it has expired; true when this call fenced it. Never rejects. */
  fence(identity: string): Promise<boolean>;
  /** Called when the Ready set or liveness changes; returns an unsubscribe function. */
  subscribe(listener: () => void): () => void;
  /** Ends the loop and releases our Lease (holder ''); this replica is not live from the call on. */
  stop(): Promise<void>;
}

export function createMembership(opts: MembershipOptions): Membership {
  const lease = opts.leaseDurationMs ?? 15_000;
  const renew = opts.renewDeadlineMs ?? 10_000;
  const retry = opts.retryPeriodMs ?? 2_000;
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(opts.identity)) throw new RangeError(`membership: identity ${JSON.stringify(opts.identity)} is not a DNS name`);
  if (!(retry > 0 && renew > retry && lease > renew)) throw new RangeError('membership: need leaseDuration > renewDeadline > retryPeriod > 0');
  return new LeaseMembership(opts, lease, renew, retry);
}

const leaseName = (identity: string) => MEMBER_LEASE_PREFIX + identity;

class LeaseMembership implements Membership {
  readonly identity: string;
  private readonly log = logger('sharding-membership');
  private readonly now: () => number;
  private readonly graceMs: number;
  private readonly stableMs: number;
  private readonly peers: PeerView;
  private readonly listeners = new Set<() => void>();
  private own: LeaseRecord | undefined;
  private liveSince = 0;
  private liveUntil = 0;
  private lostWhy: string | undefined;
  private readyKey = '';
  private ticking: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly opts: MembershipOptions,
    private readonly leaseMs: number,
    private readonly renewMs: number,
    private readonly retryMs: number,
  ) {
    this.identity = opts.identity;
    this.now = opts.now ?? (() => performance.now());
    this.graceMs = opts.graceMs ?? 5_000;
    this.stableMs = opts.stableMs ?? 10_000;
    this.peers = createPeerView({ leaseMs, graceMs: this.graceMs, stableMs: this.stableMs });
  }

  start(): Promise<void> {
    this.running ??= (async () => {
      while (!this.abort.signal.aborted) {
        await this.tick();
        if (this.lostWhy) break;
        clearTimeout(this.deadlineTimer);
        if (this.own) this.deadlineTimer = setTimeout(() => this.checkDeadline(), Math.max(0, this.liveUntil - this.now()));
        await sleep(this.untilNextTick(), this.abort.signal);
      }
      clearTimeout(this.deadlineTimer);
    })();
    return this.running;
  }

  /**
   * A retry period, or less when a peer becomes fenceable sooner: the fence then comes at lease
   * duration + grace after the peer's last observed renewal, not up to a period later, which
   * is part of every takeover after a crash.
   */
  private untilNextTick(): number {
    const now = this.now();
    const next = this.peers.nextExpiry(now);
    return next === undefined ? this.retryMs : Math.min(this.retryMs, Math.ceil(next - now));
  }

  tick(): Promise<void> {
    this.ticking ??= this.step()
      .catch((err: unknown) => this.log.error({ err }, 'membership step failed'))
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  isLive(): boolean {
    return this.lostWhy === undefined && this.now() < this.liveUntil;
  }

  lost(): string | undefined {
    return this.lostWhy;
  }

  readyMembers(): string[] {
    const now = this.now();
    const out: string[] = [];
    // We count ourselves stable no sooner than peers do: they see our first change up to two
    // retry periods after our first renewal (our second renewal, then their next list).
    if (this.isLive() && now - this.liveSince >= this.stableMs + 2 * this.retryMs) out.push(this.identity);
    out.push(...this.peers.stable(now));
    return out.sort();
  }

  isGone(identity: string): boolean {
    return identity !== this.identity && this.peers.isGone(identity, this.now());
  }

  async fence(identity: string): Promise<boolean> {
    if (identity === this.identity || !this.isLive() || !this.peers.expired(identity, this.now())) return false;
    const seen = this.peers.record(identity);
    const at = new Date().toISOString();
    const fenced = { holderIdentity: FENCED_PREFIX + this.identity, leaseDurationSeconds: Math.ceil((10 * this.leaseMs) / 1000), acquireTime: at, renewTime: at };
    try {
      const rec = seen
        ? await this.opts.api.updateLease({ ...seen, ...fenced, leaseTransitions: seen.leaseTransitions + 1 })
        : await this.opts.api.createLease({ namespace: this.opts.namespace, name: leaseName(identity), ...fenced, leaseTransitions: 1, kept: memberLabels() });
      this.peers.wrote(identity, rec, this.now());
      this.log.warn({ member: identity, by: this.identity }, 'fenced a member that stopped renewing');
      this.changed();
      return true;
    } catch (err) {
      if (!isConflict(err)) this.log.warn({ err, member: identity }, 'fencing failed; retried next period');
      return false;
    }
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const wasLive = this.isLive();
      this.abort.abort();
      this.lose('stopped');
      await this.ticking;
      await this.running;
      if (wasLive) await this.release();
    })();
    return this.stopping;
  }

  private async step(): Promise<void> {
    if (this.lostWhy) return;
    await this.renew();
    if (this.lostWhy) return;
    try {
      this.observe(await this.opts.api.listLeases(this.opts.namespace, `${RING_LABEL}=${RING}`));
    } catch (err) {
      this.log.warn({ err }, 'listing members failed');
    }
    for (const id of this.peers.allExpired(this.now())) await this.fence(id);
    const key = this.readyMembers().join(',');
    if (key !== this.readyKey) {
      this.readyKey = key;
      this.changed();
    }
  }

  private async renew(): Promise<void> {
    const start = this.now();
    if (this.own && start >= this.liveUntil) return this.lose('renew deadline passed');
    const attempt = AbortSignal.timeout(Math.max(1, Math.ceil(this.own ? this.liveUntil - start : this.renewMs)));
    const { api, namespace, identity } = this.opts;
    const at = new Date().toISOString();
    const mine = { namespace, name: leaseName(identity), holderIdentity: identity, leaseDurationSeconds: Math.ceil(this.leaseMs / 1000), renewTime: at };
    try {
      let rec: LeaseRecord | undefined;
      if (this.own) {
        try {
          rec = await api.updateLease({ ...this.own, ...mine }, { signal: attempt });
        } catch (err) {
          if (!isConflict(err) && !isNotFound(err)) throw err;
        }
      } else {
        try {
          rec = await api.createLease({ ...mine, acquireTime: at, leaseTransitions: 0, kept: memberLabels() }, { signal: attempt });
        } catch (err) {
          if (!isConflict(err)) throw err;
        }
      }
      if (!rec) {
        // A conflict (our last write committed unseen, or a fence) or a deleted Lease: read it again.
        const cur = await api.getLease(namespace, mine.name, { signal: attempt });
        if (cur && cur.holderIdentity !== identity) return this.lose(`member lease taken by ${cur.holderIdentity || 'nobody (released)'}; this identity never acts again: start under a new one`);
        rec = cur
          ? await api.updateLease({ ...cur, ...mine }, { signal: attempt })
          : await api.createLease({ ...mine, acquireTime: at, leaseTransitions: 0, kept: memberLabels() }, { signal: attempt });
      }
      if (this.own && this.now() >= this.liveUntil) return this.lose('renew deadline passed');
      if (this.lostWhy) return;
      if (!this.own) this.liveSince = start;
      this.own = rec;
      this.liveUntil = start + this.renewMs;
    } catch (err) {
      if (!isConflict(err)) this.log.warn({ err, identity }, 'member lease renewal failed');
      if (this.own && this.now() >= this.liveUntil) this.lose('renew deadline passed');
    }
  }

  private observe(leases: LeaseRecord[]): void {
    const byId = new Map<string, LeaseRecord>();
    for (const rec of leases) {
      const id = rec.name.slice(MEMBER_LEASE_PREFIX.length);
      if (rec.name.startsWith(MEMBER_LEASE_PREFIX) && id !== this.identity) byId.set(id, rec);
    }
    this.peers.observe(byId, this.now());
  }

  private checkDeadline(): void {
    if (this.own && !this.lostWhy && this.now() >= this.liveUntil) this.lose('renew deadline passed');
  }

  private lose(why: string): void {
    if (this.lostWhy) return;
    this.lostWhy = why;
    if (why !== 'stopped') this.log.error({ identity: this.identity, why }, 'membership lost: this replica must stop acting');
    this.changed();
  }

  private changed(): void {
    for (const l of this.listeners) {
      try {
        l();
      } catch (err) {
        this.log.error({ err }, 'membership listener threw');
      }
    }
  }

  /** Clears the holder if our Lease, read again, still names us (the cached record may be stale). */
  private async release(): Promise<void> {
    const { api, namespace, identity } = this.opts;
    const signal = AbortSignal.timeout(Math.ceil(this.renewMs));
    for (let tries = 0; tries < 3 && !signal.aborted; tries++) {
      try {
        const cur = await api.getLease(namespace, leaseName(identity), { signal });
        if (!cur || cur.holderIdentity !== identity) return;
        const at = new Date().toISOString();
        await api.updateLease({ ...cur, holderIdentity: '', renewTime: at }, { signal });
        return;
      } catch (err) {
        if (isConflict(err)) continue;
        this.log.warn({ err }, 'member lease release failed; peers fence it after it expires');
        return;
      }
    }
  }
}
