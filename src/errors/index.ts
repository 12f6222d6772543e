export { ERRORS, type ErrorCode } from './catalogue.js';
export { FleetError, fleetError, isFleetError, isExpectedOperationRefusal, isNotLeader, isNotOwner, isNotSent } from './fleet-error.js';
