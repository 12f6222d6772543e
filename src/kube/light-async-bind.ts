/**
 * A workaround, scoped to one synchronous call, for a Node 20 cost on every HTTP/2 request.
 *
 * `ClientHttp2Session.request()` wraps its connect callback with `AsyncResource#bind`, and on
 * Node 20 that `bind` also defines the deprecated `asyncResource` accessor (DEP0172) on the
 * wrapper through two `util.deprecate` calls, each of which re-parents a new function and
 * materialises a prototype object. `npm run bench:api -- --h2-request` measures Node's client at 0.55–0.64× the
 * CPU per request without it, and its garbage was ~1.5 GB of the controller's peak RSS in a 50k
 * cold start (docs/performance.md). The cost is reported as nodejs/node#58218; Node 24 no
 * longer lets that `deprecate` touch prototypes (#59195), and #58618 ends the property. This
 * gives Node 20 a `bind` without it for the duration of `fn` only.
 *
 * Contract: while `fn` runs, `AsyncResource.prototype.bind(f, thisArg)` returns a function
 * that calls `f` inside the resource's async scope exactly as the native one does (same
 * `this` rules, same arguments); only the deprecated `asyncResource` property is missing.
 * The native method is restored before this returns or throws. `fn` must be synchronous:
 * code after an `await` in it would run with the native method already back.
 *
 * The swap relies on Node internals, not an API: that `bind` is a writable method of the
 * prototype, that `runInAsyncScope` is there to build the light wrapper from, and that the
 * native wrapper carries the `asyncResource` accessor (else there is nothing to save). They
 * are checked once, on first use ({@link lightBindFallback}); when one does not hold, `fn`
 * simply runs with the native `bind` (the public path: correct, at Node's own cost per
 * request, which is none once the accessor is gone) and the reason is logged once.
 */
import { AsyncResource } from 'node:async_hooks';
import { logger } from '../log/logger.js';

type AnyFn = (this: unknown, ...args: unknown[]) => unknown;

/** What the light bind calls on the resource; Node's AsyncResource has it. */
interface ScopedResource {
  runInAsyncScope(fn: AnyFn, thisArg: unknown, ...args: unknown[]): unknown;
}

/** A class shaped like `AsyncResource`: the one probed, and whose prototype is patched. */
export interface AsyncResourceClass {
  new (type: string): object;
  readonly prototype: object;
}

/** Why the light bind is not used; `costly` unless the native bind is known to make no accessor to save. */
export interface BindFallback {
  reason: string;
  costly: boolean;
}

// The wrapper's own `this` is passed on when no thisArg is given, as the native bind does.
function lightBind(this: ScopedResource, fn: AnyFn, thisArg?: unknown): AnyFn {
  const resource = this;
  if (thisArg !== undefined) return resource.runInAsyncScope.bind(resource, fn, thisArg) as AnyFn;
  return function (this: unknown, ...args: unknown[]) {
    return resource.runInAsyncScope(fn, this, ...args);
  };
}

/**
 * Whether the light bind can stand in for `Resource.prototype.bind`: undefined when it can, else
 * why not. It reads the prototype and calls the native `bind` once, on a resource of its own
 * and a no-op (reading a descriptor does not run the deprecated accessor, so nothing is emitted).
 */
export function lightBindFallback(Resource: AsyncResourceClass): BindFallback | undefined {
  const proto = Resource.prototype as Record<string, unknown>;
  const own = Object.getOwnPropertyDescriptor(proto, 'bind');
  if (own === undefined || typeof own.value !== 'function') return { reason: 'AsyncResource.prototype has no own bind method', costly: true };
  if (own.writable !== true) return { reason: 'AsyncResource.prototype.bind is read-only', costly: true };
  if (typeof proto.runInAsyncScope !== 'function') return { reason: 'AsyncResource.prototype has no runInAsyncScope to build the light bind from', costly: true };
  let wrapper: unknown;
  try {
    wrapper = (own.value as (fn: AnyFn) => unknown).call(new Resource('fleet-attach.bind-probe'), () => undefined);
  } catch (err) {
    return { reason: `the native bind failed on a probe: ${(err as Error).message}`, costly: true };
  }
  if (typeof wrapper !== 'function') return { reason: 'the native bind returns no function', costly: true };
  if (Object.getOwnPropertyDescriptor(wrapper, 'asyncResource') === undefined) {
    return { reason: 'the native bind no longer defines the asyncResource accessor (DEP0172): nothing to save', costly: false };
  }
  return undefined;
}

/** Receives the one fallback a {@link lightAsyncBindFor} runner logs. */
export type BindFallbackLog = (fallback: BindFallback) => void;

const logFallback: BindFallbackLog = (f) => {
  const log = logger('node-internals');
  // Costly: HTTP/2 requests pay Node 20's per-request bind garbage again. Else nothing is lost.
  const msg = 'light AsyncResource#bind not used; HTTP/2 requests use the native bind';
  if (f.costly) log.info({ internal: 'AsyncResource#bind', reason: f.reason }, msg);
  else log.debug({ internal: 'AsyncResource#bind', reason: f.reason }, msg);
};

/**
 * A `withLightAsyncBind` for `Resource` (Node's AsyncResource, or a stand-in in tests). The
 * check runs on the first call; `log` hears of a fallback once.
 */
export function lightAsyncBindFor(Resource: AsyncResourceClass, log: BindFallbackLog = logFallback): <T>(fn: () => T) => T {
  const proto = Resource.prototype as { bind: unknown };
  let checked = false;
  let fallback = false;
  let nativeBind: unknown;
  return function withLightBind<T>(fn: () => T): T {
    if (!checked) {
      checked = true;
      nativeBind = proto.bind;
      const why = lightBindFallback(Resource);
      fallback = why !== undefined;
      if (why) log(why);
    }
    // Already inside (a nested call): the outer call restores.
    if (fallback || proto.bind === lightBind) return fn();
    proto.bind = lightBind;
    try {
      return fn();
    } finally {
      proto.bind = nativeBind;
    }
  };
}

/** Runs `fn` with the light `AsyncResource#bind` in place where this Node allows it (see the file comment). */
export const withLightAsyncBind = lightAsyncBindFor(AsyncResource);
