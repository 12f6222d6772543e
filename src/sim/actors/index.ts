/**
 * The simulated fleet's actors: the generator that fills a store with a bound fleet, and the
 * actors that play the parts around the attach/detach controller (CSI external-attacher,
 * kubelets with lease heartbeats, pod churn, node failures). They act on the SimStore
 * directly, never through HTTP.
 */
export { DEFAULT_FLEET_ACTOR_OPTIONS, resolveFleetActorOptions, type FleetActorOptions } from './options.js';
export { populateFleet, type FleetPopulation, type PopulateHooks } from './generator.js';
export { startFleetActors, type FleetActors, type FleetActorStats } from './fleet-actors.js';
export { ATTACH_RETRY_INITIAL_MS, ATTACH_RETRY_MAX_MS } from './attacher.js';
export {
  CONTROLLER_MANAGED_ANNOTATION,
  FLEET_NAMESPACE,
  NODE_LEASE_NAMESPACE,
  OUT_OF_SERVICE_TAINT,
  attacherFinalizer,
  nodeName,
  uniqueVolumeName,
  volumeAttachmentName,
} from './names.js';
export { createPrng, type Prng } from './prng.js';
export { NO_FLEET_FAULTS, type FleetFaults } from './fleet-faults.js';
