/**
 * Fault injection for the simulated fleet: the `--faults` spec, the injector that
 * decides and counts faults, and the front that injects them into API traffic.
 */
export { FAULT_KINDS, NO_FAULTS, formatFaultSpec, parseFaultSpec, type FaultKind, type FaultSpec } from './fault-spec.js';
export { createFaultInjector, type FaultInjector, type FaultInjectorOptions, type RequestFault } from './fault-injector.js';
export { FAULTS_ADMIN_PATH, createFaultFront, type FaultFront, type FaultFrontOptions } from './fault-front.js';
