/**
 * SimStore: the simulator's object store, the contract between the API server (src/sim/server)
 * and the fleet actors (src/sim/actors). Actors act on the store directly, never through HTTP.
 *
 * Contract:
 * - One global, monotonically increasing resourceVersion; every committed change gets the next
 *   one and is delivered to every subscriber synchronously, in commit order, after the commit.
 * - Objects handed out are copies: mutating them changes nothing until written back.
 * - Errors are thrown as StoreError carrying a Kubernetes `Status` reason and code
 *   (NotFound 404, AlreadyExists 409, Conflict 409, Invalid 422).
 * - Deletion honours finalizers (deletionTimestamp set, object kept until they are gone) and
 *   pod graceful deletion (see `delete`).
 */
export type ResourceName =
  | 'namespaces'
  | 'nodes'
  | 'pods'
  | 'persistentvolumes'
  | 'persistentvolumeclaims'
  | 'events'
  | 'volumeattachments'
  | 'csidrivers'
  | 'csinodes'
  | 'leases';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generateName?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }>;
  [k: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [k: string]: unknown;
}

export type StoreEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: StoreEventType;
  resource: ResourceName;
  /** The committed resourceVersion of this change. */
  rv: number;
  namespace: string | undefined;
  name: string;
  /** The object as committed, serialised once and shared by every consumer. */
  json: string;
  /** Parses `json` (a fresh copy each call). */
  object(): KubeObject;
  /**
   * The object as committed, shared and read only (never modify it or keep it past the
   * callback): cheaper than `object()` inside a subscriber.
   */
  view(): KubeObject;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  /** Precondition: fail with Conflict unless the stored uid matches. */
  uid?: string;
  /** Precondition: fail with Conflict unless the stored resourceVersion matches (checked after `uid`). */
  resourceVersion?: string;
}

export interface SimStore {
  /** Current global resourceVersion (that of the last committed change). */
  resourceVersion(): number;
  /** Number of objects of a resource. */
  count(resource: ResourceName): number;
  /** A copy of the object, or undefined. `namespace` is ignored for cluster-scoped resources. */
  get(resource: ResourceName, namespace: string | undefined, name: string): KubeObject | undefined;
  /** Copies of all objects of a resource (optionally one namespace). O(n): not for hot loops. */
  list(resource: ResourceName, namespace?: string): KubeObject[];
  /** Creates; sets uid, creationTimestamp, resourceVersion; honours generateName. Throws AlreadyExists/Invalid. */
  create(resource: ResourceName, obj: KubeObject): KubeObject;
  /**
   * Replaces an object. If `obj.metadata.resourceVersion` is set and stale, throws Conflict.
   * `subresource: 'status'` writes only `.status`; otherwise `.status` is kept as stored for
   * resources that have a status subresource.
   */
  update(resource: ResourceName, obj: KubeObject, opts?: { subresource?: 'status' }): KubeObject;
  /**
   * Read-modify-write without a precondition: `fn` gets a copy and returns the new object
   * (or mutates the copy and returns undefined). Returns the committed object, or undefined
   * if the object does not exist. A no-op change (deep-equal result) commits nothing.
   */
  mutate(resource: ResourceName, namespace: string | undefined, name: string, fn: (obj: KubeObject) => KubeObject | void): KubeObject | undefined;
  /**
   * Deletes. Objects with finalizers get deletionTimestamp and stay. Pods bound to a node get
   * deletionTimestamp/deletionGracePeriodSeconds unless gracePeriodSeconds is 0 (the kubelet
   * actor finishes the deletion with gracePeriodSeconds 0). Returns the object as it is after
   * the call, or undefined if it did not exist.
   */
  delete(resource: ResourceName, namespace: string | undefined, name: string, opts?: DeleteOptions): KubeObject | undefined;
  /** Subscribes to every committed change. Returns the unsubscribe function. */
  subscribe(fn: (ev: StoreEvent) => void): () => void;
}

/** Thrown by SimStore methods; carries the Kubernetes Status reason and HTTP code. */
export class StoreError extends Error {
  constructor(
    readonly reason: 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Invalid' | 'BadRequest' | 'MethodNotAllowed',
    readonly code: number,
    message: string,
    /** metav1.StatusDetails as kube-apiserver fills them: the object's name, group and kind. */
    readonly details?: { name?: string; group?: string; kind?: string },
  ) {
    super(message);
    this.name = 'StoreError';
  }
}
