/**
 * Node failures: a Poisson process of `rate` failures per second across the fleet turns
 * random Ready nodes NotReady (Ready condition `Unknown`, as the node lifecycle controller
 * writes when heartbeats stop) and back after `recoveryMs`. A fraction of failed nodes also
 * get the `node.kubernetes.io/out-of-service` NoExecute taint, removed on recovery; their pods
 * are force-deleted (as the pod GC does for out-of-service nodes) and recreated on other Ready
 * nodes with the same claims, as their workload controllers would.
 */
import type { KubeObject, ResourceName, SimStore, StoreEventType } from '../store/sim-store.js';
import { countWriteErrors, type FleetActor } from './actor.js';
import { DelayQueue } from './delay-queue.js';
import type { FleetIndex } from './fleet-index.js';
import { OUT_OF_SERVICE_TAINT } from './names.js';
import { evictPods, setReady, writeNode } from './node-writes.js';
import { PoissonArrivals } from './poisson-arrivals.js';
import type { Prng } from './prng.js';

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
  private readonly arrivals: PoissonArrivals;
  private readonly recoveries = new DelayQueue<number>();
  private readonly counters = { nodesFailed: 0, nodesRecovered: 0, outOfServiceTainted: 0, podsEvicted: 0, writeErrors: 0 };
  private readonly failed = countWriteErrors('node-failure', this.counters);

  constructor(private readonly d: NodeFailureDeps) {
    this.arrivals = new PoissonArrivals(d.prng, this.tickMs, MAX_FAILURES_PER_TICK);
  }

  onEvent(_type: StoreEventType, _resource: ResourceName, _o: KubeObject): void {}

  tick(now: number, deadline: number): void {
    for (const id of this.recoveries.popDue(now, 1000)) this.recover(id, now);
    this.arrivals.take(now, this.d.rate, deadline, () => {
      const id = this.d.index.randomReadyNode(this.d.prng);
      if (id !== undefined) this.fail(id, now);
    });
  }

  private fail(id: number, now: number): void {
    const { index, prng } = this.d;
    const name = index.nodeNames[id];
    const outOfService = prng.chance(this.d.outOfServiceFraction);
    const at = new Date(now).toISOString();
    const done = writeNode(this.d.store, name, (o) => {
      setReady(o, 'Unknown', at);
      if (outOfService) {
        const spec = (o.spec ?? {}) as Record<string, unknown>;
        const taints = Array.isArray(spec.taints) ? (spec.taints as Array<Record<string, unknown>>) : [];
        spec.taints = [...taints.filter((t) => t.key !== OUT_OF_SERVICE_TAINT), { key: OUT_OF_SERVICE_TAINT, value: 'nodeshutdown', effect: 'NoExecute', timeAdded: at }];
        o.spec = spec;
      }
    }, this.failed);
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
    this.counters.podsEvicted += evictPods(this.d, id, at, this.failed).deleted;
  }

  private recover(id: number, now: number): void {
    const at = new Date(now).toISOString();
    const done = writeNode(this.d.store, this.d.index.nodeNames[id], (o) => {
      setReady(o, 'True', at);
      const spec = (o.spec ?? {}) as Record<string, unknown>;
      if (Array.isArray(spec.taints)) {
        spec.taints = (spec.taints as Array<Record<string, unknown>>).filter((t) => t.key !== OUT_OF_SERVICE_TAINT);
        if ((spec.taints as unknown[]).length === 0) delete spec.taints;
      }
      o.spec = spec;
    }, this.failed);
    if (done) this.counters.nodesRecovered++;
  }

  stats(): Record<string, number> {
    return { ...this.counters, nodesDown: this.recoveries.size };
  }
}
