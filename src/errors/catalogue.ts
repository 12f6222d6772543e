/**
 * The one catalogue of fleet-attach error codes.
 *
 * Every error the host raises on purpose is a {@link FleetError} with a code from this table.
 * The table says what the code means and which HTTP status it maps to; the HTTP layer
 * (src/http) is the only place that turns a FleetError into a response, and it reads the status
 * from here. Codes are `FA_ERR_<AREA>_<WHAT>`.
 */
export const ERRORS = {
  // command line and configuration
  FA_ERR_FLAG_UNKNOWN: { status: 400, message: 'unknown flag' },
  FA_ERR_FLAG_INVALID: { status: 400, message: 'invalid flag value' },
  FA_ERR_KUBECONFIG_INVALID: { status: 400, message: 'invalid kubeconfig' },
  // HTTP inspection API
  FA_ERR_HTTP_BAD_REQUEST: { status: 400, message: 'bad request' },
  FA_ERR_HTTP_UNAUTHORIZED: { status: 401, message: 'unauthorized' },
  FA_ERR_HTTP_FORBIDDEN_HOST: { status: 403, message: 'Host header names no loopback address' },
  FA_ERR_HTTP_NOT_FOUND: { status: 404, message: 'not found' },
  FA_ERR_HTTP_NODE_NOT_FOUND: { status: 404, message: 'node not found' },
  FA_ERR_HTTP_VOLUME_NOT_FOUND: { status: 404, message: 'volume not found' },
  FA_ERR_HTTP_NOT_READY: { status: 503, message: 'not ready' },
  FA_ERR_HTTP_UI_NOT_BUILT: { status: 503, message: 'dashboard assets not built (run npm run build:ui)' },
  FA_ERR_INTERNAL: { status: 500, message: 'internal error' },
  // operations (attach/detach); expected ones are recognised by predicates and stay quiet
  FA_ERR_OP_ALREADY_PENDING: { status: 409, message: 'an operation is already pending for this volume' },
  FA_ERR_OP_BACKOFF: { status: 429, message: 'operation is in exponential backoff' },
  FA_ERR_OP_TIMEOUT: { status: 504, message: 'operation timed out' },
  FA_ERR_OP_FAILED: { status: 500, message: 'operation failed' },
  FA_ERR_VOLUME_IN_USE: { status: 409, message: 'volume is still in use by node' },
  FA_ERR_PLUGIN_NOT_FOUND: { status: 422, message: 'no attachable volume plugin' },
  FA_ERR_SPEC_UNSUPPORTED: { status: 422, message: 'volume source cannot be translated' },
  // Kubernetes API
  FA_ERR_KUBE_API: { status: 502, message: 'kubernetes API error' },
  FA_ERR_KUBE_OBJECT_INVALID: { status: 422, message: 'malformed object' },
  FA_ERR_KUBE_CONFLICT: { status: 409, message: 'the object changed since it was read (a compare-and-swap lost)' },
  FA_ERR_VOLUME_LOCKED: { status: 409, message: "the volume's attach lock is held by another node" },
  // leader election and stop: a call refused before it is sent because this replica does not
  // lead or is stopping (expected then: recognised by isNotLeader and kept quiet)
  FA_ERR_NOT_LEADER: { status: 503, message: 'not sent: the controller is stopping or does not lead' },
  // sharding: a write refused before it is sent because this replica does not own the bucket of
  // the node it is for (expected during a hand-over: recognised by isNotOwner and kept quiet)
  FA_ERR_NOT_OWNER: { status: 503, message: 'not sent: this replica does not own the node' },
  // WASM state and kernel
  FA_ERR_STATE_CAPACITY: { status: 507, message: 'state table capacity exceeded' },
  FA_ERR_KERNEL: { status: 500, message: 'plan kernel failed' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;
