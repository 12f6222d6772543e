/**
 * Server-side printing: the meta.k8s.io/v1 `Table` that kubectl asks for (Accept
 * `application/json;as=Table;g=meta.k8s.io;v=v1`) when it prints human-readable output, with
 * the columns kube-apiserver prints for the simulated kinds (pods: READY, STATUS, RESTARTS…).
 * Only human-facing requests take this path; lists and watches for programs stay raw JSON.
 */
import type { KubeObject } from '../store/index.js';
import type { ResourceInfo } from '../store/resources.js';

type Cell = string | number;
interface Column { name: string; type: 'string' | 'integer' | 'date'; format?: string; description?: string; priority?: number }
interface Printer { columns: Column[]; cells(o: Rec, now: number): Cell[] }
type Rec = Record<string, unknown>;

const NAME: Column = { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.' };
const AGE: Column = { name: 'Age', type: 'string', description: 'Time since creation.' };
const rec = (v: unknown): Rec => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : {});
const arr = (v: unknown): Rec[] => (Array.isArray(v) ? (v as Rec[]) : []);
const str = (v: unknown, dflt = '<none>'): string => (typeof v === 'string' && v !== '' ? v : dflt);

/** kube's short human durations: 45s, 5m, 3h, 2d. */
export function humanAge(createdIso: unknown, now: number): string {
  const t = typeof createdIso === 'string' ? Date.parse(createdIso) : NaN;
  if (!Number.isFinite(t)) return '<unknown>';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h` : `${Math.floor(h / 24)}d`;
}

const age = (o: Rec, now: number) => humanAge(rec(o.metadata).creationTimestamp, now);
const name = (o: Rec) => str(rec(o.metadata).name, '');

function podStatus(o: Rec): string {
  if (rec(o.metadata).deletionTimestamp) return 'Terminating';
  return str(rec(o.status).reason, str(rec(o.status).phase, 'Pending'));
}

function nodeStatus(o: Rec): string {
  const ready = arr(rec(o.status).conditions).find((c) => c.type === 'Ready');
  let s = ready?.status === 'True' ? 'Ready' : ready?.status === 'False' ? 'NotReady' : 'Unknown';
  if (rec(o.spec).unschedulable === true) s += ',SchedulingDisabled';
  return s;
}

const PRINTERS: Partial<Record<string, Printer>> = {
  pods: {
    columns: [NAME, { name: 'Ready', type: 'string' }, { name: 'Status', type: 'string' }, { name: 'Restarts', type: 'integer' }, AGE, { name: 'IP', type: 'string', priority: 1 }, { name: 'Node', type: 'string', priority: 1 }],
    cells(o, now) {
      const cs = arr(rec(o.status).containerStatuses);
      const total = arr(rec(o.spec).containers).length;
      const ready = cs.filter((c) => c.ready === true).length;
      const restarts = cs.reduce((n, c) => n + (typeof c.restartCount === 'number' ? c.restartCount : 0), 0);
      return [name(o), `${ready}/${total}`, podStatus(o), restarts, age(o, now), str(rec(o.status).podIP), str(rec(o.spec).nodeName)];
    },
  },
  nodes: {
    columns: [NAME, { name: 'Status', type: 'string' }, { name: 'Roles', type: 'string' }, AGE, { name: 'Version', type: 'string' }],
    cells: (o, now) => [name(o), nodeStatus(o), '<none>', age(o, now), str(rec(rec(o.status).nodeInfo).kubeletVersion, '')],
  },
  persistentvolumes: {
    columns: [NAME, { name: 'Capacity', type: 'string' }, { name: 'Access Modes', type: 'string' }, { name: 'Reclaim Policy', type: 'string' }, { name: 'Status', type: 'string' }, { name: 'Claim', type: 'string' }, { name: 'StorageClass', type: 'string' }, AGE],
    cells(o, now) {
      const spec = rec(o.spec);
      const claim = rec(spec.claimRef);
      return [name(o), str(rec(spec.capacity).storage, ''), modes(spec.accessModes), str(spec.persistentVolumeReclaimPolicy, ''), str(rec(o.status).phase, ''), claim.name ? `${str(claim.namespace, '')}/${str(claim.name)}` : '', str(spec.storageClassName, ''), age(o, now)];
    },
  },
  persistentvolumeclaims: {
    columns: [NAME, { name: 'Status', type: 'string' }, { name: 'Volume', type: 'string' }, { name: 'Capacity', type: 'string' }, { name: 'Access Modes', type: 'string' }, { name: 'StorageClass', type: 'string' }, AGE],
    cells: (o, now) => [name(o), str(rec(o.status).phase, 'Pending'), str(rec(o.spec).volumeName, ''), str(rec(rec(o.status).capacity).storage, ''), modes(rec(o.status).accessModes), str(rec(o.spec).storageClassName, ''), age(o, now)],
  },
  volumeattachments: {
    columns: [NAME, { name: 'Attacher', type: 'string' }, { name: 'PV', type: 'string' }, { name: 'Node', type: 'string' }, { name: 'Attached', type: 'string' }, AGE],
    cells: (o, now) => [name(o), str(rec(o.spec).attacher, ''), str(rec(rec(o.spec).source).persistentVolumeName, ''), str(rec(o.spec).nodeName, ''), String(rec(o.status).attached === true), age(o, now)],
  },
};

const DEFAULT_PRINTER: Printer = { columns: [NAME, AGE], cells: (o, now) => [name(o), age(o, now)] };

function modes(v: unknown): string {
  const short: Record<string, string> = { ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' };
  return (Array.isArray(v) ? v : []).map((m) => short[String(m)] ?? String(m)).join(',');
}

/** True when the Accept header asks for a meta.k8s.io Table (kubectl's human-readable output). */
export function wantsTable(accept: string | undefined): boolean {
  return accept !== undefined && accept.includes('as=Table') && accept.includes('g=meta.k8s.io');
}

export type IncludeObject = 'None' | 'Object' | 'PartialObjectMetadata';

export function includeObjectOf(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'PartialObjectMetadata';
}

function row(p: Printer, o: KubeObject, include: IncludeObject, now: number): Rec {
  const r: Rec = { cells: p.cells(o as Rec, now) };
  if (include === 'Object') r.object = o;
  else if (include === 'PartialObjectMetadata') r.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
  return r;
}

/** A Table of `objects` with the list metadata given (resourceVersion, continue). */
export function toTable(info: ResourceInfo, objects: KubeObject[], listMeta: Rec, include: IncludeObject, withColumns = true): string {
  const p = PRINTERS[info.name] ?? DEFAULT_PRINTER;
  const now = Date.now();
  return JSON.stringify({
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    ...(withColumns ? { columnDefinitions: p.columns.map((c) => ({ format: '', description: '', priority: 0, ...c })) } : {}),
    rows: objects.map((o) => row(p, o, include, now)),
  });
}
