/**
 * Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection package.
 *
 * A candidate acquires the Lease when nobody holds it (holderIdentity '') or when the record it
 * observed has not changed for the record's leaseDurationSeconds on the candidate's own clock;
 * the leader renews every retryPeriod. Every write is an update guarded by resourceVersion, so
 * of two racing candidates exactly one wins.
 *
 * Never two leaders: the leader stops leading `renewDeadline` after the *start* of its last
 * successful renew (which precedes the server's commit and hence any other candidate's
 * observation of it), while other candidates wait `leaseDuration` (> renewDeadline) after
 * observing that record. In-flight renew requests are aborted at the deadline, and `isLeader()`
 * checks the deadline itself, so a late timer never extends leadership.
 *
 * After losing the lease the elector stays a candidate (`onStartedLeading` may fire again) unless
 * `campaignAgain` is false, as client-go's one-shot Run. `stop()` stops leading first (awaiting
 * `onStoppedLeading`, also one already under way) and then releases the lease, so a successor
 * can acquire at once (client-go's ReleaseOnCancel: everything the lease guarded must have
 * ended by then, which `releaseOnStop` as a function lets the caller answer).
 */
import { logger } from '../log/logger.js';
import { isConflict } from '../kube/kube-errors.js';
import type { KubeApiClient } from '../kube/api-client.js';
import type { LeaseRecord } from '../kube/projections/lease.js';
import { sleep } from '../kube/sleep.js';

export type LeaseApi = Pick<KubeApiClient, 'getLease' | 'createLease' | 'updateLease'>;

export interface LeaderElectorOptions {
  api: LeaseApi;
  namespace: string;
  name: string;
  /** Unique per replica (e.g. hostname + random suffix). */
  identity: string;
  /** Default 15 s. */
  leaseDurationMs?: number;
  /** Default 10 s; must be < leaseDurationMs. */
  renewDeadlineMs?: number;
  /** Default 2 s; must be < renewDeadlineMs / 1.2. */
  retryPeriodMs?: number;
  /** Release the lease on stop (default true); a function is asked at that moment. */
  releaseOnStop?: boolean | (() => boolean);
  /** After losing the lease, campaign again (default true); false ends the loop at step-down. */
  campaignAgain?: boolean;
  onStartedLeading(): void;
  /** Awaited on stop() before the lease is released. */
  onStoppedLeading(): void | Promise<void>;
  onNewLeader?(identity: string): void;
  /** Monotonic clock, ms (tests). */
  now?: () => number;
}

export interface LeaderElector {
  /** Runs until `signal` aborts or stop(); never rejects. */
  start(signal?: AbortSignal): Promise<void>;
  /** Stops leading (awaiting onStoppedLeading), releases the lease if held, ends the loop. Idempotent. */
  stop(): Promise<void>;
  /** True only while leading and before the renew deadline. */
  isLeader(): boolean;
  /** Holder identity last observed in the Lease ('' if none or unknown). */
  leader(): string;
}

const JITTER = 1.2;

export function createLeaderElector(opts: LeaderElectorOptions): LeaderElector {
  const lease = opts.leaseDurationMs ?? 15_000;
  const renew = opts.renewDeadlineMs ?? 10_000;
  const retry = opts.retryPeriodMs ?? 2_000;
  if (!opts.identity) throw new RangeError('leader election: identity must not be empty');
  if (!(retry > 0 && renew > JITTER * retry && lease > renew)) {
    throw new RangeError('leader election: need leaseDuration > renewDeadline > 1.2 × retryPeriod > 0');
  }
  return new LeaseLeaderElector(opts, lease, renew, retry);
}

class LeaseLeaderElector implements LeaderElector {
  private readonly log = logger('leader-election');
  private readonly now: () => number;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private leading = false;
  private deadlineAt = 0;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private observed: LeaseRecord | undefined;
  private observedAt = 0;
  private attempt: AbortController | undefined;
  private steppingDown: Promise<void> | undefined;

  constructor(
    private readonly opts: LeaderElectorOptions,
    private readonly leaseMs: number,
    private readonly renewMs: number,
    private readonly retryMs: number,
  ) {
    this.now = opts.now ?? (() => performance.now());
  }

  start(signal?: AbortSignal): Promise<void> {
    signal?.addEventListener('abort', () => void this.stop(), { once: true });
    if (signal?.aborted) void this.stop();
    this.running ??= this.run();
    return this.running;
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  isLeader(): boolean {
    return this.leading && this.now() < this.deadlineAt;
  }

  leader(): string {
    return this.observed?.holderIdentity ?? '';
  }

  private async shutdown(): Promise<void> {
    this.abort.abort();
    this.attempt?.abort();
    await this.running;
    await this.stepDown('stopped');
    await this.steppingDown;
    const release = this.opts.releaseOnStop ?? true;
    if (typeof release === 'function' ? release() : release) await this.release();
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      const start = this.now();
      const timeoutMs = this.leading ? Math.max(1, this.deadlineAt - start) : this.renewMs;
      const attempt = new AbortController();
      this.attempt = attempt;
      const timer = setTimeout(() => attempt.abort(new Error('lease attempt timed out')), timeoutMs);
      let ok = false;
      try {
        ok = await this.tryAcquireOrRenew(attempt.signal);
      } catch (err) {
        if (!signal.aborted && !attempt.signal.aborted && !isConflict(err)) this.log.warn({ err }, 'lease acquire/renew failed');
      } finally {
        clearTimeout(timer);
      }
      if (signal.aborted) break;
      if (ok) this.renewed(start);
      const wait = this.leading ? this.retryMs : this.retryMs * (1 + Math.random() * JITTER);
      await sleep(wait, signal);
    }
  }

  /** A renew/acquire that started at `start` succeeded: leadership lasts until start + renewDeadline. */
  private renewed(start: number): void {
    this.deadlineAt = start + this.renewMs;
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(() => void this.stepDown('renew deadline passed'), Math.max(0, this.deadlineAt - this.now()));
    if (this.leading) return;
    this.leading = true;
    this.log.info({ identity: this.opts.identity, lease: `${this.opts.namespace}/${this.opts.name}` }, 'started leading');
    try {
      this.opts.onStartedLeading();
    } catch (err) {
      this.log.error({ err }, 'onStartedLeading threw');
    }
  }

  private stepDown(why: string): Promise<void> {
    clearTimeout(this.deadlineTimer);
    if (!this.leading) return Promise.resolve();
    this.leading = false;
    this.attempt?.abort();
    if (this.opts.campaignAgain === false) this.abort.abort();
    this.log.info({ identity: this.opts.identity, why }, 'stopped leading');
    this.steppingDown = (async () => {
      try {
        await this.opts.onStoppedLeading();
      } catch (err) {
        this.log.error({ err }, 'onStoppedLeading threw');
      }
    })();
    return this.steppingDown;
  }

  private observe(rec: LeaseRecord): void {
    const o = this.observed;
    const changed =
      !o || o.resourceVersion !== rec.resourceVersion || o.holderIdentity !== rec.holderIdentity || o.renewTime !== rec.renewTime;
    if (!changed) return;
    if (o?.holderIdentity !== rec.holderIdentity && rec.holderIdentity) this.notifyNewLeader(rec.holderIdentity);
    this.observed = rec;
    this.observedAt = this.now();
  }

  private notifyNewLeader(identity: string): void {
    try {
      this.opts.onNewLeader?.(identity);
    } catch (err) {
      this.log.error({ err }, 'onNewLeader threw');
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { api, namespace, name, identity } = this.opts;
    const nowIso = new Date().toISOString();
    const desired = { namespace, name, holderIdentity: identity, leaseDurationSeconds: Math.ceil(this.leaseMs / 1000), renewTime: nowIso };
    // Fast path: the leader renews from its cached record; a conflict falls through to the GET
    // in the same attempt (client-go's tryAcquireOrRenew), not a retry period later.
    if (this.leading && this.observed?.holderIdentity === identity) {
      try {
        this.observe(await api.updateLease({ ...this.observed, ...desired }, { signal }));
        return true;
      } catch (err) {
        this.observed = undefined;
        if (!isConflict(err)) throw err;
      }
    }
    const old = await api.getLease(namespace, name, { signal });
    if (!old) {
      const created = await api.createLease({ ...desired, acquireTime: nowIso, leaseTransitions: 0 }, { signal });
      this.observe(created);
      return true;
    }
    this.observe(old);
    const heldByOther = old.holderIdentity !== '' && old.holderIdentity !== identity;
    if (heldByOther && this.now() < this.observedAt + old.leaseDurationSeconds * 1000) return false;
    const next: LeaseRecord =
      old.holderIdentity === identity
        ? { ...old, ...desired }
        : { ...old, ...desired, acquireTime: nowIso, leaseTransitions: old.leaseTransitions + 1 };
    this.observe(await api.updateLease(next, { signal }));
    return true;
  }

  /**
   * Clears the holder if the Lease, read again, still names us (we are no longer acting by now),
   * as client-go's tryRelease: the cached record may be stale (a renew aborted by stop() may
   * have been committed), and a conflict is retried within the renew deadline.
   */
  private async release(): Promise<void> {
    const { api, namespace, name, identity } = this.opts;
    const signal = AbortSignal.timeout(this.renewMs);
    for (let tries = 0; tries < 3 && !signal.aborted; tries++) {
      try {
        const o = await api.getLease(namespace, name, { signal });
        if (!o || o.holderIdentity !== identity) return;
        const nowIso = new Date().toISOString();
        await api.updateLease({ ...o, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: nowIso, renewTime: nowIso }, { signal });
        this.log.info({ identity }, 'released lease');
        return;
      } catch (err) {
        if (isConflict(err)) continue;
        this.log.warn({ err }, 'lease release failed; successors wait for it to expire');
        return;
      }
    }
    this.log.warn('lease release gave up; successors wait for it to expire');
  }
}
