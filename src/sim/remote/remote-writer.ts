/**
 * The remote store's writes on the wire: one create, one group of read-modify-writes, or one
 * delete of one object, turned into API calls as a kubelet or a CSI attacher makes them.
 *
 * - create: POST; where the server dropped the status (kube-apiserver resets it on create for
 *   most resources), the wanted status follows through the `status` subresource;
 * - read-modify-write: the actors' functions applied to the server's latest object; a change of
 *   metadata or spec is a PUT of the object, a change of status a PUT of `/status`, each with
 *   the resourceVersion it was computed from. On 409 Conflict the object is read again (GET) and
 *   the functions applied again, up to `conflictRetries` times;
 * - delete: DELETE with the grace period and uid precondition asked for.
 *
 * Every call takes a token of the shared rate limiter. A call that got no answer, 429 or a 5xx
 * is sent again after a backoff (Retry-After when given), up to `transientRetries` times. A write
 * that fails for good is logged (once a minute per reason) and counted; nothing is thrown.
 */
import { attemptCall, sendRaw } from '../../kube/raw-write.js';
import { statusCodeOf } from '../../kube/kube-errors.js';
import type { FleetKubeConfig } from '../../kube/kube-config.js';
import type { RateLimiter } from '../../kube/rate-limiter.js';
import { RESOURCES } from '../store/resources.js';
import type { KubeObject, ResourceName } from '../store/sim-store.js';
import { createWriteErrorLog } from '../actors/actor.js';
import { copyObject, goneAfterWrite, statusHolds, written, type WriteOp } from './predict.js';
import { collectionPath, objectPath } from './remote-paths.js';

/** What the server holds after a write, as far as its answers tell. */
export type Outcome =
  /** The object as the server answered (the newest state this write knows). */
  | { kind: 'object'; obj: KubeObject }
  /** The object is gone; `obj` is its last state when the answer carried one. */
  | { kind: 'gone'; obj?: KubeObject }
  /** The write failed; the server's state is not known from it. */
  | { kind: 'unknown' };

export interface WriterCounters {
  requests: number;
  creates: number;
  updates: number;
  statusUpdates: number;
  deletes: number;
  gets: number;
  /** 409 Conflict answers to a read-modify-write (each followed by a GET and another attempt, within the limit). */
  conflicts: number;
  /** Calls sent again after no answer, 429 or a 5xx. */
  retries: number;
  /** Creates that found the object there, deletes and writes that found it gone. */
  lostRaces: number;
  /** Writes that failed for good. */
  errors: number;
}

export interface WriterOptions {
  kc: FleetKubeConfig;
  limiter: RateLimiter;
  requestTimeoutMs: number;
  conflictRetries: number;
  transientRetries: number;
  /** The server's uid for a uid this process predicted (a create's), or the uid itself. */
  resolveUids(text: string): string;
}

const TRANSIENT = new Set([0, 429, 500, 502, 503, 504]);

export class RemoteWriter {
  readonly counters: WriterCounters = { requests: 0, creates: 0, updates: 0, statusUpdates: 0, deletes: 0, gets: 0, conflicts: 0, retries: 0, lostRaces: 0, errors: 0 };
  private readonly logError = createWriteErrorLog('remote');
  private closed = false;

  constructor(private readonly o: WriterOptions) {}

  /** Stops retries and the calls waiting for a token: calls from now on fail at once. */
  close(): void {
    this.closed = true;
    this.o.limiter.cancelWaiting(new Error('remote store closed'));
  }

  async create(resource: ResourceName, op: Extract<WriteOp, { kind: 'create' }>, onCreated: (obj: KubeObject) => void): Promise<Outcome> {
    const { namespace, name } = op.obj.metadata;
    const what = `create ${resource} ${namespace ? `${namespace}/` : ''}${name}`;
    const body = copyObject(op.obj);
    delete body.metadata.uid;
    delete body.metadata.creationTimestamp;
    let created: KubeObject;
    try {
      this.counters.creates++;
      created = await this.call('POST', collectionPath(resource, namespace), this.o.resolveUids(JSON.stringify(body)));
    } catch (err) {
      if (statusCodeOf(err) !== 409) return this.failed(err, what);
      this.counters.lostRaces++;
      this.logError(err, what);
      return this.read(resource, namespace, name, what);
    }
    onCreated(created);
    if (!RESOURCES[resource].status || statusHolds(created.status, op.obj.status)) return { kind: 'object', obj: created };
    // The status the server dropped, merged over what it set itself (a pod's qosClass…).
    const want = op.obj.status as Record<string, unknown>;
    return this.writeGroup(resource, namespace, name, [{ kind: 'mutate', fn: (o) => void (o.status = { ...((o.status ?? {}) as Record<string, unknown>), ...want }) }], created, what);
  }

  /** Applies `ops` (read-modify-writes) to `base` (the server's latest object; read first when undefined). */
  async writeGroup(resource: ResourceName, namespace: string | undefined, name: string, ops: ReadonlyArray<Exclude<WriteOp, { kind: 'create' | 'delete' }>>, base: KubeObject | undefined, what = `update ${resource} ${namespace ? `${namespace}/` : ''}${name}`): Promise<Outcome> {
    const info = RESOURCES[resource];
    let cur: Outcome = base ? { kind: 'object', obj: base } : await this.read(resource, namespace, name, what);
    for (let attempt = 0; ; attempt++) {
      if (cur.kind !== 'object') return cur;
      const from = cur.obj;
      let next: KubeObject | undefined = from;
      for (const op of ops) next = written(resource, op, next);
      if (!next) return cur;
      if (JSON.stringify(next) === JSON.stringify(from)) return cur;
      // With a status subresource, the object and its status are written apart.
      const strip = (o: KubeObject) => JSON.stringify({ ...o, status: undefined });
      const mainChanged = !info.status || strip(next) !== strip(from);
      const statusChanged = info.status && JSON.stringify(next.status) !== JSON.stringify(from.status);
      try {
        let obj = from;
        if (mainChanged) {
          this.counters.updates++;
          const body = info.status ? { ...next, status: from.status } : next;
          obj = await this.call('PUT', objectPath(resource, namespace, name), this.o.resolveUids(JSON.stringify(body)));
          if (goneAfterWrite(from, obj)) return { kind: 'gone', obj };
        }
        if (info.status && statusChanged) {
          this.counters.statusUpdates++;
          const body = { ...obj, status: next.status };
          obj = await this.call('PUT', objectPath(resource, namespace, name, 'status'), this.o.resolveUids(JSON.stringify(body)));
        }
        return { kind: 'object', obj };
      } catch (err) {
        const code = statusCodeOf(err);
        if (code === 404) {
          this.counters.lostRaces++;
          return { kind: 'gone' };
        }
        if (code !== 409) return this.failed(err, what);
        this.counters.conflicts++;
        if (attempt >= this.o.conflictRetries) return this.failed(err, `${what} (after ${attempt + 1} conflicts)`);
        cur = await this.read(resource, namespace, name, what);
      }
    }
  }

  async delete(resource: ResourceName, namespace: string | undefined, name: string, op: Extract<WriteOp, { kind: 'delete' }>): Promise<Outcome> {
    const what = `delete ${resource} ${namespace ? `${namespace}/` : ''}${name}`;
    const { gracePeriodSeconds, uid } = op.opts;
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (gracePeriodSeconds !== undefined) body.gracePeriodSeconds = gracePeriodSeconds;
    if (uid !== undefined) body.preconditions = { uid };
    try {
      this.counters.deletes++;
      const answer = await this.call('DELETE', objectPath(resource, namespace, name), this.o.resolveUids(JSON.stringify(body)));
      // A Status: deleted. An object: deleted too (its last state), unless finalizers or a pod's
      // grace period hold it (kube-apiserver answers 200 either way).
      if (answer.kind === 'Status') return { kind: 'gone' };
      const m = answer.metadata;
      const held = (m.finalizers?.length ?? 0) > 0 || (m.deletionTimestamp !== undefined && (m.deletionGracePeriodSeconds ?? 0) > 0 && gracePeriodSeconds !== 0);
      return held ? { kind: 'object', obj: answer } : { kind: 'gone', obj: answer };
    } catch (err) {
      if (statusCodeOf(err) === 404) {
        this.counters.lostRaces++;
        return { kind: 'gone' };
      }
      return this.failed(err, what);
    }
  }

  /** GET: the object, or gone on 404. */
  async read(resource: ResourceName, namespace: string | undefined, name: string, what: string): Promise<Outcome> {
    try {
      this.counters.gets++;
      return { kind: 'object', obj: await this.call('GET', objectPath(resource, namespace, name)) };
    } catch (err) {
      if (statusCodeOf(err) === 404) return { kind: 'gone' };
      return this.failed(err, `${what} (read)`);
    }
  }

  private failed(err: unknown, what: string): Outcome {
    if (this.closed) return { kind: 'unknown' }; // cut short by close(): not the server's doing
    this.counters.errors++;
    this.logError(err, what);
    return { kind: 'unknown' };
  }

  /** One call, sent again after no answer, 429 or a 5xx. Resolves with the parsed answer. */
  private async call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: string): Promise<KubeObject> {
    for (let attempt = 0; ; attempt++) {
      if (this.closed) throw new Error('remote store closed');
      await this.o.limiter.acquire();
      this.counters.requests++;
      try {
        const res = await sendRaw(this.o.kc, attemptCall({ method, path, body, response: 'json' }, this.o.requestTimeoutMs, undefined));
        return res.body as KubeObject;
      } catch (err) {
        const code = statusCodeOf(err);
        if (!TRANSIENT.has(code) || attempt >= this.o.transientRetries || this.closed) throw err;
        this.counters.retries++;
        const after = (err as { retryAfterMs?: unknown }).retryAfterMs;
        const delay = typeof after === 'number' ? after : Math.min(5000, 200 * 2 ** attempt) * (0.5 + Math.random());
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }
}
