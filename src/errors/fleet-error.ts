/**
 * FleetError: an error with a catalogue code, an optional cause and optional details.
 * Construct with {@link fleetError}; test with {@link isFleetError} or the predicates in
 * predicates.ts. `terminal` errors are not retried by the operation executor.
 */
import { ERRORS, type ErrorCode } from './catalogue.js';

export class FleetError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly terminal: boolean;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message?: string, opts: { cause?: unknown; terminal?: boolean; details?: Record<string, unknown> } = {}) {
    super(message ?? ERRORS[code].message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'FleetError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.terminal = opts.terminal ?? false;
    if (opts.details) this.details = opts.details;
  }
}

/** Builds a FleetError; the message defaults to the catalogue text. */
export function fleetError(code: ErrorCode, message?: string, opts?: { cause?: unknown; terminal?: boolean; details?: Record<string, unknown> }): FleetError {
  return new FleetError(code, message, opts);
}

export function isFleetError(err: unknown, code?: ErrorCode): err is FleetError {
  return err instanceof FleetError && (code === undefined || err.code === code);
}

/** A call the API client refused to send because this replica stepped down (request-runner.ts `maySend`). */
export function isNotLeader(err: unknown): boolean {
  return isFleetError(err, 'FA_ERR_NOT_LEADER');
}

/** A write refused because this replica does not own the bucket of its node (sharding/fenced-writes.ts). */
export function isNotOwner(err: unknown): boolean {
  return isFleetError(err, 'FA_ERR_NOT_OWNER');
}

/** A call refused before it was sent, by leadership or by ownership: nothing happened on the server. */
export function isNotSent(err: unknown): boolean {
  return isNotLeader(err) || isNotOwner(err);
}

/** Expected, quiet outcomes: an operation refused because one is pending or the key is backing off. */
export function isExpectedOperationRefusal(err: unknown): boolean {
  return isFleetError(err, 'FA_ERR_OP_ALREADY_PENDING') || isFleetError(err, 'FA_ERR_OP_BACKOFF');
}
