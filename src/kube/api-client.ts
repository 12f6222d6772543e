/**
 * KubeApiClient: every single-object read and write the controller makes. Kubeconfig, auth and
 * the shared keep-alive agent are client-node's (via {@link FleetKubeConfig}); the hot calls
 * (VolumeAttachment create and delete, the live Node read, the Node status patch, the Event
 * writes, one per attach at most, and the PV lock's read and patch) are raw requests
 * (raw-write.ts), the rest (leases, the VolumeAttachment read after a create conflict) go
 * through the generated API.
 *
 * Contract for every method:
 * - controller calls (everything but leases) first take a slot of the in-flight bound
 *   (`maxInFlight`; node status writes and VolumeAttachment deletes in the high lane, see
 *   in-flight-limiter.ts) and a token from one shared client-side rate limiter (`qps`/`burst`,
 *   kube-controller-manager's 20/30 by default); lease calls skip both so renewals are never
 *   queued behind controller traffic (KCM uses a separate client for them);
 * - 429 is retried after `Retry-After` (clamped to `maxRetryAfterMs`, 1 s when absent), at most
 *   `maxRetries` times, each retry taking a new token;
 * - each attempt is reported to `onRequest` (verb, resource, code, duration);
 * - failures reject with `FA_ERR_KUBE_API` carrying {@link KubeErrorDetails} (see kube-errors.ts
 *   for `isNotFound`, `isConflict`…); each request is aborted after `requestTimeoutMs`.
 */
import {
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  StorageV1Api,
  V1MicroTime,
  setHeaderOptions,
  type CoreV1Event,
  type V1Lease,
  type V1VolumeAttachment,
} from '@kubernetes/client-node';
import { fleetError } from '../errors/index.js';
import type { FleetKubeConfig } from './kube-config.js';
import { isConflict, isNotFound, kubeErrorDetails } from './kube-errors.js';
import { casOutcome, jsonPatchBody, volumesAttachedCas, volumesAttachedValue, type JsonPatchOp } from './json-patch.js';
import { persistentVolumeMeta, type PersistentVolumeMeta } from './persistent-volume-meta.js';
import { projectLease, type LeaseRecord } from './projections/lease.js';
import { projectNode, type AttachedVolume, type NodeRecord } from './projections/node.js';
import type { Projected } from './projections/read.js';
import { projectVolumeAttachment, type VolumeAttachmentRecord } from './projections/volume-attachment.js';
import { createInFlightLimiter, DEFAULT_MAX_IN_FLIGHT, type InFlightLimiter } from './in-flight-limiter.js';
import { createRateLimiter, DEFAULT_BURST, DEFAULT_QPS, type RateLimiter } from './rate-limiter.js';
import type { EventBody, EventPatchBody, VolumeAttachmentBody } from './api-bodies.js';
import type { RequestHook } from './request-hook.js';
import { attemptCall, pathSegment, sendRaw, type RawCall } from './raw-write.js';
import { createRequestRunner, type RawSent, type RequestRunner, type RunOptions, type What } from './request-runner.js';

export type { LeaseRecord };
export type { JsonPatchOp } from './json-patch.js';
export type { PersistentVolumeMeta } from './persistent-volume-meta.js';

export type { EventBody, EventPatchBody, VolumeAttachmentBody } from './api-bodies.js';

export interface CallOptions {
  signal?: AbortSignal;
}

export interface KubeApiClient {
  /**
   * Creates the VolumeAttachment. AlreadyExists is success (`already-exists`, even if the
   * existing object is being deleted) when the existing object has the same attacher, node and
   * source kind/PV name; otherwise it rejects (409, reason AlreadyExists). The created object is
   * not returned: the watch brings it, and its body is not read (one VolumeAttachment per
   * attachment is created, so parsing the echo was a cost with no reader).
   */
  createVolumeAttachment(body: VolumeAttachmentBody): Promise<'created' | 'already-exists'>;
  /** Deletes it; NotFound is success (`not-found`). Deletion completes later, when the attacher drops its finalizer. */
  deleteVolumeAttachment(name: string): Promise<'deleted' | 'not-found'>;
  /**
   * The same, conditioned on the object seen (DeleteOptions `preconditions`): when the stored
   * VolumeAttachment has another uid (deleted and created again) or another resourceVersion,
   * kube-apiserver refuses with 409 and nothing is deleted: `precondition-failed`.
   */
  deleteVolumeAttachment(name: string, preconditions: DeletePreconditions): Promise<'deleted' | 'not-found' | 'precondition-failed'>;
  /** Live GET; undefined when it does not exist. */
  getVolumeAttachment(name: string): Promise<VolumeAttachmentRecord | undefined>;
  /** Live GET (F9 safety check); undefined when the Node does not exist. */
  getNode(name: string): Promise<NodeRecord | undefined>;
  /**
   * Merge-patches `status.volumesAttached` of the status subresource (an atomic list: the whole
   * list is replaced; null removes the field). `not-found` when the Node is gone.
   */
  patchNodeStatus(name: string, volumesAttached: ReadonlyArray<Readonly<AttachedVolume>> | null): Promise<'patched' | 'not-found'>;
  /**
   * The same write as a compare-and-swap (JSON Patch `test` then `replace`, json-patch.ts
   * {@link volumesAttachedCas}): written only if the stored list still equals `cas.expected`;
   * otherwise kube-apiserver answers 422 and nothing changes: `conflict`. `expected` must be the
   * list as read from the server (or as this caller last wrote it), entry for entry in its
   * order, with each `devicePath` as read ('' when empty); null or empty: the field is absent.
   */
  patchNodeStatus(name: string, volumesAttached: ReadonlyArray<Readonly<AttachedVolume>> | null, cas: NodeStatusCas): Promise<'patched' | 'not-found' | 'conflict'>;
  /** Live GET of a PersistentVolume's metadata; undefined when it does not exist. */
  getPersistentVolume(name: string): Promise<PersistentVolumeMeta | undefined>;
  /**
   * Applies a JSON Patch to the PersistentVolume. `conflict` when an operation fails (a `test`:
   * 422) or the server reports a conflict (409); `not-found` when it is gone.
   */
  patchPersistentVolume(name: string, ops: readonly JsonPatchOp[]): Promise<'patched' | 'not-found' | 'conflict'>;
  /** The metadata of the PersistentVolumes matching a label selector (one unpaged list). */
  listPersistentVolumes(labelSelector: string): Promise<PersistentVolumeMeta[]>;
  /** Creates a core/v1 Event in `namespace`. */
  createEvent(namespace: string, event: EventBody): Promise<void>;
  /** Merge-patches a repeated Event; `not-found` when it is gone. */
  patchEvent(namespace: string, name: string, patch: EventPatchBody): Promise<'patched' | 'not-found'>;
  /** undefined when the Lease does not exist. Not rate limited. */
  getLease(namespace: string, name: string, opts?: CallOptions): Promise<LeaseRecord | undefined>;
  /** Rejects with 409 when it already exists. Not rate limited. */
  createLease(lease: LeaseRecord, opts?: CallOptions): Promise<LeaseRecord>;
  /** Replaces it guarded by `lease.resourceVersion`; rejects with 409 on a conflict. Not rate limited. */
  updateLease(lease: LeaseRecord, opts?: CallOptions): Promise<LeaseRecord>;
  /** The Leases in `namespace` matching `labelSelector` (one consistent read, not paged). Not rate limited. */
  listLeases(namespace: string, labelSelector: string, opts?: CallOptions): Promise<LeaseRecord[]>;
  /** Rate limiter totals (requests that waited, ms waited) for metrics. */
  rateLimiterStats(): { acquired: number; throttled: number; waitedMs: number };
  /** Controller requests waiting for an in-flight slot, and holding one. */
  backlog(): { waiting: number; inFlight: number };
  /**
   * Ends now, with FA_ERR_NOT_LEADER, the calls waiting for a rate-limiter token: for a client
   * whose `maySend` has turned false, which would refuse each of them once its token came.
   */
  refuseWaiting(): void;
}

/** DeleteOptions `preconditions`: the object deleted must still have this uid and/or resourceVersion. */
export interface DeletePreconditions {
  uid?: string;
  resourceVersion?: string;
}

/** A compare-and-swap on `status.volumesAttached`: the list the caller last read or wrote. */
export interface NodeStatusCas {
  expected: ReadonlyArray<Readonly<AttachedVolume>> | null;
}

export interface KubeApiClientOptions {
  kc: FleetKubeConfig;
  qps?: number;
  burst?: number;
  /** Called with each rate-limiter wait, ms. */
  onThrottle?: (waitMs: number) => void;
  onRequest?: RequestHook;
  /** Controller requests on the wire at once (default {@link DEFAULT_MAX_IN_FLIGHT}; ≤ 0: unbounded). */
  maxInFlight?: number;
  /** The requests waiting for a slot have all got one (in-flight-limiter.ts `onDrained`). */
  onBacklogDrained?: () => void;
  /** Per-request timeout (default 30 s), counted from the send, not from the call. */
  requestTimeoutMs?: number;
  /** 429 retries per call (default 5) and the cap on one Retry-After wait (default 10 s). */
  maxRetries?: number;
  maxRetryAfterMs?: number;
  /**
   * The hot calls (VolumeAttachment create/delete, Node get, Node status patch, Event create and
   * patch, PersistentVolume get and patch) as raw requests (default true); false sends them through the generated client, for comparison.
   */
  rawWrites?: boolean;
  /** Leadership, asked before each limited call is sent (request-runner.ts). */
  maySend?: () => boolean;
}

const VA_PATH = '/apis/storage.k8s.io/v1/volumeattachments';
const NODES_PATH = '/api/v1/nodes';
const PVS_PATH = '/api/v1/persistentvolumes';
const eventsPath = (namespace: string) => `/api/v1/namespaces/${pathSegment(namespace)}/events`;

export function createKubeApiClient(opts: KubeApiClientOptions): KubeApiClient {
  return new GeneratedApiClient(opts);
}

class GeneratedApiClient implements KubeApiClient {
  private readonly core: CoreV1Api;
  private readonly storage: StorageV1Api;
  private readonly coordination: CoordinationV1Api;
  private readonly limiter: RateLimiter;
  private readonly runner: RequestRunner;
  private readonly inFlight: InFlightLimiter;
  private readonly kc: FleetKubeConfig;
  private readonly rawWrites: boolean;

  constructor(opts: KubeApiClientOptions) {
    this.kc = opts.kc;
    this.rawWrites = opts.rawWrites ?? true;
    this.core = opts.kc.makeApiClient(CoreV1Api);
    this.storage = opts.kc.makeApiClient(StorageV1Api);
    this.coordination = opts.kc.makeApiClient(CoordinationV1Api);
    this.limiter = createRateLimiter({ qps: opts.qps ?? DEFAULT_QPS, burst: opts.burst ?? DEFAULT_BURST, ...(opts.onThrottle ? { onWait: opts.onThrottle } : {}) });
    this.inFlight = createInFlightLimiter({ max: opts.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT, onDrained: opts.onBacklogDrained });
    this.runner = createRequestRunner({ ...opts, limiter: this.limiter, inFlight: this.inFlight });
  }

  async createVolumeAttachment(body: VolumeAttachmentBody): Promise<'created' | 'already-exists'> {
    const what = { verb: 'create', resource: 'volumeattachments', name: body.metadata.name };
    const va = { ...body, apiVersion: 'storage.k8s.io/v1', kind: 'VolumeAttachment' } as V1VolumeAttachment;
    try {
      if (this.rawWrites) await this.raw(what, { method: 'POST', path: VA_PATH, body: JSON.stringify(va), response: 'drain' });
      else await this.runner.run(what, (o) => this.storage.createVolumeAttachmentWithHttpInfo({ body: va }, o));
      return 'created';
    } catch (err) {
      if (kubeErrorDetails(err)?.code !== 409) throw err;
      const existing = await this.getVolumeAttachment(body.metadata.name);
      if (existing && sameSpec(existing, body)) return 'already-exists';
      throw err;
    }
  }

  deleteVolumeAttachment(name: string): Promise<'deleted' | 'not-found'>;
  deleteVolumeAttachment(name: string, preconditions: DeletePreconditions): Promise<'deleted' | 'not-found' | 'precondition-failed'>;
  async deleteVolumeAttachment(name: string, preconditions?: DeletePreconditions): Promise<'deleted' | 'not-found' | 'precondition-failed'> {
    const what = { verb: 'delete', resource: 'volumeattachments', name };
    const options = preconditions === undefined ? undefined : { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { ...preconditions } };
    try {
      // High lane: a detach deletes right after its live Node check (F9), whose answer must not
      // age in the queue behind creates; the check itself waits in the normal lane.
      if (this.rawWrites) {
        const body = options === undefined ? undefined : JSON.stringify(options);
        await this.raw(what, { method: 'DELETE', path: `${VA_PATH}/${pathSegment(name)}`, body, response: 'drain' }, { priority: 'high' });
      } else {
        await this.runner.run(what, (o) => this.storage.deleteVolumeAttachmentWithHttpInfo({ name, ...(options ? { body: options } : {}) }, o), { priority: 'high' });
      }
      return 'deleted';
    } catch (err) {
      if (isNotFound(err)) return 'not-found';
      // With preconditions a 409 can only be theirs: a delete has no other conflict.
      if (preconditions !== undefined && isConflict(err)) return 'precondition-failed';
      throw err;
    }
  }

  async getVolumeAttachment(name: string): Promise<VolumeAttachmentRecord | undefined> {
    const what = { verb: 'get', resource: 'volumeattachments', name };
    const raw = await this.orUndefined(this.runner.run(what, (o) => this.storage.readVolumeAttachmentWithHttpInfo({ name }, o)));
    return raw === undefined ? undefined : must(projectVolumeAttachment(raw), what);
  }

  async getNode(name: string): Promise<NodeRecord | undefined> {
    const what = { verb: 'get', resource: 'nodes', name };
    const raw = await this.orUndefined(
      this.rawWrites
        ? this.raw(what, { method: 'GET', path: `${NODES_PATH}/${pathSegment(name)}`, response: 'json' })
        : this.runner.run(what, (o) => this.core.readNodeWithHttpInfo({ name }, o)),
    );
    return raw === undefined ? undefined : must(projectNode(raw), what);
  }

  patchNodeStatus(name: string, volumesAttached: ReadonlyArray<Readonly<AttachedVolume>> | null): Promise<'patched' | 'not-found'>;
  patchNodeStatus(name: string, volumesAttached: ReadonlyArray<Readonly<AttachedVolume>> | null, cas: NodeStatusCas): Promise<'patched' | 'not-found' | 'conflict'>;
  async patchNodeStatus(name: string, volumesAttached: ReadonlyArray<Readonly<AttachedVolume>> | null, cas?: NodeStatusCas): Promise<'patched' | 'not-found' | 'conflict'> {
    const what = { verb: 'patch', resource: 'nodes/status', name };
    const path = `${NODES_PATH}/${pathSegment(name)}/status`;
    if (cas !== undefined) {
      const ops = volumesAttachedCas(cas.expected, volumesAttached);
      // The generated client serialises the ops itself, without Go's escapes (jsonPatchBody):
      // a comparison path, whose `test` of a string holding <, > or & fails on kube-apiserver.
      const sent: Promise<unknown> = this.rawWrites
        ? this.raw(what, { method: 'PATCH', path, body: jsonPatchBody(ops), contentType: PatchStrategy.JsonPatch, response: 'drain' }, { priority: 'high' })
        : this.runner.run(what, (o) => this.core.patchNodeStatusWithHttpInfo({ name, body: ops }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, o)), { priority: 'high' });
      return casOutcome(sent);
    }
    const list = volumesAttached === null ? null : volumesAttachedValue(volumesAttached);
    const body = { status: { volumesAttached: list } };
    const sent: Promise<unknown> = this.rawWrites
      ? this.raw(what, { method: 'PATCH', path, body: JSON.stringify(body), contentType: PatchStrategy.MergePatch, response: 'drain' }, { priority: 'high' })
      : this.runner.run(what, (o) => this.core.patchNodeStatusWithHttpInfo({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch, o)), { priority: 'high' });
    const patched = await this.orUndefined(sent.then(() => true));
    return patched === undefined ? 'not-found' : 'patched';
  }

  async getPersistentVolume(name: string): Promise<PersistentVolumeMeta | undefined> {
    const what = { verb: 'get', resource: 'persistentvolumes', name };
    const raw = await this.orUndefined(
      this.rawWrites
        ? this.raw(what, { method: 'GET', path: `${PVS_PATH}/${pathSegment(name)}`, response: 'json' })
        : this.runner.run(what, (o) => this.core.readPersistentVolumeWithHttpInfo({ name }, o)),
    );
    return raw === undefined ? undefined : must(persistentVolumeMeta(raw), what);
  }

  async patchPersistentVolume(name: string, ops: readonly JsonPatchOp[]): Promise<'patched' | 'not-found' | 'conflict'> {
    const what = { verb: 'patch', resource: 'persistentvolumes', name };
    const sent: Promise<unknown> = this.rawWrites
      ? this.raw(what, { method: 'PATCH', path: `${PVS_PATH}/${pathSegment(name)}`, body: jsonPatchBody(ops), contentType: PatchStrategy.JsonPatch, response: 'drain' })
      : this.runner.run(what, (o) => this.core.patchPersistentVolumeWithHttpInfo({ name, body: ops }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch, o)));
    return casOutcome(sent);
  }

  async listPersistentVolumes(labelSelector: string): Promise<PersistentVolumeMeta[]> {
    const what = { verb: 'list', resource: 'persistentvolumes' };
    const list = await this.runner.run(what, (o) => this.core.listPersistentVolumeWithHttpInfo({ labelSelector }, o));
    return list.items.map((pv) => must(persistentVolumeMeta(pv), what));
  }

  async createEvent(namespace: string, event: EventBody): Promise<void> {
    const what = { verb: 'create', resource: 'events', name: event.metadata.name };
    if (this.rawWrites) {
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'Event', ...event });
      await this.raw(what, { method: 'POST', path: eventsPath(namespace), body, response: 'drain' }, { priority: 'low' });
      return;
    }
    // Timestamps are strings already; the generated serializer passes non-Date values through.
    const body = event as unknown as CoreV1Event;
    await this.runner.run(what, (o) => this.core.createNamespacedEventWithHttpInfo({ namespace, body }, o), { priority: 'low' });
  }

  async patchEvent(namespace: string, name: string, patch: EventPatchBody): Promise<'patched' | 'not-found'> {
    const what = { verb: 'patch', resource: 'events', name };
    const sent: Promise<unknown> = this.rawWrites
      ? this.raw(what, { method: 'PATCH', path: `${eventsPath(namespace)}/${pathSegment(name)}`, body: JSON.stringify(patch), contentType: PatchStrategy.MergePatch, response: 'drain' }, { priority: 'low' })
      : this.runner.run(what, (o) => this.core.patchNamespacedEventWithHttpInfo({ namespace, name, body: patch }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch, o)), { priority: 'low' });
    const r = await this.orUndefined(sent.then(() => true));
    return r === undefined ? 'not-found' : 'patched';
  }

  async getLease(namespace: string, name: string, opts: CallOptions = {}): Promise<LeaseRecord | undefined> {
    const what = { verb: 'get', resource: 'leases', name };
    const raw = await this.orUndefined(this.runner.run(what, (o) => this.coordination.readNamespacedLeaseWithHttpInfo({ namespace, name }, o), { signal: opts.signal, limited: false }));
    return raw === undefined ? undefined : must(projectLease(raw), what);
  }

  async createLease(lease: LeaseRecord, opts: CallOptions = {}): Promise<LeaseRecord> {
    const what = { verb: 'create', resource: 'leases', name: lease.name };
    const body = leaseBody(lease);
    return must(projectLease(await this.runner.run(what, (o) => this.coordination.createNamespacedLeaseWithHttpInfo({ namespace: lease.namespace, body }, o), { signal: opts.signal, limited: false })), what);
  }

  async updateLease(lease: LeaseRecord, opts: CallOptions = {}): Promise<LeaseRecord> {
    const what = { verb: 'update', resource: 'leases', name: lease.name };
    // Without it the update would be unconditional: two candidates could both win.
    if (!lease.resourceVersion) throw fleetError('FA_ERR_KUBE_OBJECT_INVALID', `update leases/${lease.name}: no resourceVersion to guard the write`);
    const body = leaseBody(lease);
    const { namespace, name } = lease;
    return must(projectLease(await this.runner.run(what, (o) => this.coordination.replaceNamespacedLeaseWithHttpInfo({ namespace, name, body }, o), { signal: opts.signal, limited: false })), what);
  }

  async listLeases(namespace: string, labelSelector: string, opts: CallOptions = {}): Promise<LeaseRecord[]> {
    const what = { verb: 'list', resource: 'leases' };
    const list = await this.runner.run(what, (o) => this.coordination.listNamespacedLeaseWithHttpInfo({ namespace, labelSelector }, o), { signal: opts.signal, limited: false });
    // List items may omit the namespace; it is the one listed.
    return list.items.map((l) => must(projectLease({ ...l, metadata: { ...l.metadata, namespace: l.metadata?.namespace ?? namespace } }), what));
  }

  rateLimiterStats() {
    return this.limiter.stats();
  }

  backlog() {
    return { waiting: this.inFlight.waiting(), inFlight: this.inFlight.inFlight() };
  }

  refuseWaiting(): void {
    this.limiter.cancelWaiting(fleetError('FA_ERR_NOT_LEADER', 'not sent: the controller is stopping or no longer leads'));
  }

  /** One raw call through the runner; resolves the parsed body (undefined when drained). */
  private raw(what: What, call: Omit<RawCall, 'signal' | 'timeoutMs'>, opts?: RunOptions): Promise<unknown> {
    return this.runner.runRaw(
      what,
      async ({ timeoutMs, signal }): Promise<RawSent<unknown>> => {
        const r = await sendRaw(this.kc, attemptCall(call, timeoutMs, signal));
        return { status: r.status, data: r.body };
      },
      opts,
    );
  }

  /** Resolves undefined on 404. */
  private async orUndefined<R>(p: Promise<R>): Promise<R | undefined> {
    try {
      return await p;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
}

function must<T>(p: Projected<T>, what: What): T {
  if (p.ok) return p.value;
  throw fleetError('FA_ERR_KUBE_OBJECT_INVALID', `${what.verb} ${what.resource}/${what.name ?? ''}: ${p.reason}`);
}

/** Same attacher, node and source: the PV name, or both inline (the inline spec itself is not compared: the server defaults fields in it). */
function sameSpec(existing: VolumeAttachmentRecord, body: VolumeAttachmentBody): boolean {
  const { attacher, nodeName, source } = body.spec;
  return (
    existing.attacher === attacher &&
    existing.nodeName === nodeName &&
    (existing.pvName ?? '') === (source.persistentVolumeName ?? '') &&
    existing.inline === (source.inlineVolumeSpec !== undefined)
  );
}

function leaseBody(l: LeaseRecord): V1Lease {
  const micro = (s: string | undefined) => (s === undefined ? undefined : new V1MicroTime(Date.parse(s)));
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { ...l.kept?.metadata, name: l.name, namespace: l.namespace, ...(l.resourceVersion ? { resourceVersion: l.resourceVersion } : {}) },
    spec: {
      ...l.kept?.spec,
      holderIdentity: l.holderIdentity,
      leaseDurationSeconds: l.leaseDurationSeconds,
      acquireTime: micro(l.acquireTime),
      renewTime: micro(l.renewTime),
      leaseTransitions: l.leaseTransitions,
    },
  };
}
