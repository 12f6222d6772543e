export { ERRORS, type ErrorCode } from './catalogue.js';
export { FleetError, fleetError, isFleetError, isExpectedOperationRefusal, isNotLeader } from './fleet-error.js';
