/**
 * Starts the switched-on fleet actors against a store. One store subscription feeds the
 * shared index and then each actor, parsing each event at most once and only for resources
 * some actor needs. The actors first see every existing object as ADDED (one full list per
 * resource), so they can start on a populated store; for fleets of hundreds of thousands of
 * pods, start them before `populateFleet` instead, to skip that list.
 */
import type { KubeObject, ResourceName, SimStore, StoreEventType } from '../store/sim-store.js';
import { startTicker, type FleetActor } from './actor.js';
import { createAttacher } from './attacher.js';
import { createChurn } from './churn.js';
import { FleetIndex } from './fleet-index.js';
import { createKubelet } from './kubelet.js';
import type { FleetFaults } from './fleet-faults.js';
import { createNodeDeletions } from './node-deletion.js';
import { createNodeFailures } from './node-failure.js';
import { createNodeFlaps } from './node-flap.js';
import { createNodeLeases } from './node-lease.js';
import { resolveFleetActorOptions, type FleetActorOptions } from './options.js';
import { createPrng } from './prng.js';

export interface FleetActors {
  /** Cancels every timer and the store subscription; resolves when nothing runs any more. */
  stop(): Promise<void>;
  /** Counters per running actor (e.g. `attacher.attached`, `kubelet.mounted`), plus index sizes. */
  stats(): FleetActorStats;
  /**
   * Starts pod churn at `rate` changes/s on the running fleet, on the shared index and store
   * subscription (a churn started apart would keep a second index of every pod, node and
   * volume, fed from a full list). False, and nothing changes, when churn already runs or the
   * fleet is stopped.
   */
  startChurn(rate: number): boolean;
  /**
   * Stops pod churn: no new creates or deletions from then on (deletions already requested
   * still finish through the kubelets). False when churn does not run.
   */
  stopChurn(): boolean;
}

export type FleetActorStats = Record<string, Record<string, number>>;

// Resources the shared index follows whatever actors run.
const INDEXED: ReadonlySet<ResourceName> = new Set<ResourceName>(['nodes', 'pods', 'persistentvolumes']);

/**
 * Starts the actors switched on in `opts` (attacher, kubelet with node leases, churn when
 * `churn > 0`, node failures when `nodeFailureRate > 0`). With `faults`, the attacher consults
 * them, churn follows their extra rate, and the node flap and node deletion actors run.
 * @example const actors = startFleetActors(store, { attacher: true, kubelet: true }); … await actors.stop();
 */
export function startFleetActors(store: SimStore, partial: Partial<FleetActorOptions> = {}, faults?: FleetFaults): FleetActors {
  const opts = resolveFleetActorOptions(partial);
  const index = new FleetIndex();
  const prng = createPrng(opts.seed);
  const actors: FleetActor[] = [];
  if (opts.attacher) {
    actors.push(createAttacher({ store, prng: prng.fork('attacher'), driver: opts.driver, attachLatencyMs: opts.attachLatencyMs, detachLatencyMs: opts.detachLatencyMs, attachFailureRate: opts.attachFailureRate, faults }));
  }
  if (opts.kubelet) {
    actors.push(createKubelet({ store, index, mountLatencyMs: opts.mountLatencyMs, unmountLatencyMs: opts.unmountLatencyMs }));
    actors.push(createNodeLeases({ store, index, leaseRenewMs: opts.leaseRenewMs }));
  }
  const churn = (rate: number | (() => number)) => createChurn({ store, index, prng: prng.fork('churn'), rate, driver: opts.driver, rwxFraction: opts.rwxFraction, targetPods: opts.nodes * opts.podsPerNode, graceful: opts.kubelet });
  if (opts.churn > 0 || faults) actors.push(churn(faults ? () => opts.churn + faults.churnRate() : opts.churn));
  if (opts.nodeFailureRate > 0) {
    actors.push(createNodeFailures({ store, index, prng: prng.fork('node-failure'), rate: opts.nodeFailureRate, recoveryMs: opts.nodeRecoveryMs, outOfServiceFraction: opts.outOfServiceFraction }));
  }

  if (faults) {
    actors.push(createNodeFlaps({ store, index, prng: prng.fork('node-flap'), faults }));
    actors.push(createNodeDeletions({ store, index, prng: prng.fork('node-deletion'), faults }));
  }

  const wanted = new Set<ResourceName>(INDEXED);
  for (const a of actors) for (const r of a.resources) wanted.add(r);
  const dispatch = (type: StoreEventType, resource: ResourceName, obj: KubeObject) => {
    // A pod update that changed nothing the index keeps is no actor's business: the kubelet
    // would otherwise recompute its node's wanted volumes for every status or label write.
    if (INDEXED.has(resource) && !index.applyEvent(type, resource, obj)) return;
    for (const a of actors) if (a.resources.has(resource)) a.onEvent(type, resource, obj);
  };

  // Listing and subscribing happen in one synchronous step, so no change falls between them.
  for (const r of ['nodes', 'persistentvolumes', 'pods', 'volumeattachments'] as const) {
    if (wanted.has(r)) for (const o of store.list(r)) dispatch('ADDED', r, o);
  }
  const unsubscribe = store.subscribe((ev) => {
    if (wanted.has(ev.resource)) dispatch(ev.type, ev.resource, ev.view());
  });
  const stopTickers = actors.map((a) => startTicker(a));

  let stopped = false;
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      unsubscribe();
      for (const s of stopTickers) s();
    },
    startChurn(rate) {
      if (stopped || actors.some((a) => a.name === 'churn')) return false;
      // Churn follows pods only, which the shared index (and so `wanted`) always includes; it
      // reads the existing fleet through the index, so it needs no replay of current objects.
      const a = churn(rate);
      actors.push(a);
      stopTickers.push(startTicker(a));
      return true;
    },
    stopChurn() {
      const i = actors.findIndex((a) => a.name === 'churn');
      if (stopped || i < 0) return false;
      stopTickers[i]();
      actors.splice(i, 1);
      stopTickers.splice(i, 1);
      return true;
    },
    stats() {
      const out: FleetActorStats = { index: { nodes: index.nodeCount(), readyNodes: index.readyNodeCount(), pods: index.podCount(), boundVolumes: index.boundVolumeCount() } };
      for (const a of actors) out[a.name] = a.stats();
      return out;
    },
  };
}
