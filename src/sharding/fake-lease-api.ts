/**
 * An in-memory {@link ShardLeaseApi} with the API server's concurrency rules, for tests that run
 * several replicas against one store: create of an existing Lease is 409 AlreadyExists, update
 * of a missing one 404 NotFound, update with a resourceVersion other than the stored one 409
 * Conflict; every committed write gets a new resourceVersion. Lists filter by namespace and by
 * equality label requirements (`k=v`, `k==v`, comma-separated). Records are copied in and out,
 * so a caller never shares state with the store.
 */
import { fleetError } from '../errors/index.js';
import type { CallOptions, LeaseRecord } from '../kube/api-client.js';
import type { KubeErrorDetails } from '../kube/kube-errors.js';
import type { ShardLeaseApi } from './lease-api.js';

export interface FakeLeaseApi extends ShardLeaseApi {
  /** The stored Leases by `namespace/name`. */
  readonly leases: Map<string, LeaseRecord>;
  /** Committed writes, in order. */
  readonly writes: Array<{ verb: 'create' | 'update'; name: string; holderIdentity: string; resourceVersion: string }>;
  /** The stored Lease, or undefined. */
  get(namespace: string, name: string): LeaseRecord | undefined;
}

export function createFakeLeaseApi(): FakeLeaseApi {
  return new InMemoryLeases();
}

function apiError(code: number, reason: string, verb: string, name?: string): Error {
  const details: KubeErrorDetails = { verb, resource: 'leases', code, reason, ...(name ? { name } : {}) };
  return fleetError('FA_ERR_KUBE_API', `HTTP ${code} ${reason}`, { details: details as unknown as Record<string, unknown> });
}

const copy = (l: LeaseRecord): LeaseRecord => structuredClone(l);

class InMemoryLeases implements FakeLeaseApi {
  readonly leases = new Map<string, LeaseRecord>();
  readonly writes: FakeLeaseApi['writes'] = [];
  private rv = 0;

  get(namespace: string, name: string): LeaseRecord | undefined {
    const l = this.leases.get(`${namespace}/${name}`);
    return l && copy(l);
  }

  async getLease(namespace: string, name: string, opts?: CallOptions): Promise<LeaseRecord | undefined> {
    await this.enter(opts);
    return this.get(namespace, name);
  }

  async createLease(lease: LeaseRecord, opts?: CallOptions): Promise<LeaseRecord> {
    await this.enter(opts);
    const key = `${lease.namespace}/${lease.name}`;
    if (this.leases.has(key)) throw apiError(409, 'AlreadyExists', 'create', lease.name);
    return this.commit('create', key, lease);
  }

  async updateLease(lease: LeaseRecord, opts?: CallOptions): Promise<LeaseRecord> {
    await this.enter(opts);
    const key = `${lease.namespace}/${lease.name}`;
    if (!lease.resourceVersion) throw fleetError('FA_ERR_KUBE_OBJECT_INVALID', `update leases/${lease.name}: no resourceVersion to guard the write`);
    const cur = this.leases.get(key);
    if (!cur) throw apiError(404, 'NotFound', 'update', lease.name);
    if (cur.resourceVersion !== lease.resourceVersion) throw apiError(409, 'Conflict', 'update', lease.name);
    return this.commit('update', key, lease);
  }

  async listLeases(namespace: string, labelSelector: string, opts?: CallOptions): Promise<LeaseRecord[]> {
    await this.enter(opts);
    const reqs = labelSelector
      .split(',')
      .map((r) => r.trim())
      .filter(Boolean)
      .map((r) => {
        const m = /^([^=!\s]+)\s*==?\s*(\S*)$/.exec(r);
        if (!m) throw apiError(400, 'BadRequest', 'list');
        return [m[1] as string, m[2] as string] as const;
      });
    const out: LeaseRecord[] = [];
    for (const l of this.leases.values()) {
      const labels = (l.kept?.metadata.labels ?? {}) as Record<string, string>;
      if (l.namespace === namespace && reqs.every(([k, v]) => labels[k] === v)) out.push(copy(l));
    }
    return out;
  }

  private commit(verb: 'create' | 'update', key: string, lease: LeaseRecord): LeaseRecord {
    const stored = { ...copy(lease), resourceVersion: String(++this.rv) };
    this.leases.set(key, stored);
    this.writes.push({ verb, name: lease.name, holderIdentity: lease.holderIdentity, resourceVersion: stored.resourceVersion });
    return copy(stored);
  }

  /** A call reaches the store one microtask later, as an answer does; an aborted call fails. */
  private async enter(opts?: CallOptions): Promise<void> {
    await Promise.resolve();
    if (opts?.signal?.aborted) throw apiError(0, 'Aborted', 'call');
  }
}
