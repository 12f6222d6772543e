/**
 * The fleet actors over the API: a SimStore backed by a Kubernetes API server (list+watch
 * mirror, writes as API calls), the generator through it, and the whole remote fleet that
 * `fleet-attach sim --actors-only --kubeconfig F` runs.
 */
export { createRemoteStore, type RemoteStore, type RemoteStoreOptions, type RemoteStoreStats } from './remote-store.js';
export { populateRemoteFleet, type RemotePopulation, type RemotePopulateHooks } from './remote-populate.js';
export { DEFAULT_NODE_SELECTOR, startRemoteFleet, type RemoteFleet, type RemoteFleetOptions } from './remote-fleet.js';
export { DEFAULT_MIRROR, withNodeSelector, type MirrorSpec } from './remote-paths.js';
