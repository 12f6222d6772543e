/**
 * Node deletions with volumes attached (an injected fault): a Poisson process at the live
 * `nodeDeletion()` rate deletes the Node object of a random Ready node that lists volumes in
 * `status.volumesAttached`, as when a machine is removed from the cluster without draining.
 * After `gcMs` its pods are force-deleted and recreated on other Ready nodes with the same
 * claims (what the pod garbage collector and workload controllers do; pods already being
 * deleted are not recreated); after `rejoinMs` the node is created again, empty and Ready (a
 * replacement machine with the same name). Pending GCs and rejoins still happen after the
 * fault is switched off, so the fleet returns to its size.
 */
import type { KubeObject, ResourceName, SimStore, StoreEventType } from '../store/sim-store.js';
import { countWriteErrors, isLostRace, type FleetActor } from './actor.js';
import { DelayQueue } from './delay-queue.js';
import { nodeVolumeNames } from './fields.js';
import type { FleetFaults } from './fleet-faults.js';
import type { FleetIndex } from './fleet-index.js';
import { evictPods } from './node-writes.js';
import { nodeObject } from './objects.js';
import { PoissonArrivals } from './poisson-arrivals.js';
import type { Prng } from './prng.js';
import { createWithStatus } from './provision.js';

export interface NodeDeletionDeps {
  store: SimStore;
  index: FleetIndex;
  prng: Prng;
  faults: FleetFaults;
}

const MAX_DELETIONS_PER_TICK = 20;
const NO_DELETIONS = { rate: 0, gcMs: 0, rejoinMs: 0 };
// Draws per deletion to find a node with volumes attached.
const PICK_TRIES = 16;

export function createNodeDeletions(deps: NodeDeletionDeps): FleetActor {
  return new NodeDeletions(deps);
}

class NodeDeletions implements FleetActor {
  readonly name = 'node-deletion';
  readonly resources: ReadonlySet<ResourceName> = new Set<ResourceName>();
  readonly tickMs = 100;
  private readonly arrivals: PoissonArrivals;
  private readonly gcs = new DelayQueue<number>();
  private readonly rejoins = new DelayQueue<number>();
  private readonly counters = { nodesDeleted: 0, podsCollected: 0, podsRecreated: 0, nodesRejoined: 0, skipped: 0, writeErrors: 0 };
  private readonly countError = countWriteErrors('node-deletion', this.counters);

  constructor(private readonly d: NodeDeletionDeps) {
    this.arrivals = new PoissonArrivals(d.prng, this.tickMs, MAX_DELETIONS_PER_TICK);
  }

  onEvent(_type: StoreEventType, _resource: ResourceName, _o: KubeObject): void {}

  tick(now: number, deadline: number): void {
    for (const id of this.gcs.popDue(now, 100)) this.collect(id, now);
    for (const id of this.rejoins.popDue(now, 100)) this.rejoin(id, now);
    const del = this.d.faults.nodeDeletion() ?? NO_DELETIONS;
    this.arrivals.take(now, del.rate, deadline, () => {
      const id = this.pick();
      if (id === undefined) {
        this.counters.skipped++;
        return;
      }
      if (!this.remove(id)) return;
      this.gcs.add(id, now + del.gcMs, true);
      this.rejoins.add(id, now + Math.max(del.gcMs, del.rejoinMs), true);
    });
  }

  /** A Ready node with volumes attached and no deletion of its own pending. */
  private pick(): number | undefined {
    const { index, prng, store } = this.d;
    for (let i = 0; i < PICK_TRIES; i++) {
      const id = index.randomReadyNode(prng);
      if (id === undefined) return undefined;
      if (this.rejoins.has(id)) continue;
      const node = store.get('nodes', undefined, index.nodeNames[id]);
      if (node && nodeVolumeNames(node, 'volumesAttached').length > 0) return id;
    }
    return undefined;
  }

  private remove(id: number): boolean {
    const name = this.d.index.nodeNames[id];
    try {
      if (!this.d.store.delete('nodes', undefined, name, { gracePeriodSeconds: 0 })) return false;
      this.counters.nodesDeleted++;
      this.d.faults.count('delete-node');
      return true;
    } catch (err) {
      this.failed(err, `delete node ${name}`);
      return false;
    }
  }

  /** Force-deletes the pods bound to a deleted node and recreates the live ones elsewhere. */
  private collect(id: number, now: number): void {
    const { deleted, recreated } = evictPods(this.d, id, new Date(now).toISOString(), (err, what) => this.failed(err, what));
    this.counters.podsCollected += deleted;
    this.counters.podsRecreated += recreated;
  }

  private rejoin(id: number, now: number): void {
    const name = this.d.index.nodeNames[id];
    try {
      createWithStatus(this.d.store, 'nodes', nodeObject(name, new Date(now).toISOString()));
      this.counters.nodesRejoined++;
    } catch (err) {
      this.failed(err, `rejoin node ${name}`);
    }
  }

  private failed(err: unknown, what: string): void {
    if (isLostRace(err)) this.counters.skipped++;
    else this.countError(err, what);
  }

  stats(): Record<string, number> {
    return { ...this.counters, nodesGone: this.rejoins.size };
  }
}
