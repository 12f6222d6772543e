/**
 * PATCH: JSON merge patch (RFC 7386), JSON patch (RFC 6902 with kube-apiserver's particulars,
 * through fast-json-patch, `test` included) and strategic merge patch, chosen by Content-Type
 * as kube-apiserver does. The patch is applied to the stored object and written back with the stored resourceVersion as
 * precondition (a patch that sets metadata.resourceVersion makes it its own precondition);
 * on the main resource the status is kept, on `/status` only the status changes.
 */
import fjp from 'fast-json-patch';
import type { KubeObject } from '../store/index.js';
import { strategicMerge } from './strategic-merge.js';
import { ApiError, badRequest, invalid } from './status.js';
import { parseJson } from './request-body.js';

export const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'] as const;
export type PatchType = (typeof PATCH_TYPES)[number];

export function isPatchType(t: string): t is PatchType {
  return (PATCH_TYPES as readonly string[]).includes(t);
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386: maps merge recursively, `null` deletes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return patch;
  const out: Record<string, unknown> = isMap(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** The container a JSON pointer's last token is looked up in, and that token; undefined when the container is missing. */
function parentOf(doc: unknown, pointer: string): { parent: Record<string, unknown>; key: string } | undefined {
  if (!pointer.startsWith('/')) return undefined;
  const tokens = pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  let cur: unknown = doc;
  for (let i = 0; i < tokens.length - 1; i++) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[tokens[i]];
  }
  return isMap(cur) ? { parent: cur, key: tokens[tokens.length - 1] } : undefined;
}

type Operation = Parameters<typeof fjp.applyOperation>[1];

/**
 * RFC 6902 as kube-apiserver applies it (evanphx/json-patch v4), which differs from the RFC
 * where an object member is missing but its object exists: `test` of it holds when the value
 * tested is null or absent, and `replace` of it adds it. A patch that cannot be applied is 422.
 */
function jsonPatch(doc: KubeObject, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw badRequest('json patch: the patch must be a JSON array of operations');
  for (const op of ops) {
    if (!isMap(op) || typeof op.op !== 'string' || typeof op.path !== 'string') throw badRequest('json patch: every operation needs "op" and "path"');
  }
  let out: unknown = fjp.deepClone(doc);
  try {
    for (let i = 0; i < ops.length; i++) {
      let op = ops[i] as Operation & { value?: unknown };
      if (op.op === 'test' || op.op === 'replace') {
        const at = parentOf(out, op.path);
        if (at && !Object.prototype.hasOwnProperty.call(at.parent, at.key)) {
          if (op.op === 'test') {
            if (op.value === null || op.value === undefined) continue;
            throw new Error(`testing value ${op.path} failed: test failed`);
          }
          op = { ...op, op: 'add' } as Operation & { value?: unknown };
        }
      }
      out = fjp.applyOperation(out, op, true, true, true, i).newDocument;
    }
  } catch (err) {
    // kube-apiserver answers a patch that cannot be applied (a failed `test`, a missing path) with 422.
    throw invalid(`the server rejected our request due to an error in our request: ${(err as Error).message.split('\n')[0]}`);
  }
  return out;
}

/** Applies a patch body of the given type to `stored`, which is not modified (the result may share parts of it). */
export function applyPatch(type: PatchType, stored: KubeObject, body: string): KubeObject {
  const patch = parseJson(body);
  let out: unknown;
  switch (type) {
    case 'application/json-patch+json':
      out = jsonPatch(stored, patch);
      break;
    case 'application/merge-patch+json':
      if (!isMap(patch)) throw badRequest('merge patch: the patch must be a JSON object');
      out = mergePatch(stored, patch);
      break;
    case 'application/strategic-merge-patch+json':
      out = strategicMerge(stored, patch);
      break;
  }
  if (!isMap(out) || !isMap(out.metadata)) throw invalid('the patched object has no metadata');
  const meta = out.metadata;
  if (meta.name !== stored.metadata.name) throw invalid(`metadata.name: Invalid value: "${String(meta.name)}": field is immutable`);
  if ((meta.namespace ?? undefined) !== (stored.metadata.namespace ?? undefined)) {
    throw invalid(`metadata.namespace: Invalid value: "${String(meta.namespace)}": field is immutable`);
  }
  return out as KubeObject;
}

export function unsupportedPatch(contentType: string): ApiError {
  return new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')} (got "${contentType}")`);
}
