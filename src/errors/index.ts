export { ERRORS, type ErrorCode } from './catalogue.js';
export { FleetError, fleetError, isFleetError, isExpectedOperationRefusal, isNotLeader, isNotOwner } from './fleet-error.js';
