/**
 * Label and field selectors as kube-apiserver accepts them in `labelSelector` and
 * `fieldSelector`: label requirements as label-selector.ts parses them; field requirements
 * `f=v`, `f==v`, `f!=v` over the fields each resource supports. A parse error is a 400
 * BadRequest, as upstream.
 */
import type { KubeObject } from '../store/index.js';
import type { ResourceInfo } from '../store/resources.js';
import { labelMatches, parseLabelSelector } from './label-selector.js';
import { badRequest } from './status.js';

export { parseLabelSelector } from './label-selector.js';

interface FieldReq { path: string[]; field: string; value: string; equal: boolean }

export interface Selector {
  /** True when the object satisfies every requirement. */
  matches(obj: KubeObject): boolean;
  /** Equality requirements the store can serve from its indexes. */
  readonly nodeName?: string;
  readonly namespace?: string;
  readonly name?: string;
}

const COMMON_FIELDS = ['metadata.name', 'metadata.namespace'];
const FIELDS: Record<string, string[]> = {
  pods: ['spec.nodeName', 'status.phase', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.podIP', 'status.nominatedNodeName'],
  nodes: ['spec.unschedulable'],
  events: ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'],
  persistentvolumeclaims: [],
};

/** Splits on commas outside parentheses. */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out.map((x) => x.trim()).filter((x) => x !== '');
}

export function parseFieldSelector(info: ResourceInfo, sel: string): FieldReq[] {
  const allowed = [...COMMON_FIELDS, ...(FIELDS[info.name] ?? [])];
  const reqs: FieldReq[] = [];
  for (const part of splitTop(sel)) {
    const m = /^([A-Za-z.]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid field selector: "${part}"`);
    if (!allowed.includes(m[1])) throw badRequest(`field label not supported: ${m[1]}`);
    reqs.push({ field: m[1], path: m[1].split('.'), value: m[3].trim(), equal: m[2] !== '!=' });
  }
  return reqs;
}

function fieldValue(obj: KubeObject, path: string[]): string {
  let cur: unknown = obj;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null) return '';
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur === undefined || cur === null ? '' : String(cur);
}

/** Compiles both selectors; undefined when neither constrains anything. */
export function compileSelector(info: ResourceInfo, labelSelector?: string | null, fieldSelector?: string | null): Selector | undefined {
  const labels = labelSelector ? parseLabelSelector(labelSelector) : [];
  const fields = fieldSelector ? parseFieldSelector(info, fieldSelector) : [];
  if (labels.length === 0 && fields.length === 0) return undefined;
  const eq = (f: string) => fields.find((r) => r.equal && r.field === f)?.value;
  return {
    nodeName: info.name === 'pods' ? eq('spec.nodeName') || undefined : undefined,
    namespace: eq('metadata.namespace'),
    name: eq('metadata.name'),
    matches(obj: KubeObject): boolean {
      for (const r of labels) if (!labelMatches(obj.metadata?.labels, r)) return false;
      for (const r of fields) if ((fieldValue(obj, r.path) === r.value) !== r.equal) return false;
      return true;
    },
  };
}
