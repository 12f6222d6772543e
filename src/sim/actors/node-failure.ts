/**
 * Node failures: a Poisson process of `rate` failures per second across the fleet turns
 * random Ready nodes NotReady (Ready condition `Unknown`, as the node lifecycle controller
 * writes when heartbeats stop) and back after `recoveryMs`. A fraction of failed nodes also
 * get the `node.kubernetes.io/out-of-service` NoExecute taint, removed on recovery; their pods
 * are force-deleted (as the pod GC does for out-of-service nodes) and recreated on other Ready
 * nodes with the same claims, as their workload controllers would.
 */
import type { KubeObject, ResourceName, SimStore, StoreEventType } from '../store/sim-store.js';
import { createWriteErrorLog, type FleetActor } from './actor.js';
import { DelayQueue } from './delay-queue.js';
import type { FleetIndex } from './fleet-index.js';
import { OUT_OF_SERVICE_TAINT } from './names.js';
import { readyCondition } from './objects.js';
import type { Prng } from './prng.js';
import { createRunningPod } from './provision.js';

export interface NodeFailureDeps {
  store: SimStore;
  index: FleetIndex;
  prng: Prng;
  /** Failures per second across the fleet. */
  rate: number;
  recoveryMs: number;
  outOfServiceFraction: number;
}

const MAX_FAILURES_PER_TICK = 100;

export function createNodeFailures(deps: NodeFailureDeps): FleetActor {
  return new NodeFailures(deps);
}

class NodeFailures implements FleetActor {
  readonly name = 'node-failure';
  readonly resources: ReadonlySet<ResourceName> = new Set<ResourceName>();
  readonly tickMs = 100;
  private nextAt = 0;
  private readonly recoveries = new DelayQueue<number>();
  private readonly writeError = createWriteErrorLog('node-failure');
  private readonly counters = { nodesFailed: 0, nodesRecovered: 0, outOfServiceTainted: 0, podsEvicted: 0, writeErrors: 0 };

  constructor(private readonly d: NodeFailureDeps) {}

  onEvent(_type: StoreEventType, _resource: ResourceName, _o: KubeObject): void {}

  tick(now: number, deadline: number): void {
    for (const id of this.recoveries.popDue(now, 1000)) this.recover(id, now);
    if (this.d.rate <= 0) return;
    const mean = 1000 / this.d.rate;
    // After a stall the process restarts from now instead of catching up in a burst.
    if (this.nextAt === 0 || this.nextAt < now - 10 * this.tickMs) this.nextAt = now + this.d.prng.exponential(mean);
    for (let n = 0; this.nextAt <= now && n < MAX_FAILURES_PER_TICK && performance.now() < deadline; n++) {
      this.nextAt += this.d.prng.exponential(mean);
      const id = this.d.index.randomReadyNode(this.d.prng);
      if (id !== undefined) this.fail(id, now);
    }
  }

  private fail(id: number, now: number): void {
    const { index, prng } = this.d;
    const name = index.nodeNames[id];
    const outOfService = prng.chance(this.d.outOfServiceFraction);
    const at = new Date(now).toISOString();
    const done = this.writeNode(name, (o) => {
      setReady(o, 'Unknown', at);
      if (outOfService) {
        const spec = (o.spec ?? {}) as Record<string, unknown>;
        const taints = Array.isArray(spec.taints) ? (spec.taints as Array<Record<string, unknown>>) : [];
        spec.taints = [...taints.filter((t) => t.key !== OUT_OF_SERVICE_TAINT), { key: OUT_OF_SERVICE_TAINT, value: 'nodeshutdown', effect: 'NoExecute', timeAdded: at }];
        o.spec = spec;
      }
    });
    if (!done) return;
    this.counters.nodesFailed++;
    this.recoveries.add(id, now + this.d.recoveryMs, true);
    if (outOfService) {
      this.counters.outOfServiceTainted++;
      this.evict(id, at);
    }
  }

  /** Force-deletes the pods of an out-of-service node and recreates them elsewhere. */
  private evict(id: number, at: string): void {
    const { index, store, prng } = this.d;
    for (const key of [...index.podsOn(id)]) {
      const pod = index.pods.get(key);
      if (!pod) continue;
      const { namespace, name, claims, deleting } = pod;
      try {
        store.delete('pods', namespace, name, { gracePeriodSeconds: 0 });
        this.counters.podsEvicted++;
        const target = deleting ? undefined : index.randomReadyNode(prng, id);
        if (target !== undefined) createRunningPod(store, namespace, name, index.nodeNames[target], claims, at);
      } catch (err) {
        this.counters.writeErrors++;
        this.writeError(err, `evict pod ${key}`);
      }
    }
  }

  private recover(id: number, now: number): void {
    const at = new Date(now).toISOString();
    const done = this.writeNode(this.d.index.nodeNames[id], (o) => {
      setReady(o, 'True', at);
      const spec = (o.spec ?? {}) as Record<string, unknown>;
      if (Array.isArray(spec.taints)) {
        spec.taints = (spec.taints as Array<Record<string, unknown>>).filter((t) => t.key !== OUT_OF_SERVICE_TAINT);
        if ((spec.taints as unknown[]).length === 0) delete spec.taints;
      }
      o.spec = spec;
    });
    if (done) this.counters.nodesRecovered++;
  }

  private writeNode(name: string, fn: (o: KubeObject) => void): boolean {
    try {
      return this.d.store.mutate('nodes', undefined, name, fn) !== undefined;
    } catch (err) {
      this.counters.writeErrors++;
      this.writeError(err, `node ${name}`);
      return false;
    }
  }

  stats(): Record<string, number> {
    return { ...this.counters, nodesDown: this.recoveries.size };
  }
}

/** Sets the Ready condition, keeping lastTransitionTime when the status does not change. */
export function setReady(o: KubeObject, status: 'True' | 'Unknown', at: string): void {
  const st = (o.status ?? {}) as Record<string, unknown>;
  const conditions = Array.isArray(st.conditions) ? (st.conditions as Array<Record<string, unknown>>) : [];
  const prev = conditions.find((c) => c.type === 'Ready');
  const next: Record<string, unknown> = readyCondition(status, at);
  if (prev?.status === status && typeof prev.lastTransitionTime === 'string') next.lastTransitionTime = prev.lastTransitionTime;
  st.conditions = [...conditions.filter((c) => c.type !== 'Ready'), next];
  o.status = st;
}
