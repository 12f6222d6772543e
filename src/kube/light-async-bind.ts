/**
 * A workaround, scoped to one synchronous call, for a Node 20 cost on every HTTP/2 request.
 *
 * `ClientHttp2Session.request()` wraps its connect callback with `AsyncResource#bind`, and on
 * Node 20 that `bind` also defines the deprecated `asyncResource` accessor (DEP0172) on the
 * wrapper through two `util.deprecate` calls, each of which re-parents a new function and
 * materialises a prototype object. `npm run bench:h2` measures Node's client at 0.55–0.64× the
 * CPU per request without it, and its garbage was ~1.5 GB of the controller's peak RSS in a 50k
 * cold start (docs/performance-log.md). The cost is reported as nodejs/node#58218; Node 24 no
 * longer lets that `deprecate` touch prototypes (#59195), and #58618 ends the property. This
 * gives Node 20 a `bind` without it for the duration of `fn` only.
 *
 * Contract: while `fn` runs, `AsyncResource.prototype.bind(f, thisArg)` returns a function
 * that calls `f` inside the resource's async scope exactly as the native one does (same
 * `this` rules, same arguments); only the deprecated `asyncResource` property is missing.
 * The native method is restored before this returns or throws. `fn` must be synchronous:
 * code after an `await` in it would run with the native method already back.
 */
import { AsyncResource } from 'node:async_hooks';

const nativeBind = AsyncResource.prototype.bind;

type AnyFn = (this: unknown, ...args: unknown[]) => unknown;

// The wrapper's own `this` is passed on when no thisArg is given, as the native bind does.
function lightBind(this: AsyncResource, fn: AnyFn, thisArg?: unknown): AnyFn {
  const resource = this;
  if (thisArg !== undefined) return resource.runInAsyncScope.bind(resource, fn, thisArg) as AnyFn;
  return function (this: unknown, ...args: unknown[]) {
    return resource.runInAsyncScope(fn, this, ...args);
  };
}

export function withLightAsyncBind<T>(fn: () => T): T {
  const proto = AsyncResource.prototype as { bind: unknown };
  // Already inside (a nested call): the outer call restores.
  if (proto.bind === lightBind) return fn();
  proto.bind = lightBind;
  try {
    return fn();
  } finally {
    proto.bind = nativeBind;
  }
}
