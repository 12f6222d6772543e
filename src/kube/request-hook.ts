/**
 * The per-request report every kube call makes, for metrics (e.g. a histogram labelled by verb,
 * resource and code, like client-go's `rest_client_request_duration_seconds`).
 */
export interface RequestReport {
  /** `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`. */
  verb: string;
  /** Plural resource, with `/status` for the subresource (e.g. `nodes/status`). */
  resource: string;
  /** HTTP status; 0 when no response arrived (network error, timeout, abort). */
  code: number;
  /** Wall time of this one attempt (retries report separately), ms. */
  durationMs: number;
  /**
   * Before the attempt: ms it waited for an in-flight slot and a rate-limiter token. Absent for
   * calls outside both bounds (watches, lists, lease calls). Under load this, not `durationMs`,
   * is where a request's latency goes: the slot queue is the controller's own.
   */
  queuedMs?: number;
}

/** Must not throw; it is called on the request path. */
export type RequestHook = (report: RequestReport) => void;

/** Calls `hook` and swallows anything it throws (metrics must never break a request). */
export function report(hook: RequestHook | undefined, r: RequestReport): void {
  if (!hook) return;
  try {
    hook(r);
  } catch {
    // a broken metrics hook is not the request's problem
  }
}
