/**
 * What the in-memory store offers beyond the SimStore contract: the API server's paginated
 * lists, watch resumption from the event window, and size figures for the benches.
 */
import type { CommittedEvent } from './committed-event.js';
import type { DeleteOptions, KubeObject, ResourceName, SimStore } from './sim-store.js';

export interface SimStoreOptions {
  /** Committed events kept for watches to resume from (default 100,000). */
  /** Committed events kept per resource for watches to resume from (default 100,000). */
  watchWindow?: number;
  /** Clock in epoch milliseconds (default Date.now). */
  now?: () => number;
  /** Random source in [0, 1) for generateName (default Math.random). */
  random?: () => number;
  /** uid source (default crypto.randomUUID). */
  uid?: () => string;
  /** Namespaces created at start (default: default, kube-system, kube-public, kube-node-lease). */
  namespaces?: readonly string[];
}

export interface ListPageOptions {
  /** Only this namespace (namespaced resources). */
  namespace?: string;
  /** Resume strictly after this key (from a previous page's lastKey). */
  after?: string;
  /** At most this many items; 0 or undefined means all. */
  limit?: number;
  /** Pods only: only pods with this spec.nodeName (served from an index). */
  nodeName?: string;
  /** Keeps an object when true; gets the stored JSON and key. */
  filter?: (json: string, key: string) => boolean;
}

export interface ListPage {
  /** Stored JSON of each item, in key order. */
  items: string[];
  /** Key of the last item returned, to resume after. */
  lastKey: string | undefined;
  /** True when more matching items follow. */
  more: boolean;
}

/**
 * A page of stored JSON as bytes (ServableStore.listPageBytes): its items are copied from the
 * store's records into the caller's buffer, with no string per item. Valid until the store's
 * next write.
 */
export interface BytePage {
  /** Items on the page. */
  count: number;
  /** Bytes of the items' JSON together (UTF-8). */
  bytes: number;
  /** Key of the last item returned, to resume after. */
  lastKey: string | undefined;
  /** True when more matching items follow. */
  more: boolean;
  /** Copies the items' JSON, comma-separated, into `buf` from `at` (room for `bytes + count - 1`); answers the offset after the last. */
  copyItems(buf: Buffer, at: number): number;
  /** The items as strings (as `listPage` answers them). */
  strings(): string[];
}

/** The SimStore plus what the API server needs to serve lists, watches and writes efficiently. */
export interface ServableStore extends SimStore {
  /** The stored JSON of an object, or undefined (no copy, no parse). */
  getJson(resource: ResourceName, namespace: string | undefined, name: string): string | undefined;
  /** `create`, answering the committed object's JSON (what the API server sends back) instead of a copy. */
  createJson(resource: ResourceName, obj: KubeObject): string;
  /** `update`, answering the committed object's JSON. */
  updateJson(resource: ResourceName, obj: KubeObject, opts?: { subresource?: 'status' }): string;
  /**
   * A PATCH: `patch` gets a copy of the stored object (it may change it) and returns the
   * patched object, which is then written as `update` would write it (its resourceVersion, if
   * any, a precondition). Throws NotFound when the object does not exist. Answers the
   * committed object's JSON.
   */
  patchJson(resource: ResourceName, namespace: string | undefined, name: string, patch: (stored: KubeObject) => KubeObject, opts?: { subresource?: 'status' }): string;
  /** `delete`, answering the JSON of the object as it is after the call, or undefined if it did not exist. */
  deleteJson(resource: ResourceName, namespace: string | undefined, name: string, opts?: DeleteOptions): string | undefined;
  listPage(resource: ResourceName, opts?: ListPageOptions): ListPage;
  /** `listPage` as bytes: what the API server sends for a list. */
  listPageBytes(resource: ResourceName, opts?: ListPageOptions): BytePage;
  /** The stored JSON of an object as bytes (the caller's to keep), or undefined. */
  getBytes(resource: ResourceName, namespace: string | undefined, name: string): Buffer | undefined;
  /** Retained events of `resource` after `rv`, oldest first; undefined if `rv` is older than that
   * resource's window (410 Gone). Each resource keeps its own `watchWindow` events. */
  eventsAfter(resource: ResourceName, rv: number): CommittedEvent[] | undefined;
  /** The oldest resourceVersion a watch of `resource` can still start from. */
  oldestResumableRv(resource: ResourceName): number;
  subscribe(fn: (ev: CommittedEvent) => void): () => void;
  /** Objects and bytes of stored JSON, over all resources. */
  stats(): { objects: number; jsonBytes: number };
}
