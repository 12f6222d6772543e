/**
 * The fleet generator: fills a store with Ready managed nodes and, per node, running pods
 * that each use their own bound PVC/PV pair (CSI, RWO or RWX by `rwxFraction`). Names are
 * functions of indexes and `seed`, so a seed replays the same fleet. Objects are created in
 * dependency order (PVC, PV, pod), so watchers never see a pod whose claim does not exist.
 */
import { StoreError, type SimStore } from '../store/sim-store.js';
import { FLEET_NAMESPACE, NODE_LEASE_NAMESPACE, nodeName, podName, pvName, pvcName, volumeHandle } from './names.js';
import { csiDriverObject, namespaceObject, nodeObject } from './objects.js';
import { resolveFleetActorOptions, type FleetActorOptions } from './options.js';
import { createPrng } from './prng.js';
import { createRunningPod, createWithStatus, provisionClaim } from './provision.js';

export interface FleetPopulation {
  namespaces: number;
  nodes: number;
  pods: number;
  persistentVolumeClaims: number;
  persistentVolumes: number;
  csiDrivers: number;
  /** Wall time of the whole population, milliseconds. */
  elapsedMs: number;
}

export interface PopulateHooks {
  /** Called after every batch of nodes with the nodes done so far. */
  onProgress?(nodesDone: number, nodesTotal: number): void;
}

// Nodes per synchronous batch; between batches the event loop runs (servers stay responsive).
const BATCH_NODES = 200;

/**
 * Populates `store`. `nodes: 0` creates only the namespaces and the CSIDriver. Namespaces and
 * the CSIDriver may already exist; any other existing object is an error (StoreError
 * AlreadyExists), since a second population with the same seed would collide by design.
 * @example await populateFleet(store, { nodes: 200, podsPerNode: 5, seed: 7 })
 */
export async function populateFleet(store: SimStore, partial: Partial<FleetActorOptions> = {}, hooks: PopulateHooks = {}): Promise<FleetPopulation> {
  const opts = resolveFleetActorOptions(partial);
  const started = performance.now();
  const prng = createPrng(opts.seed).fork('generator');
  const out: FleetPopulation = { namespaces: 0, nodes: 0, pods: 0, persistentVolumeClaims: 0, persistentVolumes: 0, csiDrivers: 0, elapsedMs: 0 };

  for (const ns of ['default', NODE_LEASE_NAMESPACE, FLEET_NAMESPACE]) {
    if (createIfAbsent(() => store.create('namespaces', namespaceObject(ns)))) out.namespaces++;
  }
  if (createIfAbsent(() => store.create('csidrivers', csiDriverObject(opts.driver)))) out.csiDrivers++;

  for (let first = 1; first <= opts.nodes; first += BATCH_NODES) {
    const last = Math.min(opts.nodes, first + BATCH_NODES - 1);
    const now = new Date().toISOString();
    for (let n = first; n <= last; n++) {
      const node = nodeName(n);
      createWithStatus(store, 'nodes', nodeObject(node, now));
      out.nodes++;
      for (let slot = 0; slot < opts.podsPerNode; slot++) {
        const rwx = prng.chance(opts.rwxFraction);
        const claimName = pvcName(n, slot);
        provisionClaim(store, { namespace: FLEET_NAMESPACE, pvcName: claimName, pvName: pvName(n, slot), driver: opts.driver, handle: volumeHandle(prng.hex8(), n, slot), rwx });
        createRunningPod(store, FLEET_NAMESPACE, podName(n, slot), node, [claimName], now);
        out.persistentVolumeClaims++;
        out.persistentVolumes++;
        out.pods++;
      }
    }
    hooks.onProgress?.(last, opts.nodes);
    if (last < opts.nodes) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  out.elapsedMs = performance.now() - started;
  return out;
}

/** Runs a create; false when the object already exists. */
function createIfAbsent(create: () => unknown): boolean {
  try {
    create();
    return true;
  } catch (err) {
    if (err instanceof StoreError && err.reason === 'AlreadyExists') return false;
    throw err;
  }
}
