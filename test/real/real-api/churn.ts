/**
 * Pod churn whose every step follows the API server, not the fleet's predictions: the same
 * changes as the fleet's churn actor (src/sim/actors/churn.ts) — delete a pod and then its claim
 * and volume, create a pod with a new bound claim, reschedule a ReadWriteOnce pod to another
 * node under the same name and claim — written through the fleet's remote store (so that its
 * kubelets finish the graceful deletions), but each follow-up (the claim's deletion, the
 * re-creation) only once the test's watcher shows the pod gone from the server.
 *
 * Why not the fleet's churn actor: over the remote store it acts on the store's predicted
 * deletion of the pod, and the claim and volume deletions then go out on their own objects'
 * queues, ahead of the pod's still-pending writes: on a real kube-apiserver the PV and PVC were
 * deleted before the pod's deletion was even requested (seen in etcd's history), a volume
 * deleted while attached and in use. Without the StorageObjectInUseProtection admission here,
 * nothing stops that; the VolumeAttachment then outlives its PV.
 */
import { createPrng, FLEET_NAMESPACE, type Prng } from '../../../src/sim/actors/index.js';
import { nodeIsReady, podClaimNames, podNodeName, pvcVolumeName } from '../../../src/sim/actors/fields.js';
import { createRunningPod, provisionClaim } from '../../../src/sim/actors/provision.js';
import type { SimStore } from '../../../src/sim/store/sim-store.js';
import type { WatchedObjects } from './api-watcher.js';

export interface ServerOrderedChurnOptions {
  /** Where the writes go (the fleet's remote store). */
  store: SimStore;
  /** What the server holds (the test's watcher). */
  view: WatchedObjects;
  /** Changes per second. */
  rate: number;
  /** Live pods to steer towards. */
  targetPods: number;
  /** Names of the fleet's pods when churn starts. */
  pods: Iterable<string>;
  driver: string;
  rwxFraction: number;
  seed: number;
}

interface Pending {
  uid: string | undefined;
  claims: string[];
  /** Reschedule target, or undefined for a deletion (claim and volume go too). */
  moveTo: string | undefined;
  /** When the deletion was last sent (performance.now()). */
  sentAt: number;
}

/**
 * A deletion the server still does not show after this long is sent again: one sent while the
 * kube-apiserver restarts can run out of the remote store's retries and be dropped.
 */
const RESEND_DELETE_MS = 15_000;

export class ServerOrderedChurn {
  readonly counters = { podsDeleted: 0, deletesResent: 0, podsCreated: 0, podsRescheduled: 0, claimsDeleted: 0, skipped: 0, writeErrors: 0 };
  private readonly prng: Prng;
  private readonly pods: Set<string>;
  private readonly pending = new Map<string, Pending>();
  private readonly timer: NodeJS.Timeout;
  private credit = 0;
  private last = performance.now();
  private creating = true;
  private readyNodes: string[] = [];
  private readyAt = 0;

  constructor(private readonly o: ServerOrderedChurnOptions) {
    this.prng = createPrng(o.seed).fork('server-ordered-churn');
    this.pods = new Set(o.pods);
    this.timer = setInterval(() => this.tick(), 100);
  }

  /** Stops new changes; resolves once the follow-ups of those under way are done (or `timeoutMs`). */
  async stop(timeoutMs = 60_000): Promise<number> {
    this.creating = false;
    const deadline = Date.now() + timeoutMs;
    while (this.pending.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    clearInterval(this.timer);
    return this.pending.size;
  }

  /** No new changes until {@link resume} (the follow-ups of those under way go on). */
  pause(): void {
    this.creating = false;
  }

  resume(): void {
    this.creating = true;
    this.credit = 0;
    this.last = performance.now();
  }

  /** Stops at once (cleanup). */
  halt(): void {
    this.creating = false;
    clearInterval(this.timer);
  }

  /** The changes whose follow-up waits, with what the server shows of each pod. */
  waiting(): string[] {
    return [...this.pending].map(([name, p]) => {
      const cur = this.o.view.get('pods', FLEET_NAMESPACE, name);
      const state = !cur ? 'gone' : cur.metadata.uid !== p.uid ? 'recreated' : cur.metadata.deletionTimestamp ? 'terminating' : 'not deleted';
      return `${name} (${p.moveTo === undefined ? 'delete' : `move to ${p.moveTo}`}; server: ${state})`;
    });
  }

  stats(): Record<string, number> {
    return { ...this.counters, pending: this.pending.size, known: this.pods.size };
  }

  private tick(): void {
    const now = performance.now();
    this.followUp();
    if (!this.creating) return;
    this.credit = Math.min(this.credit + (this.o.rate * (now - this.last)) / 1000, Math.max(1, this.o.rate));
    this.last = now;
    while (this.credit >= 1) {
      this.credit--;
      try {
        this.change();
      } catch (err) {
        this.counters.writeErrors++;
        console.log(`churn: ${String(err)}`);
      }
    }
  }

  private ready(): string[] {
    if (performance.now() - this.readyAt > 2000) {
      this.readyNodes = this.o.view.list('nodes').filter(nodeIsReady).map((n) => n.metadata.name);
      this.readyAt = performance.now();
    }
    return this.readyNodes;
  }

  private change(): void {
    if (this.prng.float() < 1 / 3 && this.reschedule()) return;
    const live = this.pods.size - this.pending.size;
    if (live > this.o.targetPods) {
      const pod = this.pick(false);
      if (!pod) this.counters.skipped++;
      else this.remove(pod.name, pod.uid, pod.claims, undefined);
    } else {
      this.create();
    }
  }

  /** A random known pod that is live on a Ready node, as the server has it (RWO claims only if asked). */
  private pick(rwoOnly: boolean): { name: string; uid: string | undefined; claims: string[]; node: string } | undefined {
    const names = [...this.pods];
    const ready = new Set(this.ready());
    for (let i = 0; i < 16 && names.length > 0; i++) {
      const name = names[this.prng.int(names.length)];
      if (this.pending.has(name)) continue;
      const pod = this.o.view.get('pods', FLEET_NAMESPACE, name);
      if (!pod) {
        // Gone without churn (force-deleted off a failed node and not recreated).
        if (!this.pending.has(name)) this.pods.delete(name);
        continue;
      }
      const node = podNodeName(pod);
      if (pod.metadata.deletionTimestamp || !node || !ready.has(node)) continue;
      const claims = podClaimNames(pod);
      if (rwoOnly && !claims.every((c) => this.rwo(c))) continue;
      return { name, uid: pod.metadata.uid, claims, node };
    }
    return undefined;
  }

  private rwo(claim: string): boolean {
    const pvc = this.o.view.get('persistentvolumeclaims', FLEET_NAMESPACE, claim);
    const modes = (pvc?.spec as { accessModes?: string[] } | undefined)?.accessModes ?? [];
    return modes.length > 0 && modes.every((m) => m === 'ReadWriteOnce' || m === 'ReadWriteOncePod');
  }

  private reschedule(): boolean {
    const pod = this.pick(true);
    if (!pod) return false;
    const others = this.ready().filter((n) => n !== pod.node);
    if (others.length === 0) return false;
    this.remove(pod.name, pod.uid, pod.claims, others[this.prng.int(others.length)]);
    this.counters.podsRescheduled++;
    return true;
  }

  private remove(name: string, uid: string | undefined, claims: string[], moveTo: string | undefined): void {
    this.pending.set(name, { uid, claims, moveTo, sentAt: performance.now() });
    // Graceful: the fleet's kubelet stops the containers, unmounts, then deletes it for good.
    this.o.store.delete('pods', FLEET_NAMESPACE, name);
    this.counters.podsDeleted++;
  }

  private resend(name: string, p: Pending): void {
    p.sentAt = performance.now();
    try {
      this.o.store.delete('pods', FLEET_NAMESPACE, name);
      this.counters.deletesResent++;
    } catch (err) {
      this.counters.writeErrors++;
      console.log(`churn: deleting ${name} again: ${String(err)}`);
    }
  }

  /** Pods the server no longer has: recreate (reschedule) or delete their claims and volumes. */
  private followUp(): void {
    for (const [name, p] of this.pending) {
      const cur = this.o.view.get('pods', FLEET_NAMESPACE, name);
      if (cur && cur.metadata.uid === p.uid) {
        if (cur.metadata.deletionTimestamp === undefined && performance.now() - p.sentAt > RESEND_DELETE_MS) this.resend(name, p);
        continue;
      }
      this.pending.delete(name);
      try {
        if (p.moveTo !== undefined) {
          if (!cur) createRunningPod(this.o.store, FLEET_NAMESPACE, name, p.moveTo, p.claims, new Date().toISOString());
          continue;
        }
        this.pods.delete(name);
        for (const claim of p.claims) {
          const pv = pvcVolumeName(this.o.view.get('persistentvolumeclaims', FLEET_NAMESPACE, claim));
          this.o.store.delete('persistentvolumeclaims', FLEET_NAMESPACE, claim);
          if (pv !== undefined) this.o.store.delete('persistentvolumes', undefined, pv);
          this.counters.claimsDeleted++;
        }
      } catch (err) {
        this.counters.writeErrors++;
        console.log(`churn follow-up of ${name}: ${String(err)}`);
      }
    }
  }

  private create(): void {
    const ready = this.ready();
    if (ready.length === 0) {
      this.counters.skipped++;
      return;
    }
    const node = ready[this.prng.int(ready.length)];
    const tag = `r${this.prng.hex8()}`;
    provisionClaim(this.o.store, { namespace: FLEET_NAMESPACE, pvcName: `data-${tag}`, pvName: `pv-${tag}`, driver: this.o.driver, handle: `vol-${tag}`, rwx: this.prng.chance(this.o.rwxFraction) });
    createRunningPod(this.o.store, FLEET_NAMESPACE, `pod-${tag}`, node, [`data-${tag}`], new Date().toISOString());
    this.pods.add(`pod-${tag}`);
    this.counters.podsCreated++;
  }
}
