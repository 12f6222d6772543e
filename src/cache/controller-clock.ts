/**
 * The controller's clock for everything it times: detach-request timers (F4), backoff windows
 * (I3), operation and timer ages in the inspection API, the periodic passes. Milliseconds since
 * the epoch as of process start, advanced by the monotonic clock (`performance.now()`), so a
 * step of the wall clock (NTP, a resumed VM) neither expires a timer early nor holds one back:
 * upstream's `time.Since` reads Go's monotonic clock for the same reason. Values read like
 * `Date.now()` and drift from it only by the wall clock's own corrections; Event timestamps,
 * which the API server's clients read as wall time, keep `Date.now()`.
 */
export function controllerNow(): number {
  return performance.timeOrigin + performance.now();
}
