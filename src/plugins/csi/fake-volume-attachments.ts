/**
 * In-memory VolumeAttachments for tests: one object is both the API the CSI plugin writes to and
 * the cache it reads and listens to, and the test plays the external-attacher and the watch by
 * changing cached state (`put`, `update`, `remove`). Also a CSIDriver cache over a plain map.
 */
import type {
  CsiDriverCache,
  VolumeAttachmentApi,
  VolumeAttachmentBody,
  VolumeAttachmentCache,
  VolumeAttachmentView,
} from './volume-attachment-deps.js';

export interface FakeVolumeAttachments {
  readonly api: VolumeAttachmentApi;
  readonly cache: VolumeAttachmentCache;
  /** Bodies passed to `api.create`, in order (including failed and already-existing ones). */
  readonly creates: VolumeAttachmentBody[];
  /** Names passed to `api.delete`, in order. */
  readonly deletes: string[];
  /** When set, `api.create` / `api.delete` / `api.get` reject with it. */
  createError: Error | undefined;
  deleteError: Error | undefined;
  getError: Error | undefined;
  /** What `api.get` answers: the server's objects, which the cache may lag behind (by name). */
  readonly server: Map<string, VolumeAttachmentView>;
  /**
   * What `api.create` does to the cache: `visible` puts an unattached view at once (a fast
   * watch), `invisible` leaves it to the test (a watch lagging behind).
   */
  onCreate: 'visible' | 'invisible';
  /** What `api.delete` does: `deleting` marks deletionTimestamp (finalizer present), `gone` removes it, `nothing` leaves it. */
  onDelete: 'deleting' | 'gone' | 'nothing';
  /** Sets the cached view and notifies listeners. */
  put(name: string, view: VolumeAttachmentView): void;
  /** Changes fields of a cached view (no-op if absent) and notifies. */
  update(name: string, change: Partial<VolumeAttachmentView>): void;
  /** Removes from the cache and notifies. */
  remove(name: string): void;
  /** Listeners currently registered with `cache.onChange`. */
  listenerCount(): number;
}

export function createFakeVolumeAttachments(): FakeVolumeAttachments {
  const objects = new Map<string, VolumeAttachmentView>();
  const existing = new Set<string>(); // server-side existence, which the cache may lag behind
  const listeners = new Set<(name: string) => void>();
  const notify = (name: string): void => {
    for (const l of [...listeners]) l(name);
  };
  const fake: FakeVolumeAttachments = {
    creates: [],
    deletes: [],
    createError: undefined,
    deleteError: undefined,
    getError: undefined,
    server: new Map(),
    onCreate: 'visible',
    onDelete: 'deleting',
    api: {
      async create(body) {
        fake.creates.push(body);
        if (fake.createError) throw fake.createError;
        const name = body.metadata.name;
        if (existing.has(name) || objects.has(name)) return 'already-exists';
        existing.add(name);
        if (fake.onCreate === 'visible') fake.put(name, { attached: false, deleting: false });
        return 'created';
      },
      async delete(name) {
        fake.deletes.push(name);
        if (fake.deleteError) throw fake.deleteError;
        if (!existing.has(name) && !objects.has(name)) return 'not-found';
        if (fake.onDelete === 'gone') fake.remove(name);
        else if (fake.onDelete === 'deleting') fake.update(name, { deleting: true });
        return 'deleted';
      },
      async get(name) {
        if (fake.getError) throw fake.getError;
        return fake.server.get(name);
      },
    },
    cache: {
      get: (name) => objects.get(name),
      onChange(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
    put(name, view) {
      existing.add(name);
      objects.set(name, view);
      notify(name);
    },
    update(name, change) {
      const cur = objects.get(name);
      if (!cur) return;
      objects.set(name, { ...cur, ...change });
      notify(name);
    },
    remove(name) {
      existing.delete(name);
      if (objects.delete(name)) notify(name);
    },
    listenerCount: () => listeners.size,
  };
  return fake;
}

/** A CSIDriver cache: `attachRequired` per driver name; drivers absent from the map have no CSIDriver object. */
export function createFakeCsiDrivers(attachRequired: Record<string, boolean> = {}): CsiDriverCache & { set(driver: string, value: boolean | undefined): void } {
  const map = new Map(Object.entries(attachRequired));
  return {
    attachRequired: (driver) => map.get(driver),
    set(driver, value) {
      if (value === undefined) map.delete(driver);
      else map.set(driver, value);
    },
  };
}
