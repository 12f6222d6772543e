/**
 * FakeKubeApiClient: an in-memory KubeApiClient for unit tests of the controller layers.
 *
 * Behaves like the real client's contract: AlreadyExists on create is success when the spec
 * matches, delete of a missing VA is `not-found`, patchNodeStatus of an unknown node (not in
 * `nodes`) is `not-found`, patchEvent of an unknown event is `not-found`, lease
 * updates are guarded by resourceVersion (409 on a stale one), a node status CAS compares volume
 * names, PV JSON Patches apply to `persistentVolumes` (a failed operation is `conflict`). Every call is recorded in `calls`;
 * `failNext(method, err)` makes the next call(s) of a method reject with `err` (build one with
 * {@link kubeError}); `hold(method)` makes calls wait until `release(method)`.
 */
import { fleetError, type FleetError } from '../../src/errors/index.js';
import fjp from 'fast-json-patch';
import type { CallOptions, DeletePreconditions, EventBody, EventPatchBody, JsonPatchOp, KubeApiClient, LeaseRecord, NodeStatusCas, PersistentVolumeMeta, VolumeAttachmentBody } from '../../src/kube/api-client.js';
import type { KubeErrorDetails } from '../../src/kube/kube-errors.js';
import type { AttachedVolume, NodeRecord } from '../../src/kube/projections/node.js';
import type { VolumeAttachmentRecord } from '../../src/kube/projections/volume-attachment.js';
import { labelMatches, parseLabelSelector } from '../../src/sim/server/label-selector.js';

type Method = Exclude<keyof KubeApiClient, 'rateLimiterStats' | 'backlog' | 'refuseWaiting'>;

/** A FA_ERR_KUBE_API error as the real client raises it. */
export function kubeError(code: number, reason?: string, what: { verb?: string; resource?: string; name?: string } = {}): FleetError {
  const details: KubeErrorDetails = { verb: what.verb ?? 'call', resource: what.resource ?? 'fake', code, ...(reason ? { reason } : {}) };
  if (what.name) details.name = what.name;
  return fleetError('FA_ERR_KUBE_API', `HTTP ${code}${reason ? ` ${reason}` : ''}`, { details: details as unknown as Record<string, unknown> });
}

export class FakeKubeApiClient implements KubeApiClient {
  readonly volumeAttachments = new Map<string, VolumeAttachmentRecord>();
  readonly nodes = new Map<string, NodeRecord>();
  readonly nodeStatusPatches: Array<{ name: string; volumesAttached: AttachedVolume[] }> = [];
  readonly events: Array<{ namespace: string; event: EventBody }> = [];
  readonly eventPatches: Array<{ namespace: string; name: string; patch: EventPatchBody }> = [];
  readonly leases = new Map<string, LeaseRecord>();
  /** PersistentVolume metadata by name; JSON Patches apply to it (a failed op is `conflict`). */
  readonly persistentVolumes = new Map<string, PersistentVolumeMeta>();
  readonly calls: Array<{ method: Method; args: unknown[] }> = [];
  private readonly failures = new Map<Method, unknown[]>();
  private readonly holds = new Map<Method, Array<() => void>>();
  private readonly held = new Set<Method>();
  private rv = 0;

  /** The next `times` calls of `method` reject with `err`. */
  failNext(method: Method, err: unknown, times = 1): void {
    const q = this.failures.get(method) ?? [];
    for (let i = 0; i < times; i++) q.push(err);
    this.failures.set(method, q);
  }

  /** Calls of `method` wait until {@link release}. */
  hold(method: Method): void {
    this.held.add(method);
  }

  release(method: Method): void {
    this.held.delete(method);
    for (const go of this.holds.get(method) ?? []) go();
    this.holds.delete(method);
  }

  callsOf(method: Method): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  async createVolumeAttachment(body: VolumeAttachmentBody): Promise<'created' | 'already-exists'> {
    await this.enter('createVolumeAttachment', [body]);
    const { metadata, spec } = body;
    const pvName = spec.source.persistentVolumeName;
    const existing = this.volumeAttachments.get(metadata.name);
    if (existing) {
      const same = existing.attacher === spec.attacher && existing.nodeName === spec.nodeName && (existing.pvName ?? '') === (pvName ?? '');
      if (same) return 'already-exists';
      throw kubeError(409, 'AlreadyExists', { verb: 'create', resource: 'volumeattachments', name: metadata.name });
    }
    const va: VolumeAttachmentRecord = {
      name: metadata.name,
      attacher: spec.attacher,
      nodeName: spec.nodeName,
      ...(pvName ? { pvName } : {}),
      inline: spec.source.inlineVolumeSpec !== undefined,
      attached: false,
      deleting: false,
    };
    this.volumeAttachments.set(va.name, va);
    return 'created';
  }

  /** Preconditions are recorded, not checked (the records keep no uid or resourceVersion). */
  async deleteVolumeAttachment(name: string, preconditions?: DeletePreconditions): Promise<'deleted' | 'not-found'> {
    await this.enter('deleteVolumeAttachment', preconditions === undefined ? [name] : [name, preconditions]);
    return this.volumeAttachments.delete(name) ? 'deleted' : 'not-found';
  }

  async getVolumeAttachment(name: string): Promise<VolumeAttachmentRecord | undefined> {
    await this.enter('getVolumeAttachment', [name]);
    const va = this.volumeAttachments.get(name);
    return va && { ...va };
  }

  async getNode(name: string): Promise<NodeRecord | undefined> {
    await this.enter('getNode', [name]);
    const n = this.nodes.get(name);
    return n && structuredClone(n);
  }

  /** With `cas`, `conflict` unless the node's volume names equal the expected ones (device paths are not kept). */
  patchNodeStatus(name: string, volumesAttached: ReadonlyArray<Readonly<AttachedVolume>> | null): Promise<'patched' | 'not-found'>;
  patchNodeStatus(name: string, volumesAttached: ReadonlyArray<Readonly<AttachedVolume>> | null, cas: NodeStatusCas): Promise<'patched' | 'not-found' | 'conflict'>;
  async patchNodeStatus(name: string, volumesAttached: ReadonlyArray<Readonly<AttachedVolume>> | null, cas?: NodeStatusCas): Promise<'patched' | 'not-found' | 'conflict'> {
    await this.enter('patchNodeStatus', cas === undefined ? [name, volumesAttached] : [name, volumesAttached, cas]);
    const node = this.nodes.get(name);
    if (!node) return 'not-found';
    if (cas !== undefined && (cas.expected ?? []).map((v) => v.name).join('\n') !== node.volumesAttached.join('\n')) return 'conflict';
    node.volumesAttached = (volumesAttached ?? []).map((v) => v.name);
    this.nodeStatusPatches.push({ name, volumesAttached: (volumesAttached ?? []).map((v) => ({ ...v })) });
    return 'patched';
  }

  async getPersistentVolume(name: string): Promise<PersistentVolumeMeta | undefined> {
    await this.enter('getPersistentVolume', [name]);
    const pv = this.persistentVolumes.get(name);
    return pv && structuredClone(pv);
  }

  /** Selects as the simulator does (its label-selector parser). */
  async listPersistentVolumes(labelSelector: string): Promise<PersistentVolumeMeta[]> {
    await this.enter('listPersistentVolumes', [labelSelector]);
    const reqs = parseLabelSelector(labelSelector);
    return [...this.persistentVolumes.values()].filter((pv) => reqs.every((r) => labelMatches(pv.labels, r))).map((pv) => structuredClone(pv));
  }

  async patchPersistentVolume(name: string, ops: readonly JsonPatchOp[]): Promise<'patched' | 'not-found' | 'conflict'> {
    await this.enter('patchPersistentVolume', [name, ops]);
    const pv = this.persistentVolumes.get(name);
    if (!pv) return 'not-found';
    const doc = { metadata: structuredClone(pv) };
    try {
      const out = fjp.applyPatch(doc, structuredClone(ops) as fjp.Operation[], true, false).newDocument;
      this.persistentVolumes.set(name, { ...out.metadata, resourceVersion: String(++this.rv) });
      return 'patched';
    } catch {
      return 'conflict';
    }
  }

  async createEvent(namespace: string, event: EventBody): Promise<void> {
    await this.enter('createEvent', [namespace, event]);
    this.events.push({ namespace, event: structuredClone(event) });
  }

  async patchEvent(namespace: string, name: string, patch: EventPatchBody): Promise<'patched' | 'not-found'> {
    await this.enter('patchEvent', [namespace, name, patch]);
    if (!this.events.some((e) => e.namespace === namespace && e.event.metadata.name === name)) return 'not-found';
    this.eventPatches.push({ namespace, name, patch: { ...patch } });
    return 'patched';
  }

  async getLease(namespace: string, name: string, opts?: CallOptions): Promise<LeaseRecord | undefined> {
    await this.enter('getLease', [namespace, name], opts?.signal);
    const l = this.leases.get(`${namespace}/${name}`);
    return l && { ...l };
  }

  async createLease(lease: LeaseRecord, opts?: CallOptions): Promise<LeaseRecord> {
    await this.enter('createLease', [lease], opts?.signal);
    const key = `${lease.namespace}/${lease.name}`;
    if (this.leases.has(key)) throw kubeError(409, 'AlreadyExists', { verb: 'create', resource: 'leases', name: lease.name });
    const stored = { ...lease, resourceVersion: String(++this.rv) };
    this.leases.set(key, stored);
    return { ...stored };
  }

  async updateLease(lease: LeaseRecord, opts?: CallOptions): Promise<LeaseRecord> {
    await this.enter('updateLease', [lease], opts?.signal);
    const key = `${lease.namespace}/${lease.name}`;
    const cur = this.leases.get(key);
    if (!cur) throw kubeError(404, 'NotFound', { verb: 'update', resource: 'leases', name: lease.name });
    if (cur.resourceVersion !== lease.resourceVersion) throw kubeError(409, 'Conflict', { verb: 'update', resource: 'leases', name: lease.name });
    const stored = { ...lease, resourceVersion: String(++this.rv) };
    this.leases.set(key, stored);
    return { ...stored };
  }

  /** Equality requirements (`k=v`, comma-separated) only. */
  async listLeases(namespace: string, labelSelector: string, opts?: CallOptions): Promise<LeaseRecord[]> {
    await this.enter('listLeases', [namespace, labelSelector], opts?.signal);
    const reqs = labelSelector.split(',').filter(Boolean).map((r) => r.split('='));
    const labels = (l: LeaseRecord) => (l.kept?.metadata.labels ?? {}) as Record<string, string>;
    return [...this.leases.values()].filter((l) => l.namespace === namespace && reqs.every(([k, v]) => labels(l)[k ?? ''] === v)).map((l) => ({ ...l }));
  }

  rateLimiterStats() {
    return { acquired: this.calls.length, throttled: 0, waitedMs: 0 };
  }

  backlog() {
    return { waiting: 0, inFlight: 0 };
  }

  refuseWaiting(): void {}

  private async enter(method: Method, args: unknown[], signal?: AbortSignal): Promise<void> {
    this.calls.push({ method, args });
    await Promise.resolve();
    if (this.held.has(method)) {
      await new Promise<void>((resolve, reject) => {
        const q = this.holds.get(method) ?? [];
        q.push(resolve);
        this.holds.set(method, q);
        signal?.addEventListener('abort', () => reject(signal.reason ?? new Error('aborted')), { once: true });
      });
    }
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    const q = this.failures.get(method);
    if (q && q.length > 0) throw q.shift();
  }
}
