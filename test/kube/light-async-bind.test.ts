import assert from 'node:assert/strict';
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import { describe, it } from 'node:test';
import { lightAsyncBindFor, lightBindFallback, withLightAsyncBind, type AsyncResourceClass, type BindFallback } from '../../src/kube/light-async-bind.js';
import { withH2Loopback } from './h2-loopback.js';

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

/** A stand-in for AsyncResource whose bind makes wrappers like `makeWrapper`'s. */
function fakeResource(makeWrapper: (fn: () => unknown) => unknown): AsyncResourceClass & { prototype: { bind: unknown } } {
  return class {
    constructor(readonly type: string) {}
    bind(fn: () => unknown) {
      return makeWrapper(fn);
    }
    runInAsyncScope(fn: () => unknown) {
      return fn();
    }
  };
}

/** A wrapper as Node 20's bind makes it: with the deprecated `asyncResource` accessor. */
const withAccessor = (fn: () => unknown) => Object.defineProperty(() => fn(), 'asyncResource', { get: () => undefined, enumerable: true });

describe('lightBindFallback', () => {
  it('finds on this Node what the light bind replaces', () => {
    assert.equal(lightBindFallback(AsyncResource), undefined);
    assert.equal(lightBindFallback(fakeResource(withAccessor)), undefined);
  });

  const frozen = fakeResource(withAccessor);
  Object.freeze(frozen.prototype);
  const noScope = fakeResource(withAccessor);
  delete (noScope.prototype as { runInAsyncScope?: unknown }).runInAsyncScope;
  const noBind = fakeResource(withAccessor);
  delete (noBind.prototype as { bind?: unknown }).bind;
  const cases: Array<[string, AsyncResourceClass, RegExp, boolean]> = [
    ['a bind that makes no asyncResource accessor', fakeResource((fn) => () => fn()), /asyncResource accessor/, false],
    ['a read-only bind', frozen, /read-only/, true],
    ['no runInAsyncScope', noScope, /runInAsyncScope/, true],
    ['no own bind', noBind, /no own bind/, true],
    ['a bind that throws', fakeResource(() => { throw new Error('changed'); }), /failed on a probe: changed/, true],
    ['a bind that returns no function', fakeResource(() => 1), /returns no function/, true],
  ];
  for (const [name, Resource, reason, costly] of cases) {
    it(`falls back for ${name}`, () => {
      const why = lightBindFallback(Resource);
      assert.match(why?.reason ?? '', reason);
      assert.equal(why?.costly, costly);
    });
  }
});

describe('lightAsyncBindFor around HTTP/2 requests', () => {
  /** POSTs, the first half before the session connects (the bound connect callback runs then), inside `within`. */
  async function requests(within: <T>(fn: () => T) => T, during: () => void): Promise<void> {
    await withH2Loopback(async ({ client, post }) => {
      const request = () => within(() => {
        during();
        return client.request({ ':method': 'POST', ':path': '/' });
      });
      const early = Array.from({ length: 8 }, (_, i) => post('x'.repeat(i), request));
      assert.deepEqual(await Promise.all(early), early.map((_, i) => `POST ${i}`));
      assert.equal(await post('late', request), 'POST 4');
    });
  }

  it('swaps in the light bind on this Node for each request, which completes', async () => {
    const logged: BindFallback[] = [];
    const within = lightAsyncBindFor(AsyncResource, (f) => logged.push(f));
    const nativeBind = AsyncResource.prototype.bind;
    let swapped = 0;
    await requests(within, () => {
      if (AsyncResource.prototype.bind !== nativeBind) swapped++;
    });
    assert.equal(swapped, 9);
    assert.equal(AsyncResource.prototype.bind, nativeBind);
    assert.deepEqual(logged, []);
  });

  it('leaves the native bind in place where the check fails, the requests still completing, and logs once', async () => {
    const logged: BindFallback[] = [];
    const Changed = fakeResource((fn) => () => fn()); // a Node without the accessor
    const fakeBind = Changed.prototype.bind;
    const within = lightAsyncBindFor(Changed, (f) => logged.push(f));
    const nativeBind = AsyncResource.prototype.bind;
    await requests(within, () => {
      assert.equal(Changed.prototype.bind, fakeBind, 'the probed prototype is not patched');
      assert.equal(AsyncResource.prototype.bind, nativeBind);
    });
    assert.equal(logged.length, 1);
    assert.match(logged[0].reason, /asyncResource accessor/);
  });

  it('runs fn where the prototype cannot be patched, instead of throwing', () => {
    const Frozen = fakeResource(withAccessor);
    Object.freeze(Frozen.prototype);
    const logged: BindFallback[] = [];
    const within = lightAsyncBindFor(Frozen, (f) => logged.push(f));
    assert.equal(within(() => 'ran'), 'ran');
    assert.equal(within(() => 'again'), 'again');
    assert.deepEqual(logged.map((f) => f.reason), ['AsyncResource.prototype.bind is read-only']);
  });
});
