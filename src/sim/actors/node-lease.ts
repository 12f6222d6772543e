/**
 * Lease-style node heartbeats, as the kubelet sends them: one coordination.k8s.io/v1 Lease
 * per node in `kube-node-lease`, renewed every `leaseRenewMs`. Renewals walk the nodes round
 * robin, a slice per tick, so a fleet's renewals are spread evenly over the period rather
 * than arriving together; Node objects are not written. NotReady nodes stop renewing.
 * Renewals are capped at {@link MAX_LEASE_WRITES_PER_SECOND}: beyond that many nodes × 1/period
 * the period stretches (and each Lease's duration with it, four periods as in the kubelet).
 */
import { StoreError, type KubeObject, type ResourceName, type SimStore, type StoreEventType } from '../store/sim-store.js';
import { TickClock, createWriteErrorLog, type FleetActor } from './actor.js';
import type { FleetIndex } from './fleet-index.js';
import { NODE_LEASE_NAMESPACE } from './names.js';
import { leaseObject, microTime } from './objects.js';

export interface NodeLeaseDeps {
  store: SimStore;
  index: FleetIndex;
  leaseRenewMs: number;
}

/** At 100,000 nodes and a 10 s period the kubelet would write 10,000 Leases/s; the simulator caps it. */
export const MAX_LEASE_WRITES_PER_SECOND = 2000;

export function createNodeLeases(deps: NodeLeaseDeps): FleetActor {
  return new NodeLeases(deps);
}

class NodeLeases implements FleetActor {
  readonly name = 'node-lease';
  readonly resources: ReadonlySet<ResourceName> = new Set<ResourceName>();
  readonly tickMs = 100;
  private cursor = 0;
  private credit = 0;
  private readonly clock = new TickClock(this.tickMs);
  private readonly writeError = createWriteErrorLog('node-lease');
  private readonly counters = { leasesCreated: 0, leasesRenewed: 0, writeErrors: 0 };

  constructor(private readonly d: NodeLeaseDeps) {}

  onEvent(_type: StoreEventType, _resource: ResourceName, _o: KubeObject): void {}

  tick(now: number, deadline: number): void {
    const { index } = this.d;
    const nodes = index.nodeCount();
    const elapsed = this.clock.elapsed(now);
    if (nodes === 0) return;
    const periodMs = Math.max(this.d.leaseRenewMs, (nodes * 1000) / MAX_LEASE_WRITES_PER_SECOND);
    const perTick = (nodes * this.tickMs) / periodMs;
    // Credit is capped at a few ticks' worth, so a stall does not turn into a burst.
    this.credit = Math.min(4 * perTick + 1, this.credit + (nodes * elapsed) / periodMs);
    const renewTime = microTime(now);
    // The kubelet renews at a quarter of the lease duration.
    const durationSeconds = Math.max(1, Math.round((4 * periodMs) / 1000));
    while (this.credit >= 1 && performance.now() < deadline) {
      this.credit--;
      const id = this.cursor;
      this.cursor = (this.cursor + 1) % nodes;
      if (index.exists(id) && index.isReady(id)) this.renew(index.nodeNames[id], renewTime, durationSeconds);
    }
  }

  private renew(node: string, renewTime: string, durationSeconds: number): void {
    const { store } = this.d;
    try {
      const renewed = store.mutate('leases', NODE_LEASE_NAMESPACE, node, (o) => {
        o.spec = { ...((o.spec ?? {}) as Record<string, unknown>), holderIdentity: node, leaseDurationSeconds: durationSeconds, renewTime };
      });
      if (renewed) {
        this.counters.leasesRenewed++;
        return;
      }
      store.create('leases', leaseObject(NODE_LEASE_NAMESPACE, node, renewTime, durationSeconds));
      this.counters.leasesCreated++;
    } catch (err) {
      if (err instanceof StoreError && err.reason === 'AlreadyExists') return;
      this.counters.writeErrors++;
      this.writeError(err, `lease of node ${node}`);
    }
  }

  stats(): Record<string, number> {
    return { ...this.counters };
  }
}
