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
import { ATTACHED, AttachmentTable, DELETING, FINALIZED } from './attachment-table.js';
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
  /** The driver's VolumeAttachments and, followed from PV events as external-attacher reads its PV informer, each PV's multi-attach ban. */
  private readonly vas = new AttachmentTable();
  /** VA ids with attach or detach work due. */
  private readonly queue = new DelayQueue<number>();
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
    const vas = this.vas;
    if (resource === 'persistentvolumes') {
      vas.setPvMode(name, type === 'DELETED' ? undefined : pvMultiAttachForbidden(o));
      return;
    }
    const spec = vaSpec(o);
    if (type === 'DELETED' || !spec || spec.attacher !== this.d.driver) return this.forget(name);
    let id = vas.find(name);
    if (id < 0) id = vas.add(name, spec.nodeName, spec.pvName);
    vas.set(id, ATTACHED, vaAttached(o));
    const wasDeleting = vas.has(id, DELETING);
    const deleting = o.metadata.deletionTimestamp !== undefined;
    vas.set(id, DELETING, deleting);
    const finalized = o.metadata.finalizers?.includes(this.finalizer) ?? false;
    vas.set(id, FINALIZED, finalized);
    const now = Date.now();
    if (deleting) {
      if (!wasDeleting) vas.setFailures(id, 0);
      if (finalized && vas.queued(id) !== 'detach') {
        this.schedule(id, 'detach', now + this.jitter(this.d.detachLatencyMs) + (this.d.faults?.extraDetachMs() ?? 0), true);
      }
    } else if (!finalized) {
      this.schedule(id, 'attach', now, true);
    } else if (!vas.has(id, ATTACHED) && vas.queued(id) === undefined) {
      this.schedule(id, 'attach', now + this.jitter(this.d.attachLatencyMs), false);
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
      if (!this.vas.pvInUse(pv)) this.releasePv(pv);
    }
    while (performance.now() < deadline) {
      const due = this.queue.popDue(now, 64);
      if (due.length === 0) return;
      for (const id of due) {
        // Work done earlier in this batch may have removed the VA (its write's event).
        if (!this.vas.live(id)) continue;
        this.vas.setQueued(id, undefined);
        this.work(id, now);
      }
    }
  }

  private work(id: number, now: number): void {
    const vas = this.vas;
    const name = vas.name(id);
    if (vas.has(id, DELETING)) {
      if (!vas.has(id, FINALIZED)) return;
      if (this.d.faults?.detachFails()) {
        this.counters.detachErrors++;
        vas.setFailures(id, vas.failures(id) + 1);
        // Scheduled before the write, whose event would otherwise schedule a fresh detach.
        this.schedule(id, 'detach', now + retryDelay(vas.failures(id)), true);
        this.write(name, 'detachError', (o) => {
          o.status = { ...((o.status ?? {}) as Record<string, unknown>), detachError: { time: new Date(now).toISOString(), message: 'rpc error: code = Internal desc = simulated ControllerUnpublishVolume failure' } };
        });
        return;
      }
      this.write(name, 'detach', (o) => { o.metadata.finalizers = o.metadata.finalizers?.filter((f) => f !== this.finalizer); }, () => this.counters.detached++);
      return;
    }
    if (!vas.has(id, FINALIZED)) {
      const pv = vas.pv(id);
      if (pv >= 0) this.protectPv(vas.pvName(pv));
      this.write(name, 'finalize', (o) => {
        if (o.metadata.deletionTimestamp) return;
        o.metadata.finalizers = [...(o.metadata.finalizers ?? []), this.finalizer];
      }, () => this.counters.finalizersAdded++);
      return;
    }
    if (vas.has(id, ATTACHED)) return;
    const error = this.attachError(id);
    if (error === undefined) {
      this.write(name, 'attach', (o) => {
        if (o.metadata.deletionTimestamp) return;
        const status = (o.status ?? {}) as Record<string, unknown>;
        delete status.attachError;
        o.status = { ...status, attached: true, attachmentMetadata: {} };
      }, () => {
        this.counters.attached++;
        // The write's own event may have removed the VA (and its id been reissued): only a VA still named so is reset.
        if (vas.find(name) === id) vas.setFailures(id, 0);
      });
      return;
    }
    this.counters.attachErrors++;
    vas.setFailures(id, vas.failures(id) + 1);
    this.write(name, 'attachError', (o) => {
      if (o.metadata.deletionTimestamp) return;
      o.status = { ...((o.status ?? {}) as Record<string, unknown>), attached: false, attachError: { time: new Date(now).toISOString(), message: error } };
    });
    if (vas.find(name) === id) this.schedule(id, 'attach', now + retryDelay(vas.failures(id)), true);
  }

  /** Why this attach fails now, or undefined to attach. */
  private attachError(id: number): string | undefined {
    const vas = this.vas;
    const pv = vas.pv(id);
    if (pv < 0) return 'simulated attacher supports only spec.source.persistentVolumeName';
    const forbidden = vas.pvForbidden(pv);
    if (forbidden === undefined) return `PersistentVolume "${vas.pvName(pv)}" not found`;
    if (forbidden) {
      const node = vas.node(id);
      for (const other of vas.vasOf(pv)) {
        if (other !== id && vas.has(other, ATTACHED) && vas.node(other) !== node) {
          this.counters.multiAttachRefused++;
          return `Multi-Attach refused: ReadWriteOnce volume "${vas.pvName(pv)}" is still attached to node "${vas.nodeName(vas.node(other))}"`;
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

  private schedule(id: number, kind: 'attach' | 'detach', at: number, replace: boolean): void {
    this.vas.setQueued(id, kind);
    this.queue.add(id, at, replace);
  }

  private forget(name: string): void {
    const id = this.vas.find(name);
    if (id < 0) return;
    this.queue.delete(id);
    const emptied = this.vas.remove(id);
    if (emptied !== undefined) this.pvReleases.add(emptied);
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

  stats(): Record<string, number> {
    return { ...this.counters, volumeAttachments: this.vas.size, queued: this.queue.size };
  }
}
