/**
 * Pod churn at `rate` changes per second, in the fleet namespace, spread over small ticks.
 * Each change is one of: delete a pod (its claim and volume are deleted once the pod is gone,
 * as with a claim owned by the workload); create a pod with a new bound claim on a random
 * Ready node; or reschedule a ReadWriteOnce pod to another node: delete it and, once it is
 * gone, create it again under the same name with the same claim (as a StatefulSet does).
 * Deletions versus creations steer the live pod count towards the fleet's designed size;
 * churn starts once the fleet has reached that size.
 */
import type { KubeObject, ResourceName, SimStore, StoreEventType } from '../store/sim-store.js';
import { TickClock, countWriteErrors, isLostRace, type FleetActor } from './actor.js';
import { pvcVolumeName } from './fields.js';
import type { FleetIndex, PodRec } from './fleet-index.js';
import { FLEET_NAMESPACE, objectKey } from './names.js';
import type { Prng } from './prng.js';
import { createRunningPod, provisionClaim } from './provision.js';

export interface ChurnDeps {
  store: SimStore;
  index: FleetIndex;
  prng: Prng;
  /** Pod changes per second, read every tick (faults may change it while the fleet runs). */
  rate: number | (() => number);
  driver: string;
  rwxFraction: number;
  /** Live pods to steer towards; 0 means the count when churn starts. */
  targetPods: number;
  /** Delete gracefully (a kubelet finishes it); without kubelets, delete at once. */
  graceful: boolean;
}

/** Deletions awaiting their pod's disappearance; beyond this, changes are skipped. */
const MAX_PENDING = 10_000;

interface Pending {
  namespace: string;
  name: string;
  claims: readonly string[];
  /** Reschedule target node, or undefined for a plain deletion. */
  node: string | undefined;
}

export function createChurn(deps: ChurnDeps): FleetActor {
  return new Churn(deps);
}

class Churn implements FleetActor {
  readonly name = 'churn';
  readonly resources: ReadonlySet<ResourceName> = new Set<ResourceName>(['pods']);
  readonly tickMs = 100;
  private credit = 0;
  private readonly clock = new TickClock(this.tickMs);
  private target: number;
  // Churn waits until the fleet has reached its size once (the generator may still be filling it).
  private warm: boolean;
  private readonly pending = new Map<string, Pending>();
  private readonly gone: string[] = [];
  private readonly counters = { podsDeleted: 0, podsCreated: 0, podsRescheduled: 0, claimsDeleted: 0, skipped: 0, writeErrors: 0 };
  private readonly countError = countWriteErrors('churn', this.counters);

  constructor(private readonly d: ChurnDeps) {
    this.target = d.targetPods;
    this.warm = d.targetPods === 0;
  }

  onEvent(type: StoreEventType, _resource: ResourceName, o: KubeObject): void {
    if (type !== 'DELETED') return;
    const key = objectKey(o.metadata.namespace, o.metadata.name);
    if (this.pending.has(key)) this.gone.push(key);
  }

  tick(now: number, deadline: number): void {
    if (this.target === 0) this.target = this.d.index.podCount();
    if (!this.warm) {
      if (this.d.index.podCount() < this.target) return;
      this.warm = true;
    }
    while (this.gone.length > 0 && performance.now() < deadline) this.afterGone(this.gone.shift() as string);
    const rate = typeof this.d.rate === 'number' ? this.d.rate : this.d.rate();
    const elapsed = this.clock.elapsed(now);
    if (rate <= 0) {
      this.credit = 0;
      return;
    }
    this.credit = Math.min(this.credit + (rate * elapsed) / 1000, Math.max(1, rate));
    while (this.credit >= 1 && performance.now() < deadline) {
      this.credit--;
      this.change(now);
    }
  }

  private change(now: number): void {
    const { prng, index } = this.d;
    if (this.pending.size >= MAX_PENDING) {
      this.counters.skipped++;
      return;
    }
    if (prng.float() < 1 / 3 && this.reschedule()) return;
    const live = index.podCount() - this.pending.size;
    if (live > this.target) {
      const pod = this.pickPod(false);
      if (pod) this.remove(pod, undefined);
      else this.counters.skipped++;
    } else {
      this.create(now);
    }
  }

  /** A random live pod of the fleet namespace on a Ready node (RWO-only if asked). */
  private pickPod(rwoOnly: boolean): PodRec | undefined {
    const { index, prng } = this.d;
    for (let i = 0; i < 16; i++) {
      const pod = index.randomPod(prng);
      if (!pod || pod.namespace !== FLEET_NAMESPACE || pod.deleting || pod.node < 0 || !index.isReady(pod.node)) continue;
      if (this.pending.has(pod.key)) continue;
      if (rwoOnly && !index.allClaimsRwo(pod)) continue;
      return pod;
    }
    return undefined;
  }


  private reschedule(): boolean {
    const pod = this.pickPod(true);
    if (!pod) return false;
    const target = this.d.index.randomReadyNode(this.d.prng, pod.node);
    if (target === undefined) return false;
    this.remove(pod, this.d.index.nodeNames[target]);
    this.counters.podsRescheduled++;
    return true;
  }

  private remove(pod: PodRec, node: string | undefined): void {
    const key = pod.key;
    // Registered before the delete: a delete without grace commits (and notifies) at once.
    this.pending.set(key, { namespace: pod.namespace, name: pod.name, claims: pod.claims, node });
    try {
      this.d.store.delete('pods', pod.namespace, pod.name, this.d.graceful ? {} : { gracePeriodSeconds: 0 });
      this.counters.podsDeleted++;
    } catch (err) {
      this.pending.delete(key);
      this.failed(err, `delete pod ${key}`);
    }
  }

  private afterGone(key: string): void {
    const p = this.pending.get(key);
    if (!p) return;
    this.pending.delete(key);
    const { store } = this.d;
    try {
      if (p.node !== undefined) {
        createRunningPod(store, p.namespace, p.name, p.node, p.claims, new Date().toISOString());
        return;
      }
      for (const claim of p.claims) {
        const pv = pvcVolumeName(store.get('persistentvolumeclaims', p.namespace, claim));
        store.delete('persistentvolumeclaims', p.namespace, claim);
        if (pv !== undefined) store.delete('persistentvolumes', undefined, pv);
        this.counters.claimsDeleted++;
      }
    } catch (err) {
      this.failed(err, `after deletion of pod ${key}`);
    }
  }

  private create(now: number): void {
    const { index, prng, store } = this.d;
    const node = index.randomReadyNode(prng);
    if (node === undefined) {
      this.counters.skipped++;
      return;
    }
    const tag = `c${prng.hex8()}`;
    try {
      provisionClaim(store, { namespace: FLEET_NAMESPACE, pvcName: `data-${tag}`, pvName: `pv-${tag}`, driver: this.d.driver, handle: `vol-${tag}`, rwx: prng.chance(this.d.rwxFraction) });
      createRunningPod(store, FLEET_NAMESPACE, `pod-${tag}`, index.nodeNames[node], [`data-${tag}`], new Date(now).toISOString());
      this.counters.podsCreated++;
    } catch (err) {
      this.failed(err, `create pod-${tag}`);
    }
  }

  private failed(err: unknown, what: string): void {
    if (isLostRace(err)) this.counters.skipped++;
    else this.countError(err, what);
  }

  stats(): Record<string, number> {
    return { ...this.counters, pending: this.pending.size, targetPods: this.target };
  }
}
