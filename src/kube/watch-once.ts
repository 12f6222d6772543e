/**
 * One watch request through client-node's `Watch`, with a no-event watchdog, reduced to how it
 * ended. The reflector decides what to do next (relist, back off, stop).
 *
 * client-node 1.4 has no effective client-side watch timeout (it builds a 30 s timeout signal
 * and then replaces it with its own), so a half-dead connection would stall silently; the
 * watchdog aborts the watch when nothing (not even a bookmark) arrived for `watchdogMs`.
 * `Watch.watch` hands out its AbortController only once the response headers arrived, so a
 * request whose headers never come is bounded another way: its fetch options carry node-fetch's
 * `timeout`, which runs from the socket to the response headers only (the watch stream after
 * them is not timed) and closes the request when it fires.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import type { FleetKubeConfig } from './kube-config.js';
import { statusCodeOf } from './kube-errors.js';

/**
 * How a watch ended, which decides what the reflector does next, as client-go's reflector does:
 * - `gone`: 410 (expired resourceVersion): relist;
 * - `failed`: the server refused the watch (a status other than 410 and 429) or sent an ERROR
 *   event: relist after backoff (client-go returns from ListAndWatch);
 * - `error`: the connection failed or the server asked to slow down (429): watch again from the
 *   same resourceVersion after backoff;
 * - `closed`: normal end of the stream (the server's timeout): watch again.
 */
export type WatchEnd = 'gone' | 'failed' | 'error' | 'closed' | 'watchdog' | 'stopped';

/** The end a failed watch start or an ERROR event with this status code calls for. */
export function failureEnd(code: number): WatchEnd {
  if (code === 410) return 'gone';
  return code === 0 || code === 429 ? 'error' : 'failed';
}

export interface WatchOnceOptions {
  kc: FleetKubeConfig;
  path: string;
  query: Record<string, string | number | boolean | undefined>;
  watchdogMs: number;
  /** Every event but ERROR (which ends the watch). Must not throw. */
  onEvent(type: string, obj: unknown): void;
  /** The request was answered (code 200) or failed to start (its status, 0 for network errors). */
  onStarted?(code: number, durationMs: number): void;
  /** Called for an ERROR event or a failed request, for logging. */
  onFailure?(code: number, detail: unknown): void;
  onWatchdog?(): void;
  /** Wait for the response headers before the request is closed; default min(30 s, watchdogMs). */
  headersTimeoutMs?: number;
}

/** The config `Watch` reads (the cluster, the fetch options), with the headers timeout added. */
function withHeadersTimeout(kc: FleetKubeConfig, timeoutMs: number): KubeConfig {
  const config = {
    getCurrentCluster: () => kc.getCurrentCluster(),
    applyToFetchOptions: async (opts: object) => ({ ...(await kc.applyToFetchOptions(opts)), timeout: timeoutMs }),
  };
  return config as unknown as KubeConfig;
}

export interface WatchHandle {
  /** Resolves once with how the watch ended. */
  ended: Promise<WatchEnd>;
  /** Ends the watch now (no-op once ended). */
  end(why: WatchEnd): void;
}

export function watchOnce(o: WatchOnceOptions): WatchHandle {
  let ended = false;
  let controller: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  let resolveEnded: (e: WatchEnd) => void = () => {};
  const endedP = new Promise<WatchEnd>((r) => (resolveEnded = r));
  const end = (why: WatchEnd) => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    controller?.abort();
    resolveEnded(why);
  };
  // The watchdog is armed once and, when it fires, re-armed for what is left of the period
  // since the last event: an event only records its time, where re-arming a timer on every
  // event cost ~1 µs each on a watch that delivers tens of thousands per second.
  let lastEventAt = performance.now();
  const arm = (ms: number) => {
    timer = setTimeout(() => {
      const quiet = performance.now() - lastEventAt;
      if (quiet < o.watchdogMs) return arm(o.watchdogMs - quiet);
      o.onWatchdog?.();
      end('watchdog');
    }, ms);
  };
  arm(o.watchdogMs);
  const t0 = performance.now();
  const onEvent = (type: string, obj: unknown) => {
    if (ended) return;
    lastEventAt = performance.now();
    if (type === 'ERROR') {
      const code = statusCodeOf(obj);
      o.onFailure?.(code, obj);
      // An ERROR event always ends the watch in client-go's reflector (a relist), 429 aside.
      return end(code === 0 ? 'failed' : failureEnd(code));
    }
    o.onEvent(type, obj);
  };
  // client-node's Watch.watch reports a refused watch (a non-200 status) through `done` before
  // it resolves, so its status is known by then.
  let refusedWith: number | undefined;
  const onDone = (err: unknown) => {
    if (ended) return;
    if (!err) return end('closed');
    const code = statusCodeOf(err);
    if (controller === undefined && code !== 0) refusedWith = code;
    o.onFailure?.(code, err);
    end(failureEnd(code));
  };
  const headersTimeoutMs = o.headersTimeoutMs ?? Math.min(30_000, o.watchdogMs);
  new Watch(withHeadersTimeout(o.kc, headersTimeoutMs)).watch(o.path, o.query, onEvent, onDone).then(
    (c) => {
      controller = c;
      o.onStarted?.(refusedWith ?? 200, performance.now() - t0);
      if (ended) c.abort();
    },
    (err: unknown) => {
      o.onStarted?.(statusCodeOf(err), performance.now() - t0);
      onDone(err ?? new Error('watch request rejected'));
    },
  );
  return { ended: endedP, end };
}
