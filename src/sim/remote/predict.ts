/**
 * What a write will make of an object, computed locally with the in-memory store's rules
 * (src/sim/store): the remote store shows this prediction to the actors at once, while the
 * write itself is still queued or on the wire, and computes it again over every newer state
 * the server reports until the write is done. The same functions build the bodies sent: a
 * read-modify-write applies the actor's function to the server's latest object.
 */
import { RESOURCES } from '../store/resources.js';
import { hasFinalizers, keepServerOwnedMeta, podGracePeriod, rfc3339 } from '../store/object-rules.js';
import type { DeleteOptions, KubeObject, ResourceName } from '../store/sim-store.js';

/** A write waiting for (or on) the wire, in the order the actors made them. */
export type WriteOp =
  | { kind: 'create'; obj: KubeObject; uid: string }
  | { kind: 'mutate'; fn: (obj: KubeObject) => KubeObject | void }
  | { kind: 'replace'; obj: KubeObject; status: boolean }
  | { kind: 'delete'; opts: DeleteOptions };

export function copyObject(o: KubeObject): KubeObject {
  return JSON.parse(JSON.stringify(o)) as KubeObject;
}

/** The object a create predicts: the resource's type meta, the predicted uid, no server-set fields. */
export function predictCreate(resource: ResourceName, obj: KubeObject, uid: string, now: number): KubeObject {
  const info = RESOURCES[resource];
  const { apiVersion: _a, kind: _k, metadata, ...rest } = copyObject(obj);
  const meta = Object.assign({}, metadata, { uid, creationTimestamp: rfc3339(now) });
  delete meta.resourceVersion;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  if (!info.namespaced) delete meta.namespace;
  return { apiVersion: info.apiVersion, kind: info.kind, metadata: meta, ...rest };
}

/**
 * The object `op` writes over `base` (a copy: `base` is not changed), as the request body
 * would carry it. Undefined when there is nothing to write to (no object).
 */
export function written(resource: ResourceName, op: Exclude<WriteOp, { kind: 'create' | 'delete' }>, base: KubeObject | undefined): KubeObject | undefined {
  if (!base) return undefined;
  if (op.kind === 'mutate') {
    const c = copyObject(base);
    const next = op.fn(c) ?? c;
    keepServerOwnedMeta(next.metadata, base.metadata);
    next.metadata.resourceVersion = base.metadata.resourceVersion;
    return next;
  }
  const info = RESOURCES[resource];
  if (op.status) {
    const next = copyObject(base);
    if (op.obj.status === undefined) delete next.status;
    else next.status = JSON.parse(JSON.stringify(op.obj.status)) as unknown;
    return next;
  }
  const next = copyObject(op.obj);
  keepServerOwnedMeta(next.metadata, base.metadata);
  next.metadata.resourceVersion = base.metadata.resourceVersion;
  if (info.status) {
    if (base.status === undefined) delete next.status;
    else next.status = JSON.parse(JSON.stringify(base.status)) as unknown;
  }
  return next;
}

/** True when an object in deletion is gone once written so: no finalizers left and no grace period running. */
export function goneAfterWrite(base: KubeObject, next: KubeObject): boolean {
  return base.metadata.deletionTimestamp !== undefined && base.metadata.deletionGracePeriodSeconds === 0 && !hasFinalizers(next.metadata);
}

/** A delete's outcome over `base`: undefined when the object goes at once, else the object marked for deletion. */
export function predictDelete(resource: ResourceName, base: KubeObject, opts: DeleteOptions, now: number): KubeObject | undefined {
  const meta = base.metadata;
  const grace = resource === 'pods' ? podGracePeriod(base, opts.gracePeriodSeconds) : 0;
  if (grace === 0 && !hasFinalizers(meta)) return undefined;
  const current = typeof meta.deletionGracePeriodSeconds === 'number' ? meta.deletionGracePeriodSeconds : undefined;
  if (meta.deletionTimestamp !== undefined && current !== undefined && current <= grace) return base;
  const next = copyObject(base);
  next.metadata.deletionTimestamp = rfc3339(now + grace * 1000);
  next.metadata.deletionGracePeriodSeconds = grace;
  return next;
}

/** The predicted object after `op` over `base` (undefined: absent). */
export function predict(resource: ResourceName, op: WriteOp, base: KubeObject | undefined, now: number): KubeObject | undefined {
  switch (op.kind) {
    case 'create':
      return base ?? op.obj;
    case 'delete':
      return base && predictDelete(resource, base, op.opts, now);
    default: {
      const next = written(resource, op, base);
      return next && base && goneAfterWrite(base, next) ? undefined : next;
    }
  }
}

/**
 * Whether `got` (a status as the server answered a create) already holds every top-level field
 * of `want` as wanted. kube-apiserver resets the status of most resources on create; the
 * wanted status is then written through the status subresource.
 */
export function statusHolds(got: unknown, want: unknown): boolean {
  if (want === undefined) return true;
  if (got === null || typeof got !== 'object' || want === null || typeof want !== 'object') return JSON.stringify(got) === JSON.stringify(want);
  const g = got as Record<string, unknown>;
  return Object.entries(want as Record<string, unknown>).every(([k, v]) => JSON.stringify(g[k]) === JSON.stringify(v));
}
