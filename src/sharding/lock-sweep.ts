/**
 * LockSweep: clears attach locks (volume-lock.ts) left over by a node, so that a ReadWriteOnce
 * volume is never blocked for ever. A lock is left over when the replica that held the node's
 * bucket died or lost the bucket between the node's detach and the lock's release. The replica
 * now acting on that bucket lists the locks of its buckets (by the {@link LOCK_BUCKET_LABEL}
 * label) and releases, with the fenced compare-and-swap release, each lock naming a node m of
 * an acting bucket once nothing has needed it for `holdMs` without a break. "Needed" (the
 * `needed` dependency) is any of: a VolumeAttachment of the volume on m in the VA cache, the
 * volume attached or uncertain on m in the actual state, the volume desired on m, an operation
 * of this replica's executor pending or running on the volume.
 *
 * Why a lock just taken for an attach about to create its VolumeAttachment is never swept: the
 * lock is taken inside the attach operation, which holds its key in the operation table from
 * before the take until its outcome is recorded, and is started only for a volume desired on m;
 * so while the VolumeAttachment is not yet in the cache the operation is running, and once the
 * operation ends the VolumeAttachment is in the cache (the attach waited for it) or the pair is
 * uncertain. Either way `needed` answers, the tracking restarts, and nothing is released.
 *
 * Why `holdMs`: a replica cut off by a partition may have a VolumeAttachment create (taken under
 * the lock) already on the wire; the server may commit it long after this replica, now owning
 * the bucket, sees the lock unused. The sweep rests on this assumption: a write not committed
 * within `holdMs` of its send never commits (the client gives up after its request timeout, the
 * API server after its own, 30 s and 60 s; the default `holdMs` is 120 s). So a lock is left
 * over only once every look at it (each sweep pass, and `take`'s, which asks `leftOver` too)
 * found it unneeded for `holdMs` since this replica first saw it so; a look that finds it
 * needed starts the count again.
 *
 * A lock whose volume this replica cannot place (its PV not in the cache, or not a CSI PV) is
 * always needed (`needed` says why), so it is kept: clearing it is left to its node's detach.
 */
import type { KubeApiClient } from '../kube/api-client.js';
import type { Logger } from '../log/logger.js';
import { ATTACH_LOCK_ANNOTATION, LOCK_BUCKET_LABEL, parseLockValue, type LockHolder, type ReleaseOutcome } from './volume-lock.js';

export interface LockSweepDeps {
  api: Pick<KubeApiClient, 'listPersistentVolumes'>;
  /** The buckets acting on this replica now. */
  buckets(): readonly number[];
  /** Whether this replica may clear a lock naming `node` now (the node's bucket acts here). */
  mayAct(node: string): boolean;
  /**
   * Why the lock of `pv` naming `node` is needed now, or undefined when nothing needs it. An
   * operation on the volume for the node `except` (the node asking to take the lock) is not
   * counted.
   */
  needed(pv: string, node: string, except?: string): string | undefined;
  /** The fenced release (shard-writes.ts); may reject (not sent, API error). */
  release(pv: string, node: string): Promise<ReleaseOutcome>;
  /** How long a lock must have been unneeded, without a break, before it is left over. */
  holdMs: number;
  /** Monotonic ms; `performance.now` by default. */
  now?: () => number;
  log: Logger;
  /** Buckets per list request (default 200). */
  bucketsPerList?: number;
}

export interface SweepResult {
  /** Locks of acting nodes seen. */
  locks: number;
  released: number;
  /** Unneeded, but not yet for `holdMs`. */
  waiting: number;
  /** Lists or releases that failed (logged). */
  failed: number;
}

export interface LockSweep {
  /**
   * Whether the lock of `pv` held by `holder` is left over: `needed` has answered nothing at
   * every look since this replica first saw it unneeded, `holdMs` ago or more. Each call is a
   * look: it starts the count, or restarts it when the lock is needed.
   */
  leftOver(pv: string, holder: LockHolder, except?: string): boolean;
  /** One pass over the locks of the acting buckets; never rejects. Calls during a pass share the next pass. */
  sweep(): Promise<SweepResult>;
  /** Drops what is known of `pv`'s lock (released, or taken anew). */
  forget(pv: string): void;
}

export function createLockSweep(deps: LockSweepDeps): LockSweep {
  return new Sweep(deps);
}

const keyOf = (pv: string, h: LockHolder) => `${pv}\n${h.node}\n${h.epoch ?? ''}`;

class Sweep implements LockSweep {
  /** Lock (pv, node, epoch) → when it was first seen unneeded, since the last look that found it needed. */
  private readonly unneededSince = new Map<string, number>();
  private readonly now: () => number;
  private running: Promise<SweepResult> | undefined;
  private next: Promise<SweepResult> | undefined;

  constructor(private readonly d: LockSweepDeps) {
    this.now = d.now ?? (() => performance.now());
  }

  leftOver(pv: string, holder: LockHolder, except?: string): boolean {
    const key = keyOf(pv, holder);
    if (this.d.needed(pv, holder.node, except) !== undefined) {
      this.unneededSince.delete(key);
      return false;
    }
    const now = this.now();
    const since = this.unneededSince.get(key);
    if (since === undefined) {
      this.unneededSince.set(key, now);
      return this.d.holdMs <= 0;
    }
    return now - since >= this.d.holdMs;
  }

  forget(pv: string): void {
    const prefix = `${pv}\n`;
    for (const key of this.unneededSince.keys()) if (key.startsWith(prefix)) this.unneededSince.delete(key);
  }

  sweep(): Promise<SweepResult> {
    if (this.running === undefined) {
      this.running = this.pass().finally(() => (this.running = undefined));
      return this.running;
    }
    this.next ??= this.running.then(() => {
      this.next = undefined;
      return this.sweep();
    });
    return this.next;
  }

  private async pass(): Promise<SweepResult> {
    const r: SweepResult = { locks: 0, released: 0, waiting: 0, failed: 0 };
    const buckets = [...this.d.buckets()].sort((a, b) => a - b);
    const per = Math.max(1, this.d.bucketsPerList ?? 200);
    const seen = new Set<string>();
    let complete = true;
    for (let i = 0; i < buckets.length; i += per) {
      const selector = `${LOCK_BUCKET_LABEL} in (${buckets.slice(i, i + per).join(',')})`;
      let pvs;
      try {
        pvs = await this.d.api.listPersistentVolumes(selector);
      } catch (err) {
        r.failed++;
        complete = false;
        this.d.log.warn({ err, selector }, 'lock sweep: list failed; the next pass lists again');
        continue;
      }
      for (const pv of pvs) {
        const holder = parseLockValue(pv.annotations?.[ATTACH_LOCK_ANNOTATION]);
        if (holder === undefined || !this.d.mayAct(holder.node)) continue;
        r.locks++;
        seen.add(keyOf(pv.name, holder));
        if (!this.leftOver(pv.name, holder)) {
          if (this.unneededSince.has(keyOf(pv.name, holder))) r.waiting++;
          continue;
        }
        try {
          const out = await this.d.release(pv.name, holder.node);
          this.forget(pv.name);
          if (out.outcome === 'released') {
            r.released++;
            this.d.log.info({ pv: pv.name, node: holder.node, holdMs: this.d.holdMs }, 'lock sweep: released a left-over attach lock');
          }
        } catch (err) {
          r.failed++;
          this.d.log.warn({ err, pv: pv.name, node: holder.node }, 'lock sweep: release failed; the next pass tries again');
        }
      }
    }
    // Locks gone or changed since they were tracked: forgotten, so that a later lock starts its own count.
    if (complete) for (const key of this.unneededSince.keys()) if (!seen.has(key)) this.unneededSince.delete(key);
    return r;
  }
}
