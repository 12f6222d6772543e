/**
 * The minimal Reflect metadata API that @peculiar/x509's dependency tsyringe requires at load
 * time (`Reflect.getMetadata`, `getOwnMetadata`, `defineMetadata`). No polyfill package
 * (reflect-metadata, core-js) is installed, so this module provides one; it must be imported
 * before @peculiar/x509. It installs nothing if a polyfill is already present.
 */
type Target = object;
type MetadataMap = Map<unknown, unknown>;

const store = new WeakMap<Target, Map<PropertyKey | undefined, MetadataMap>>();

function own(target: Target, prop: PropertyKey | undefined, create: boolean): MetadataMap | undefined {
  let byProp = store.get(target);
  if (!byProp) {
    if (!create) return undefined;
    store.set(target, (byProp = new Map()));
  }
  let m = byProp.get(prop);
  if (!m && create) byProp.set(prop, (m = new Map()));
  return m;
}

interface ReflectMetadata {
  getMetadata?: (key: unknown, target: Target, prop?: PropertyKey) => unknown;
  getOwnMetadata?: (key: unknown, target: Target, prop?: PropertyKey) => unknown;
  defineMetadata?: (key: unknown, value: unknown, target: Target, prop?: PropertyKey) => void;
  hasMetadata?: (key: unknown, target: Target, prop?: PropertyKey) => boolean;
  metadata?: (key: unknown, value: unknown) => (target: Target, prop?: PropertyKey) => void;
}

const R = Reflect as unknown as ReflectMetadata;
if (!R.getMetadata) {
  R.getOwnMetadata = (key, target, prop) => own(target, prop, false)?.get(key);
  R.getMetadata = (key, target, prop) => {
    for (let t: Target | null = target; t; t = Object.getPrototypeOf(t) as Target | null) {
      const m = own(t, prop, false);
      if (m?.has(key)) return m.get(key);
    }
    return undefined;
  };
  R.hasMetadata = (key, target, prop) => R.getMetadata?.(key, target, prop) !== undefined;
  R.defineMetadata = (key, value, target, prop) => {
    own(target, prop, true)?.set(key, value);
  };
  R.metadata = (key, value) => (target, prop) => R.defineMetadata?.(key, value, target, prop);
}

export {};
