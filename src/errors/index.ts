export { ERRORS, type ErrorCode } from './catalogue.js';
export { FleetError, fleetError, isFleetError, isExpectedOperationRefusal } from './fleet-error.js';
