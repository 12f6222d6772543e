/**
 * The simulated CSI external-attacher of one driver. For each VolumeAttachment whose
 * `spec.attacher` is the driver it adds finalizer `external-attacher/<driver>`, then after the
 * attach latency sets `status.attached` (or `status.attachError`, retried with backoff). On
 * deletion it waits the detach latency and removes its finalizer, which lets the store delete
 * the object. Unlike a real driver it refuses to attach a ReadWriteOnce(-Pod) volume to a
 * second node, reporting an attachError, so that a controller bug is visible.
 *
 * As external-attacher does, it also puts its finalizer on the PersistentVolume of each
 * VolumeAttachment it handles and takes it off once no VolumeAttachment of that PV remains,
 * so a PV deleted while attached stays (being deleted) until it is detached.
 *
 * Injected faults (FleetFaults, consulted per attempt): attach failures, detach failures
 * (`status.detachError`, finalizer kept, retried with the attach backoff) and slow detaches.
 */
import type { KubeObject, ResourceName, SimStore, StoreEventType } from '../store/sim-store.js';
import type { FleetActor } from './actor.js';
import { createWriteErrorLog } from './actor.js';
import { pvMultiAttachForbidden, vaAttached, vaSpec } from './fields.js';
import { DelayQueue } from './delay-queue.js';
import { attacherFinalizer } from './names.js';
import type { FleetFaults } from './fleet-faults.js';
import type { Prng } from './prng.js';

export interface AttacherDeps {
  store: SimStore;
  prng: Prng;
  driver: string;
  attachLatencyMs: number;
  detachLatencyMs: number;
  attachFailureRate: number;
  /** Injected faults; none when absent. */
  faults?: FleetFaults;
}

/** First retry after an attach error, doubled per consecutive failure up to the max. */
export const ATTACH_RETRY_INITIAL_MS = 500;
export const ATTACH_RETRY_MAX_MS = 30_000;

interface VaRec {
  node: string;
  pv: string | undefined;
  attached: boolean;
  deleting: boolean;
  finalized: boolean;
  failures: number;
  /** What the queued entry is for: attach work or the detach of a deleting VA. */
  queued: 'attach' | 'detach' | undefined;
}

/** Backoff after the n-th consecutive failure of one VolumeAttachment. */
function retryDelay(failures: number): number {
  return Math.min(ATTACH_RETRY_MAX_MS, ATTACH_RETRY_INITIAL_MS * 2 ** Math.min(failures - 1, 20));
}

export function createAttacher(deps: AttacherDeps): FleetActor {
  return new Attacher(deps);
}

class Attacher implements FleetActor {
  readonly name = 'attacher';
  readonly resources: ReadonlySet<ResourceName> = new Set<ResourceName>(['volumeattachments', 'persistentvolumes']);
  readonly tickMs = 50;
  private readonly vas = new Map<string, VaRec>();
  private readonly byPv = new Map<string, Set<string>>();
  /** Each PV's multi-attach ban, followed from PV events as external-attacher reads its PV informer. */
  private readonly pvModes = new Map<string, boolean>();
  private readonly queue = new DelayQueue<string>();
  /** PVs whose last VolumeAttachment went: their finalizer comes off at the next tick. */
  private readonly pvReleases = new Set<string>();
  private readonly finalizer: string;
  private readonly writeError = createWriteErrorLog('attacher');
  private readonly counters = { attached: 0, attachErrors: 0, multiAttachRefused: 0, detached: 0, detachErrors: 0, finalizersAdded: 0, pvFinalizersRemoved: 0, writeErrors: 0 };

  constructor(private readonly d: AttacherDeps) {
    this.finalizer = attacherFinalizer(d.driver);
  }

  onEvent(type: StoreEventType, resource: ResourceName, o: KubeObject): void {
    const name = o.metadata.name;
    if (resource === 'persistentvolumes') {
      if (type === 'DELETED') this.pvModes.delete(name);
      else this.pvModes.set(name, pvMultiAttachForbidden(o));
      return;
    }
    const spec = vaSpec(o);
    if (type === 'DELETED' || !spec || spec.attacher !== this.d.driver) return this.forget(name);
    let rec = this.vas.get(name);
    if (!rec) {
      rec = { node: spec.nodeName, pv: spec.pvName, attached: false, deleting: false, finalized: false, failures: 0, queued: undefined };
      this.vas.set(name, rec);
      if (spec.pvName) this.pvSet(spec.pvName).add(name);
    }
    rec.attached = vaAttached(o);
    const wasDeleting = rec.deleting;
    rec.deleting = o.metadata.deletionTimestamp !== undefined;
    rec.finalized = o.metadata.finalizers?.includes(this.finalizer) ?? false;
    const now = Date.now();
    if (rec.deleting) {
      if (!wasDeleting) rec.failures = 0;
      if (rec.finalized && rec.queued !== 'detach') {
        this.schedule(name, rec, 'detach', now + this.jitter(this.d.detachLatencyMs) + (this.d.faults?.extraDetachMs() ?? 0), true);
      }
    } else if (!rec.finalized) {
      this.schedule(name, rec, 'attach', now, true);
    } else if (!rec.attached && rec.queued === undefined) {
      this.schedule(name, rec, 'attach', now + this.jitter(this.d.attachLatencyMs), false);
    }
  }

  /**
   * A latency drawn from [0.5, 1.5) of its mean, as a driver's calls vary: with fixed latencies
   * a detach on one node always ended before an attach on another was checked, so a controller
   * that does not wait for the detach was never refused (the ReadWriteOnce check below).
   */
  private jitter(meanMs: number): number {
    return meanMs * (0.5 + this.d.prng.float());
  }

  tick(now: number, deadline: number): void {
    for (const pv of this.pvReleases) {
      if (performance.now() > deadline) break;
      this.pvReleases.delete(pv);
      if (!this.byPv.has(pv)) this.releasePv(pv);
    }
    while (performance.now() < deadline) {
      const due = this.queue.popDue(now, 64);
      if (due.length === 0) return;
      for (const name of due) {
        const rec = this.vas.get(name);
        if (!rec) continue;
        rec.queued = undefined;
        this.work(name, rec, now);
      }
    }
  }

  private work(name: string, rec: VaRec, now: number): void {
    if (rec.deleting) {
      if (!rec.finalized) return;
      if (this.d.faults?.detachFails()) {
        this.counters.detachErrors++;
        rec.failures++;
        // Scheduled before the write, whose event would otherwise schedule a fresh detach.
        this.schedule(name, rec, 'detach', now + retryDelay(rec.failures), true);
        this.write(name, 'detachError', (o) => {
          o.status = { ...((o.status ?? {}) as Record<string, unknown>), detachError: { time: new Date(now).toISOString(), message: 'rpc error: code = Internal desc = simulated ControllerUnpublishVolume failure' } };
        });
        return;
      }
      this.write(name, 'detach', (o) => { o.metadata.finalizers = o.metadata.finalizers?.filter((f) => f !== this.finalizer); }, () => this.counters.detached++);
      return;
    }
    if (!rec.finalized) {
      if (rec.pv) this.protectPv(rec.pv);
      this.write(name, 'finalize', (o) => {
        if (o.metadata.deletionTimestamp) return;
        o.metadata.finalizers = [...(o.metadata.finalizers ?? []), this.finalizer];
      }, () => this.counters.finalizersAdded++);
      return;
    }
    if (rec.attached) return;
    const error = this.attachError(name, rec);
    if (error === undefined) {
      this.write(name, 'attach', (o) => {
        if (o.metadata.deletionTimestamp) return;
        const status = (o.status ?? {}) as Record<string, unknown>;
        delete status.attachError;
        o.status = { ...status, attached: true, attachmentMetadata: {} };
      }, () => {
        this.counters.attached++;
        rec.failures = 0;
      });
      return;
    }
    this.counters.attachErrors++;
    rec.failures++;
    this.write(name, 'attachError', (o) => {
      if (o.metadata.deletionTimestamp) return;
      o.status = { ...((o.status ?? {}) as Record<string, unknown>), attached: false, attachError: { time: new Date(now).toISOString(), message: error } };
    });
    this.schedule(name, rec, 'attach', now + retryDelay(rec.failures), true);
  }

  /** Why this attach fails now, or undefined to attach. */
  private attachError(name: string, rec: VaRec): string | undefined {
    if (!rec.pv) return 'simulated attacher supports only spec.source.persistentVolumeName';
    const forbidden = this.pvModes.get(rec.pv);
    if (forbidden === undefined) return `PersistentVolume "${rec.pv}" not found`;
    if (forbidden) {
      for (const other of this.byPv.get(rec.pv) ?? []) {
        const o = this.vas.get(other);
        if (other !== name && o && o.attached && o.node !== rec.node) {
          this.counters.multiAttachRefused++;
          return `Multi-Attach refused: ReadWriteOnce volume "${rec.pv}" is still attached to node "${o.node}"`;
        }
      }
    }
    if (this.d.prng.chance(this.d.attachFailureRate) || this.d.faults?.attachFails()) return 'rpc error: code = Internal desc = simulated ControllerPublishVolume failure';
    return undefined;
  }

  private write(name: string, what: string, fn: (o: KubeObject) => void, onDone?: () => void): void {
    try {
      if (this.d.store.mutate('volumeattachments', undefined, name, fn) !== undefined) onDone?.();
    } catch (err) {
      this.counters.writeErrors++;
      this.writeError(err, `${what} ${name}`);
    }
  }

  private schedule(name: string, rec: VaRec, kind: 'attach' | 'detach', at: number, replace: boolean): void {
    rec.queued = kind;
    this.queue.add(name, at, replace);
  }

  private forget(name: string): void {
    const rec = this.vas.get(name);
    if (!rec) return;
    this.vas.delete(name);
    this.queue.delete(name);
    if (rec.pv) {
      const set = this.byPv.get(rec.pv);
      set?.delete(name);
      if (set?.size === 0) {
        this.byPv.delete(rec.pv);
        this.pvReleases.add(rec.pv);
      }
    }
  }

  /** Adds the finalizer to a PV not being deleted (no new finalizers on an object in deletion). */
  private protectPv(pv: string): void {
    try {
      this.d.store.mutate('persistentvolumes', undefined, pv, (o) => {
        if (o.metadata.deletionTimestamp || o.metadata.finalizers?.includes(this.finalizer)) return;
        o.metadata.finalizers = [...(o.metadata.finalizers ?? []), this.finalizer];
      });
    } catch (err) {
      this.counters.writeErrors++;
      this.writeError(err, `finalize PersistentVolume ${pv}`);
    }
  }

  private releasePv(pv: string): void {
    try {
      const done = this.d.store.mutate('persistentvolumes', undefined, pv, (o) => {
        if (!o.metadata.finalizers?.includes(this.finalizer)) return;
        o.metadata.finalizers = o.metadata.finalizers.filter((f) => f !== this.finalizer);
      });
      if (done) this.counters.pvFinalizersRemoved++;
    } catch (err) {
      this.counters.writeErrors++;
      this.writeError(err, `release PersistentVolume ${pv}`);
    }
  }

  private pvSet(pv: string): Set<string> {
    let s = this.byPv.get(pv);
    if (!s) this.byPv.set(pv, (s = new Set()));
    return s;
  }

  stats(): Record<string, number> {
    return { ...this.counters, volumeAttachments: this.vas.size, queued: this.queue.size };
  }
}
