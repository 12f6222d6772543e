/**
 * create (POST), update (PUT), patch (PATCH), delete and deletecollection (DELETE), with
 * kube-apiserver's checks on the request: the object's name and namespace must agree with the
 * URL, `/status` is the only subresource, dry runs are refused rather than committed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { resourceDetails, type DeleteOptions, type KubeObject, type ServableStore } from '../store/index.js';
import { applyPatch, isPatchType, unsupportedPatch } from './patch.js';
import { qualifiedName, type ResourceTarget } from './read-handlers.js';
import { mediaType, parseObject, readBody } from './request-body.js';
import { compileSelector } from './selectors.js';
import { ApiError, badRequest, methodNotAllowed, notFound, sendJson } from './status.js';

/**
 * Resources whose update (PUT, main resource or status) may leave out metadata.resourceVersion,
 * as their registry strategies' AllowUnconditionalUpdate say; an update of any other resource
 * without one is 422 Invalid. Patches always carry the stored one.
 */
const UNCONDITIONAL_UPDATES = new Set(['namespaces', 'nodes', 'pods', 'persistentvolumes', 'persistentvolumeclaims', 'events']);

/** The store, and how a request's store writes are committed (attributed to its user in the write log). */
export interface WriteContext {
  store: ServableStore;
  /** Runs `fn`, one synchronous store write, as the request's. */
  commit<T>(fn: () => T): T;
}

function subresourceOf(t: ResourceTarget): 'status' | undefined {
  if (t.subresource === undefined) return undefined;
  if (t.subresource === 'status' && t.info.status) return 'status';
  throw notFound();
}

function refuseDryRun(q: URLSearchParams): void {
  if (q.getAll('dryRun').length > 0) throw badRequest('dryRun is not supported by the simulated API server');
}

/** Puts the URL's namespace into the object, refusing a different one in the body. */
function placeInNamespace(t: ResourceTarget, obj: Record<string, unknown>): KubeObject {
  const meta = obj.metadata;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return obj as KubeObject; // the store reports Invalid
  const m = meta as Record<string, unknown>;
  if (t.info.namespaced) {
    if (m.namespace !== undefined && m.namespace !== '' && m.namespace !== t.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    m.namespace = t.namespace;
  }
  return obj as KubeObject;
}

export async function handleCreate(w: WriteContext, t: ResourceTarget, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (t.name !== undefined) throw methodNotAllowed();
  if (t.info.namespaced && t.namespace === undefined) throw methodNotAllowed(`create of a namespaced resource needs a namespace in the path: /…/namespaces/{namespace}/${t.info.name}`);
  refuseDryRun(q);
  const obj = placeInNamespace(t, parseObject(await readBody(req)));
  sendJson(res, 201, w.commit(() => w.store.createJson(t.info.name, obj)));
}

export async function handleUpdate(w: WriteContext, t: ResourceTarget, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (t.name === undefined) throw methodNotAllowed();
  const subresource = subresourceOf(t);
  refuseDryRun(q);
  const obj = placeInNamespace(t, parseObject(await readBody(req)));
  const name = (obj.metadata as { name?: unknown } | undefined)?.name;
  if (name !== undefined && name !== t.name) throw badRequest(`the name of the object (${String(name)}) does not match the name on the URL (${t.name})`);
  const rv = (obj.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion;
  if (!UNCONDITIONAL_UPDATES.has(t.info.name) && (rv === undefined || rv === '' || rv === '0')) {
    throw new ApiError(422, 'Invalid', `${t.info.kind}.${t.info.group || 'core'} "${t.name}" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`, resourceDetails(t.info, t.name));
  }
  sendJson(res, 200, w.commit(() => w.store.updateJson(t.info.name, obj, { subresource })));
}

export async function handlePatch(w: WriteContext, t: ResourceTarget, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (t.name === undefined) throw methodNotAllowed();
  const subresource = subresourceOf(t);
  refuseDryRun(q);
  const type = mediaType(req.headers['content-type']);
  if (!isPatchType(type)) throw unsupportedPatch(type);
  const body = await readBody(req);
  const name = t.name;
  sendJson(res, 200, w.commit(() => w.store.patchJson(t.info.name, t.namespace, name, (stored) => applyPatch(type, stored, body), { subresource })));
}

function numberParam(raw: unknown, what: string): number | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw badRequest(`invalid ${what}: "${String(raw)}"`);
  return n;
}

/** DeleteOptions from the body (kubectl, client-node) and the query string. */
async function deleteOptions(q: URLSearchParams, req: IncomingMessage): Promise<DeleteOptions> {
  const text = await readBody(req);
  const body = text.trim() === '' ? {} : parseObject(text);
  const pre = (body.preconditions ?? {}) as { uid?: unknown; resourceVersion?: unknown };
  const policy = body.propagationPolicy ?? q.get('propagationPolicy');
  if (policy !== undefined && policy !== null && !['Orphan', 'Background', 'Foreground'].includes(String(policy))) {
    throw new ApiError(422, 'Invalid', `DeleteOptions.propagationPolicy: Unsupported value: "${String(policy)}": supported values: "Foreground", "Background", "Orphan"`);
  }
  if (body.dryRun !== undefined || q.getAll('dryRun').length > 0) throw badRequest('dryRun is not supported by the simulated API server');
  return {
    gracePeriodSeconds: numberParam(body.gracePeriodSeconds ?? q.get('gracePeriodSeconds'), 'gracePeriodSeconds'),
    uid: typeof pre.uid === 'string' ? pre.uid : undefined,
    resourceVersion: typeof pre.resourceVersion === 'string' ? pre.resourceVersion : undefined,
  };
}

export async function handleDelete(w: WriteContext, t: ResourceTarget, q: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (t.subresource !== undefined) throw methodNotAllowed();
  const opts = await deleteOptions(q, req);
  const name = t.name;
  if (name === undefined) return deleteCollection(w, t, q, opts, res);
  const after = w.commit(() => w.store.deleteJson(t.info.name, t.namespace, name, opts));
  if (after === undefined) throw new ApiError(404, 'NotFound', `${qualifiedName(t.info)} "${name}" not found`, resourceDetails(t.info, name));
  sendJson(res, 200, after);
}

function deleteCollection(w: WriteContext, t: ResourceTarget, q: URLSearchParams, opts: DeleteOptions, res: ServerResponse): void {
  if (t.info.namespaced && t.namespace === undefined) throw methodNotAllowed('deletecollection of a namespaced resource needs a namespace in the path');
  const sel = compileSelector(t.info, q.get('labelSelector'), q.get('fieldSelector'));
  for (const obj of w.store.list(t.info.name, t.namespace)) {
    if (sel && !sel.matches(obj)) continue;
    w.commit(() => w.store.delete(t.info.name, t.namespace, obj.metadata.name, { gracePeriodSeconds: opts.gracePeriodSeconds }));
  }
  sendJson(res, 200, JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' }));
}
