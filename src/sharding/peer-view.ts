/**
 * What one replica knows about the other members, by client-go's observed-time rule: only the
 * times at which *this* replica saw a member's record change count, on its own monotonic clock;
 * `renewTime` is never compared with a clock, so clock offsets between machines do not matter.
 *
 * - Ready: a change has been observed (first sight alone is not a renewal, so a dead member's
 *   last record never makes it Ready), the last one within the lease duration.
 * - stable: Ready without interruption for `stableMs`.
 * - expired: no change for lease duration + grace (first sight counts, so a member that never
 *   renews expires that long after we first saw it); an identity asked about with no Lease in
 *   the lists expires that long after it was first asked about.
 * - gone: its Lease names another holder (fenced) or none (released); it can never act again.
 *
 * The lease duration used is the larger of ours and the record's, so a member configured with a
 * longer lease is never judged by our shorter one.
 */
import type { LeaseRecord } from '../kube/projections/lease.js';

interface Peer {
  rec: LeaseRecord;
  /** When a change of `rec` was last observed (first sight included). */
  observedAt: number;
  /** Start of the current Ready streak; undefined until a change is observed. */
  readySince: number | undefined;
}

export interface PeerViewOptions {
  leaseMs: number;
  graceMs: number;
  stableMs: number;
}

export interface PeerView {
  /** A complete list of the member Leases, by identity, at `now`; identities missing are forgotten. */
  observe(records: ReadonlyMap<string, LeaseRecord>, now: number): void;
  /** Records a write of ours to a member's Lease (a fence). */
  wrote(id: string, rec: LeaseRecord, now: number): void;
  /** The record last observed, if any. */
  record(id: string): LeaseRecord | undefined;
  /** Stable Ready identities at `now`, unsorted. */
  stable(now: number): string[];
  /** See the header; an identity with no Lease seen starts its absence clock at the first question. */
  isGone(id: string, now: number): boolean;
  expired(id: string, now: number): boolean;
  /** Every identity expired at `now`. */
  allExpired(now: number): string[];
  /** The earliest moment after `now` at which an identity not yet expired will be, if any. */
  nextExpiry(now: number): number | undefined;
}

export function createPeerView(opts: PeerViewOptions): PeerView {
  return new ObservedPeers(opts);
}

class ObservedPeers implements PeerView {
  private readonly peers = new Map<string, Peer>();
  /** Identities asked about with no Lease seen: when first asked. */
  private readonly absentSince = new Map<string, number>();

  constructor(private readonly o: PeerViewOptions) {}

  observe(records: ReadonlyMap<string, LeaseRecord>, now: number): void {
    for (const [id, rec] of records) {
      this.absentSince.delete(id);
      const p = this.peers.get(id);
      if (!p) {
        this.peers.set(id, { rec, observedAt: now, readySince: undefined });
        continue;
      }
      const o = p.rec;
      if (o.resourceVersion === rec.resourceVersion && o.holderIdentity === rec.holderIdentity && o.renewTime === rec.renewTime) continue;
      const streak = p.readySince !== undefined && now - p.observedAt < this.durationOf(rec);
      this.peers.set(id, { rec, observedAt: now, readySince: streak ? p.readySince : now });
    }
    for (const id of this.peers.keys()) if (!records.has(id)) this.peers.delete(id);
  }

  wrote(id: string, rec: LeaseRecord, now: number): void {
    this.peers.set(id, { rec, observedAt: now, readySince: undefined });
    this.absentSince.delete(id);
  }

  record(id: string): LeaseRecord | undefined {
    return this.peers.get(id)?.rec;
  }

  stable(now: number): string[] {
    const out: string[] = [];
    for (const [id, p] of this.peers) if (this.isReady(id, p, now) && now - (p.readySince as number) >= this.o.stableMs) out.push(id);
    return out;
  }

  isGone(id: string, now: number): boolean {
    const p = this.peers.get(id);
    if (p) return p.rec.holderIdentity !== id;
    if (!this.absentSince.has(id)) this.absentSince.set(id, now);
    return false;
  }

  expired(id: string, now: number): boolean {
    const p = this.peers.get(id);
    if (p) return p.rec.holderIdentity === id && now - p.observedAt >= this.durationOf(p.rec) + this.o.graceMs;
    const since = this.absentSince.get(id);
    return since !== undefined && now - since >= this.o.leaseMs + this.o.graceMs;
  }

  allExpired(now: number): string[] {
    return [...this.peers.keys(), ...this.absentSince.keys()].filter((id) => this.expired(id, now));
  }

  nextExpiry(now: number): number | undefined {
    let next: number | undefined;
    const consider = (at: number) => {
      if (at > now && (next === undefined || at < next)) next = at;
    };
    for (const [id, p] of this.peers) if (p.rec.holderIdentity === id) consider(p.observedAt + this.durationOf(p.rec) + this.o.graceMs);
    for (const since of this.absentSince.values()) consider(since + this.o.leaseMs + this.o.graceMs);
    return next;
  }

  private durationOf(rec: LeaseRecord): number {
    return Math.max(this.o.leaseMs, rec.leaseDurationSeconds * 1000);
  }

  private isReady(id: string, p: Peer, now: number): boolean {
    return p.rec.holderIdentity === id && p.readySince !== undefined && now - p.observedAt < this.durationOf(p.rec);
  }
}
