/** Populator test fixtures: a Source held in a Map, whose events the test fires, and plugins. */
import type { ProjectionHandler } from '../../src/kube/projection-store.js';
import type { Source } from '../../src/populator/desired-state-populator.js';
import { createCsiPlugin, createCsiTranslator, createVolumePluginManager } from '../../src/plugins/index.js';

/** The CSI plugin alone (attach required for every driver, no API behind it) and no migration. */
export function csiOnly() {
  const csi = createCsiPlugin({
    api: { create: async () => 'created', delete: async () => 'deleted' },
    attachments: { get: () => undefined, onChange: () => () => undefined },
    drivers: { attachRequired: () => true },
  });
  return { plugins: createVolumePluginManager({ plugins: [csi] }), translator: createCsiTranslator({ isMigrated: () => false }) };
}

/** A Source whose events the test fires; counts `get` calls. */
export class FakeSource<T> implements Source<T> {
  readonly items = new Map<string, T>();
  private readonly handlers = new Set<ProjectionHandler<T>>();
  gets = 0;
  constructor(private readonly keyOf: (t: T) => string) {}
  get(key: string): T | undefined {
    this.gets++;
    return this.items.get(key);
  }
  values(): IterableIterator<T> {
    return this.items.values();
  }
  addHandler(h: ProjectionHandler<T>): () => void {
    this.handlers.add(h);
    return () => this.handlers.delete(h);
  }
  upsert(t: T): void {
    const old = this.items.get(this.keyOf(t));
    this.items.set(this.keyOf(t), t);
    for (const h of this.handlers) (old ? h.update?.(t, old) : h.add?.(t));
  }
  /** An update whose projection is unchanged: the store hands over the stored object itself (keepFrom). */
  touch(t: T): void {
    for (const h of this.handlers) h.update?.(t, t);
  }
  remove(t: T): void {
    this.items.delete(this.keyOf(t));
    for (const h of this.handlers) h.delete?.(t);
  }
}

