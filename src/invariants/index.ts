/** Safety invariants of attach/detach, checked against the simulator's store. */
export { createInvariantChecker, type ConvergenceStatus, type InvariantChecker, type InvariantCheckerOptions } from './invariant-checker.js';
export { VIOLATION_KINDS, type Violation, type ViolationKind } from './violation.js';
