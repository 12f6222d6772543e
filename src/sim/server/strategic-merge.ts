/**
 * Strategic merge patch (application/strategic-merge-patch+json) for the fields the simulated
 * resources carry. Like a JSON merge patch (maps merge, `null` deletes), except for lists
 * Kubernetes declares with `patchStrategy: merge`: lists of maps merge element-wise by their
 * merge key (`status.conditions` by type), primitive lists merge as sets
 * (`metadata.finalizers`). Every other list is replaced whole, which is what the atomic lists
 * `spec.taints`, `status.volumesAttached` and `status.volumesInUse` need. Directives
 * supported: `$patch: replace|delete` (maps and list elements), `$deleteFromPrimitiveList/<f>`;
 * `$setElementOrder/<f>` and `$retainKeys` are accepted and ignored.
 */
import { badRequest } from './status.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonMap = { [k: string]: Json };

/** Merge-strategy lists by path from the object root (`[]` marks a list element); value = merge key, or '' for a primitive set. */
const MERGE_LISTS: Record<string, string> = {
  'metadata.finalizers': '',
  'metadata.ownerReferences': 'uid',
  'status.conditions': 'type',
  'status.addresses': 'type',
  'spec.containers': 'name',
  'spec.initContainers': 'name',
  'spec.containers[].env': 'name',
  'spec.containers[].ports': 'containerPort',
  'spec.containers[].volumeMounts': 'mountPath',
  'spec.initContainers[].env': 'name',
  'spec.initContainers[].volumeMounts': 'mountPath',
  'spec.volumes': 'name',
  'spec.imagePullSecrets': 'name',
  'spec.drivers': 'name',
};

const isMap = (v: unknown): v is JsonMap => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Applies a strategic merge patch to `original` (not mutated) and returns the result. */
export function strategicMerge(original: unknown, patch: unknown): unknown {
  if (!isMap(patch)) throw badRequest('strategic merge patch: the patch must be a JSON object');
  return mergeMap(isMap(original) ? original : {}, patch, '');
}

function join(path: string, field: string): string {
  return path === '' ? field : `${path}.${field}`;
}

function mergeMap(original: JsonMap, patch: JsonMap, path: string): JsonMap {
  const directive = patch.$patch;
  if (directive === 'replace') {
    const { $patch: _ignored, ...rest } = patch;
    return stripDirectives(rest) as JsonMap;
  }
  if (directive !== undefined && directive !== 'merge') throw badRequest(`strategic merge patch: unknown $patch directive "${String(directive)}" at ${path || '<root>'}`);
  const out: JsonMap = { ...original };
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const cur = out[field];
      if (Array.isArray(cur) && Array.isArray(v)) out[field] = cur.filter((x) => !v.some((d) => d === x));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    const cur = out[k];
    const p = join(path, k);
    if (isMap(v)) {
      if (v.$patch === 'delete') delete out[k];
      else out[k] = mergeMap(isMap(cur) ? cur : {}, v, p);
    } else if (Array.isArray(v)) {
      out[k] = mergeList(Array.isArray(cur) ? cur : [], v, p);
    } else {
      out[k] = v;
    }
  }
  return out;
}

function mergeList(original: Json[], patch: Json[], path: string): Json[] {
  const key = MERGE_LISTS[path];
  if (key === undefined) return patch.filter((e) => !(isMap(e) && e.$patch !== undefined)).map(stripDirectives);
  if (key === '') {
    const out = [...original];
    for (const v of patch) if (!out.some((x) => x === v)) out.push(v);
    return out;
  }
  if (patch.some((e) => isMap(e) && e.$patch === 'replace')) {
    return patch.filter((e) => !(isMap(e) && e.$patch === 'replace')).map(stripDirectives);
  }
  const out = [...original];
  for (const el of patch) {
    if (!isMap(el)) throw badRequest(`strategic merge patch: ${path} elements must be objects with merge key "${key}"`);
    const id = el[key];
    if (id === undefined) throw badRequest(`strategic merge patch: ${path} element lacks merge key "${key}"`);
    const i = out.findIndex((o) => isMap(o) && o[key] === id);
    if (el.$patch === 'delete') {
      if (i >= 0) out.splice(i, 1);
    } else if (i >= 0) {
      out[i] = mergeMap(out[i] as JsonMap, el, `${path}[]`);
    } else {
      out.push(mergeMap({}, el, `${path}[]`));
    }
  }
  return out;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isMap(v)) return v;
  const out: JsonMap = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(x);
  return out;
}
