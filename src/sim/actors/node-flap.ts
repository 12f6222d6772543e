/**
 * Node flaps (an injected fault): a Poisson process at the live `flap()` rate turns random
 * Ready nodes NotReady (Ready=Unknown, as the node lifecycle controller writes when heartbeats
 * stop) for a short `downMs`, then Ready again. Unlike node-failure.ts nothing else happens to
 * the node: no taint, no eviction; a flap is a blip the controller must ride out. Recoveries
 * still happen after the fault is switched off.
 */
import type { KubeObject, ResourceName, SimStore, StoreEventType } from '../store/sim-store.js';
import { createWriteErrorLog, type FleetActor } from './actor.js';
import { DelayQueue } from './delay-queue.js';
import type { FleetFaults } from './fleet-faults.js';
import type { FleetIndex } from './fleet-index.js';
import { setReady } from './node-failure.js';
import type { Prng } from './prng.js';

export interface NodeFlapDeps {
  store: SimStore;
  index: FleetIndex;
  prng: Prng;
  faults: FleetFaults;
}

const MAX_FLAPS_PER_TICK = 100;

export function createNodeFlaps(deps: NodeFlapDeps): FleetActor {
  return new NodeFlaps(deps);
}

class NodeFlaps implements FleetActor {
  readonly name = 'node-flap';
  readonly resources: ReadonlySet<ResourceName> = new Set<ResourceName>();
  readonly tickMs = 100;
  private nextAt = 0;
  private readonly recoveries = new DelayQueue<number>();
  private readonly writeError = createWriteErrorLog('node-flap');
  private readonly counters = { flaps: 0, recovered: 0, writeErrors: 0 };

  constructor(private readonly d: NodeFlapDeps) {}

  onEvent(_type: StoreEventType, _resource: ResourceName, _o: KubeObject): void {}

  tick(now: number, deadline: number): void {
    for (const id of this.recoveries.popDue(now, 1000)) this.write(id, 'True', now);
    const flap = this.d.faults.flap();
    if (!flap || flap.rate <= 0) {
      this.nextAt = 0;
      return;
    }
    const mean = 1000 / flap.rate;
    // After a stall or a pause the process restarts from now instead of catching up in a burst.
    if (this.nextAt === 0 || this.nextAt < now - 10 * this.tickMs) this.nextAt = now + this.d.prng.exponential(mean);
    for (let n = 0; this.nextAt <= now && n < MAX_FLAPS_PER_TICK && performance.now() < deadline; n++) {
      this.nextAt += this.d.prng.exponential(mean);
      const id = this.d.index.randomReadyNode(this.d.prng);
      if (id === undefined || !this.write(id, 'Unknown', now)) continue;
      this.counters.flaps++;
      this.d.faults.count('flap');
      this.recoveries.add(id, now + flap.downMs, true);
    }
  }

  private write(id: number, status: 'True' | 'Unknown', now: number): boolean {
    const name = this.d.index.nodeNames[id];
    try {
      const done = this.d.store.mutate('nodes', undefined, name, (o) => setReady(o, status, new Date(now).toISOString())) !== undefined;
      if (done && status === 'True') this.counters.recovered++;
      return done;
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
