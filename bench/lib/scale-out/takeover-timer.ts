/**
 * Takeover and hand-over times, from the bucket Leases as committed: for each replica that
 * goes (SIGKILL, or SIGTERM for a graceful hand-over), the time from the signal until every
 * bucket it held is held by another replica, and until the first successful write by a new
 * holder on a node of those buckets; for each replica that joins, the time until it holds its
 * share. Pure: the caller gives the times.
 */
export interface TakeoverRecord {
  kind: 'kill' | 'scale-down';
  victim: string;
  buckets: number;
  /** Signal → every bucket held by another replica (s); null while not yet. */
  claimS: number | null;
  /** Signal → first successful write by a new holder on one of those buckets' nodes (s). */
  firstWriteS: number | null;
}

export interface JoinRecord {
  id: string;
  /** Buckets it was to hold (its rendezvous share at the time). */
  share: number;
  /** Process start → its first bucket (s). */
  firstBucketS: number | null;
  /** Process start → holding its whole share (s). */
  shareS: number | null;
  /** Its first bucket → its whole share (s): the hand-over proper. */
  handoverS: number | null;
}

interface Pending { rec: TakeoverRecord; at: number; open: Set<number>; held: Set<number> }
interface Joining { rec: JoinRecord; at: number; target: Set<number> }

export interface TakeoverTimer {
  begin(kind: TakeoverRecord['kind'], victim: string, buckets: readonly number[], at: number): void;
  /** A replica started at `at` whose share is `target`. */
  joined(id: string, target: readonly number[], at: number): void;
  onHolder(bucket: number, holder: string, at: number): void;
  /** A successful node status or VolumeAttachment write by `user` on a node of `bucket`. */
  onWrite(user: string, bucket: number, at: number): void;
  takeovers(): TakeoverRecord[];
  joins(): JoinRecord[];
}

export function createTakeoverTimer(): TakeoverTimer {
  const pending: Pending[] = [];
  const done: TakeoverRecord[] = [];
  const joining: Joining[] = [];
  const joinsDone: JoinRecord[] = [];
  const secs = (from: number, to: number) => Math.round(to - from) / 1000;
  return {
    begin(kind, victim, buckets, at) {
      const rec: TakeoverRecord = { kind, victim, buckets: buckets.length, claimS: null, firstWriteS: null };
      if (buckets.length === 0) return;
      pending.push({ rec, at, open: new Set(buckets), held: new Set(buckets) });
      done.push(rec);
    },
    joined(id, target, at) {
      const rec: JoinRecord = { id, share: target.length, firstBucketS: null, shareS: null, handoverS: null };
      joinsDone.push(rec);
      joining.push({ rec, at, target: new Set(target) });
    },
    onHolder(bucket, holder, at) {
      for (const p of pending) {
        if (!p.open.has(bucket) || holder === '' || holder === p.rec.victim) continue;
        p.open.delete(bucket);
        if (p.open.size === 0) p.rec.claimS = secs(p.at, at);
      }
      for (const j of joining) {
        if (holder === j.rec.id && j.rec.firstBucketS === null) j.rec.firstBucketS = secs(j.at, at);
        if (holder === j.rec.id) j.target.delete(bucket);
        if (j.target.size === 0 && j.rec.shareS === null) {
          j.rec.shareS = secs(j.at, at);
          j.rec.handoverS = j.rec.firstBucketS === null ? null : Math.round((j.rec.shareS - j.rec.firstBucketS) * 1000) / 1000;
        }
      }
      for (let i = joining.length - 1; i >= 0; i--) if (joining[i]!.rec.shareS !== null) joining.splice(i, 1);
    },
    onWrite(user, bucket, at) {
      for (let i = pending.length - 1; i >= 0; i--) {
        const p = pending[i]!;
        if (p.rec.firstWriteS === null && user !== p.rec.victim && p.held.has(bucket)) p.rec.firstWriteS = secs(p.at, at);
        if (p.rec.firstWriteS !== null && p.rec.claimS !== null) pending.splice(i, 1);
      }
    },
    takeovers: () => done.map((r) => ({ ...r })),
    joins: () => joinsDone.map((r) => ({ ...r })),
  };
}
