/**
 * Node flaps (an injected fault): a Poisson process at the live `flap()` rate turns random
 * Ready nodes NotReady (Ready=Unknown, as the node lifecycle controller writes when heartbeats
 * stop) for a short `downMs`, then Ready again. Unlike node-failure.ts nothing else happens to
 * the node: no taint, no eviction; a flap is a blip the controller must ride out. Recoveries
 * still happen after the fault is switched off.
 */
import type { KubeObject, ResourceName, SimStore, StoreEventType } from '../store/sim-store.js';
import { countWriteErrors, type FleetActor } from './actor.js';
import { DelayQueue } from './delay-queue.js';
import type { FleetFaults } from './fleet-faults.js';
import type { FleetIndex } from './fleet-index.js';
import { setReady, writeNode } from './node-writes.js';
import { PoissonArrivals } from './poisson-arrivals.js';
import type { Prng } from './prng.js';

export interface NodeFlapDeps {
  store: SimStore;
  index: FleetIndex;
  prng: Prng;
  faults: FleetFaults;
}

const MAX_FLAPS_PER_TICK = 100;
const NO_FLAPS = { rate: 0, downMs: 0 };

export function createNodeFlaps(deps: NodeFlapDeps): FleetActor {
  return new NodeFlaps(deps);
}

class NodeFlaps implements FleetActor {
  readonly name = 'node-flap';
  readonly resources: ReadonlySet<ResourceName> = new Set<ResourceName>();
  readonly tickMs = 100;
  private readonly arrivals: PoissonArrivals;
  private readonly recoveries = new DelayQueue<number>();
  private readonly counters = { flaps: 0, recovered: 0, writeErrors: 0 };
  private readonly failed = countWriteErrors('node-flap', this.counters);

  constructor(private readonly d: NodeFlapDeps) {
    this.arrivals = new PoissonArrivals(d.prng, this.tickMs, MAX_FLAPS_PER_TICK);
  }

  onEvent(_type: StoreEventType, _resource: ResourceName, _o: KubeObject): void {}

  tick(now: number, deadline: number): void {
    for (const id of this.recoveries.popDue(now, 1000)) if (this.write(id, 'True', now)) this.counters.recovered++;
    const flap = this.d.faults.flap() ?? NO_FLAPS;
    this.arrivals.take(now, flap.rate, deadline, () => {
      const id = this.d.index.randomReadyNode(this.d.prng);
      if (id === undefined || !this.write(id, 'Unknown', now)) return;
      this.counters.flaps++;
      this.d.faults.count('flap');
      this.recoveries.add(id, now + flap.downMs, true);
    });
  }

  private write(id: number, status: 'True' | 'Unknown', now: number): boolean {
    return writeNode(this.d.store, this.d.index.nodeNames[id], (o) => setReady(o, status, new Date(now).toISOString()), this.failed);
  }

  stats(): Record<string, number> {
    return { ...this.counters, nodesDown: this.recoveries.size };
  }
}
