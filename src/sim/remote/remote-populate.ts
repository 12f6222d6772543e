/**
 * The fleet generator over the API: the same fleet as populateFleet (src/sim/actors/generator.ts,
 * same names and seeded draws, so a seed gives the same fleet in both), created through a
 * remote store: POSTs with its bounded concurrency, at most `maxPending` writes queued (the
 * generator waits for the queue), progress per node once its objects are queued.
 *
 * Objects already in the cluster are left as they are and counted as `existing`, so that the
 * actors can be started again against a cluster they populated before.
 */
import { FLEET_NAMESPACE, NODE_LEASE_NAMESPACE, nodeName, podName, pvName, pvcName, volumeHandle } from '../actors/names.js';
import { csiDriverObject, namespaceObject, nodeObject, podObject, pvObject, pvcObject } from '../actors/objects.js';
import { resolveFleetActorOptions, type FleetActorOptions } from '../actors/options.js';
import type { FleetPopulation } from '../actors/generator.js';
import { createPrng } from '../actors/prng.js';
import type { KubeObject, ResourceName } from '../store/sim-store.js';
import type { RemoteStore } from './remote-store.js';

export interface RemotePopulation extends FleetPopulation {
  /** Objects found in the cluster already (left unchanged). */
  existing: number;
  /** Writes that failed (the store's error count grown during the population). */
  errors: number;
}

export interface RemotePopulateHooks {
  /** Called with the nodes whose objects are queued, at most every `progressEveryNodes` nodes, and at the end. */
  onProgress?(nodesDone: number, nodesTotal: number): void;
  /** Writes allowed in the queue before the generator waits (default 2000). */
  maxPending?: number;
}

const PROGRESS_EVERY_NODES = 50;

/**
 * Creates the fleet of `partial` through `store`; resolves once every write is done.
 * @example await populateRemoteFleet(store, { nodes: 20, podsPerNode: 3 })
 */
export async function populateRemoteFleet(store: RemoteStore, partial: Partial<FleetActorOptions> = {}, hooks: RemotePopulateHooks = {}): Promise<RemotePopulation> {
  const opts = resolveFleetActorOptions(partial);
  const started = performance.now();
  const errorsBefore = store.stats().errors;
  const prng = createPrng(opts.seed).fork('generator');
  const out: RemotePopulation = { namespaces: 0, nodes: 0, pods: 0, persistentVolumeClaims: 0, persistentVolumes: 0, csiDrivers: 0, elapsedMs: 0, existing: 0, errors: 0 };
  const maxPending = Math.max(1, hooks.maxPending ?? 2000);
  /** The object as the store has it, created first (and counted under `field`) when absent. */
  const ensure = (resource: ResourceName, obj: KubeObject, field: Exclude<keyof FleetPopulation, 'elapsedMs'>): KubeObject => {
    const found = store.get(resource, obj.metadata.namespace, obj.metadata.name);
    if (found) {
      out.existing++;
      return found;
    }
    out[field]++;
    // The remote store keeps the status it is given in its prediction and writes it after the create.
    return store.create(resource, obj);
  };

  for (const ns of ['default', NODE_LEASE_NAMESPACE, FLEET_NAMESPACE]) ensure('namespaces', namespaceObject(ns), 'namespaces');
  ensure('csidrivers', csiDriverObject(opts.driver), 'csiDrivers');

  for (let n = 1; n <= opts.nodes; n++) {
    const now = new Date().toISOString();
    const node = nodeName(n);
    ensure('nodes', nodeObject(node, now), 'nodes');
    for (let slot = 0; slot < opts.podsPerNode; slot++) {
      // The generator's draws, in its order.
      const rwx = prng.chance(opts.rwxFraction);
      const handle = volumeHandle(prng.hex8(), n, slot);
      const claim = ensure('persistentvolumeclaims', pvcObject(FLEET_NAMESPACE, pvcName(n, slot), pvName(n, slot), rwx), 'persistentVolumeClaims');
      ensure('persistentvolumes', pvObject(pvName(n, slot), opts.driver, handle, rwx, { namespace: FLEET_NAMESPACE, name: pvcName(n, slot), uid: claim.metadata.uid ?? '' }), 'persistentVolumes');
      ensure('pods', podObject(FLEET_NAMESPACE, podName(n, slot), node, [pvcName(n, slot)], now), 'pods');
    }
    if (store.pending() > maxPending) await store.drained(Math.floor(maxPending / 2));
    if (n % PROGRESS_EVERY_NODES === 0 && n < opts.nodes) hooks.onProgress?.(n, opts.nodes);
  }
  await store.drained(0);
  hooks.onProgress?.(opts.nodes, opts.nodes);
  out.errors = store.stats().errors - errorsBefore;
  out.elapsedMs = performance.now() - started;
  return out;
}
