/**
 * The simulated fleet's actors run over the API against any cluster (`fleet-attach sim
 * --actors-only --kubeconfig F`): a remote store (remote-store.ts) mirrors the cluster, the
 * usual actors (src/sim/actors: CSI attacher, kubelets with node Leases, churn, node failures)
 * run on it unchanged, and the generator creates the fleet through the API. What a kwok-style
 * cluster — a real kube-apiserver with no kubelets and no CSI attacher — needs around the
 * attach/detach controller.
 *
 * The actors start first, then the population, as in start-simulator.ts: they follow the fleet
 * as it is created. Pods are created with spec.nodeName set: no scheduler is needed.
 */
import type { LoadKubeConfigOptions } from '../../kube/kube-config.js';
import { logger } from '../../log/logger.js';
import { startFleetActors, type FleetActorOptions, type FleetActors } from '../actors/index.js';
import { FLEET_LABEL } from '../actors/names.js';
import { DEFAULT_MIRROR, withNodeSelector } from './remote-paths.js';
import { populateRemoteFleet, type RemotePopulation } from './remote-populate.js';
import { createRemoteStore, type RemoteStore, type RemoteStoreOptions } from './remote-store.js';

export interface RemoteFleetOptions extends Omit<RemoteStoreOptions, 'kubeconfig'> {
  kubeconfig: LoadKubeConfigOptions;
  /** The fleet and its actors, as the in-process simulator takes them (`nodes: 0`: actors only, no population). */
  fleet?: Partial<FleetActorOptions>;
  /** Called during the population with the nodes done so far. */
  onProgress?(nodesDone: number, nodesTotal: number): void;
  /**
   * Label selector of the nodes the actors play kubelet for (and renew Leases of); default
   * {@link DEFAULT_NODE_SELECTOR}, the label of the generated nodes, so that a cluster's own
   * nodes are left alone. '' for every node. Ignored when `resources` is given.
   */
  nodeSelector?: string;
}

export const DEFAULT_NODE_SELECTOR = `${FLEET_LABEL}=true`;

export interface RemoteFleet {
  store: RemoteStore;
  actors: FleetActors;
  population: RemotePopulation;
  /** Actor and remote-store counters (`remote.requests`, `attacher.attached`…). */
  stats(): Record<string, Record<string, number>>;
  /** Stops the actors, lets pending writes finish (up to `flushMs`, default 5 s), closes the watches. */
  stop(opts?: { flushMs?: number }): Promise<void>;
}

const log = logger('sim-remote');

/**
 * @example const fleet = await startRemoteFleet({ kubeconfig: { path: 'kubeconfig' }, fleet: { nodes: 20, podsPerNode: 3 } }); … await fleet.stop();
 */
export async function startRemoteFleet(o: RemoteFleetOptions): Promise<RemoteFleet> {
  const { fleet = {}, onProgress, nodeSelector = DEFAULT_NODE_SELECTOR, ...storeOpts } = o;
  const store = await createRemoteStore({ resources: withNodeSelector(DEFAULT_MIRROR, nodeSelector), ...storeOpts });
  const actors = startFleetActors(store, fleet);
  let population: RemotePopulation;
  try {
    population = await populateRemoteFleet(store, fleet, { onProgress });
  } catch (err) {
    await actors.stop();
    await store.close({ flushMs: 0 });
    throw err;
  }
  log.info({ ...population, requests: store.stats().requests }, 'fleet created through the API');
  let stopped: Promise<void> | undefined;
  return {
    store,
    actors,
    population,
    stats: () => ({ ...actors.stats(), remote: { ...store.stats() } }),
    stop(opts = {}) {
      stopped ??= (async () => {
        await actors.stop();
        await store.close(opts);
      })();
      return stopped;
    },
  };
}
