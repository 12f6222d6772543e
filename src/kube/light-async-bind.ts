/**
 * A workaround, scoped to one synchronous call, for a Node 20 cost on every HTTP/2 request.
 *
 * `ClientHttp2Session.request()` wraps its connect callback with `AsyncResource#bind`, and on
 * Node 20 that `bind` also defines the deprecated `asyncResource` accessor (DEP0172) on the
 * wrapper through two `util.deprecate` calls, each of which re-parents a new function and
 * materialises a prototype object. Profiled on the raw write path (`npm run bench:api`), that
 * was about a tenth of the client's CPU per call, before the garbage it leaves. Node fixed the
 * cost later (nodejs/node#58218: `deprecate` no longer touches prototypes; the property itself
 * is removed in #58618); this gives Node 20 the same behaviour for the duration of `fn` only.
 *
 * Contract: while `fn` runs, `AsyncResource.prototype.bind(f, thisArg)` returns a function
 * that calls `f` inside the resource's async scope exactly as the native one does (same
 * `this` rules, same arguments); only the deprecated `asyncResource` property is missing.
 * The native method is restored before this returns or throws. `fn` must be synchronous:
 * code after an `await` in it would run with the native method already back.
 */
import { AsyncResource } from 'node:async_hooks';

const nativeBind = AsyncResource.prototype.bind;

// The `this` of the wrapper is passed on when no thisArg is given, as the native bind does.
type AnyFn = (this: unknown, ...args: unknown[]) => unknown;

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
