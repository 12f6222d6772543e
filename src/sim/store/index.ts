/** The simulator's object store: the SimStore contract and its in-memory implementation. */
export * from './sim-store.js';
export { createSimStore, qualified } from './create-sim-store.js';
export { kindDetails, resourceDetails } from './object-rules.js';
export type { SimStoreOptions, ServableStore, ListPage, ListPageOptions, BytePage } from './servable-store.js';
export { CommittedEvent } from './committed-event.js';
export { RESOURCES, RESOURCE_NAMES, API_GROUPS, findResource, resourcesOf, type ResourceInfo } from './resources.js';
