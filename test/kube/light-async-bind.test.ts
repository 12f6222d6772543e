import assert from 'node:assert/strict';
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import { describe, it } from 'node:test';
import { withLightAsyncBind } from '../../src/kube/light-async-bind.js';

const store = new AsyncLocalStorage<string>();

/** A resource created inside context `ctx`, and a bind made while `withLightAsyncBind` runs. */
function bindIn(ctx: string, fn: (this: unknown, ...args: unknown[]) => unknown, thisArg?: unknown) {
  const resource = store.run(ctx, () => new AsyncResource('Test'));
  // @types/node 20 declares bind(fn) only; Node's own takes an optional thisArg (v14.8+).
  const bind = resource.bind as (f: typeof fn, t?: unknown) => typeof fn;
  return withLightAsyncBind(() => bind.call(resource, fn, thisArg));
}

describe('withLightAsyncBind', () => {
  it('binds like the native method: the resource\'s async context, the arguments, and the call-time this', () => {
    const seen: unknown[] = [];
    const bound = bindIn('ctx-a', function (this: unknown, ...args: unknown[]) {
      seen.push(store.getStore(), this, args);
      return 'result';
    });
    const receiver = { r: 1 };
    const out = store.run('ctx-b', () => bound.call(receiver, 1, 'two'));
    assert.equal(out, 'result');
    assert.deepEqual(seen, ['ctx-a', receiver, [1, 'two']]);
  });

  it('uses thisArg when one is given, whatever the call-time this', () => {
    const self = { s: 1 };
    let seenThis: unknown;
    let seenCtx: string | undefined;
    const bound = bindIn('ctx-c', function (this: unknown) {
      seenThis = this;
      seenCtx = store.getStore();
    }, self);
    bound.call({ other: true });
    assert.equal(seenThis, self);
    assert.equal(seenCtx, 'ctx-c');
  });

  it('gives a wrapper without the deprecated asyncResource accessor, and only while fn runs', () => {
    const resource = new AsyncResource('Test');
    const light = withLightAsyncBind(() => resource.bind(() => 1));
    assert.equal(Object.getOwnPropertyDescriptor(light, 'asyncResource'), undefined);
    const native = resource.bind(() => 1);
    assert.notEqual(Object.getOwnPropertyDescriptor(native, 'asyncResource'), undefined, 'native bind is back after the call');
  });

  it('restores the native method when fn throws, and nests without restoring early', () => {
    const nativeBind = AsyncResource.prototype.bind;
    assert.throws(() => withLightAsyncBind(() => { throw new Error('boom'); }), /boom/);
    assert.equal(AsyncResource.prototype.bind, nativeBind);
    withLightAsyncBind(() => {
      const inner = AsyncResource.prototype.bind;
      assert.notEqual(inner, nativeBind);
      withLightAsyncBind(() => undefined);
      assert.equal(AsyncResource.prototype.bind, inner, 'the inner call left the outer shim in place');
    });
    assert.equal(AsyncResource.prototype.bind, nativeBind);
  });
});
