/**
 * Validating readers for untrusted Kubernetes JSON, shared by the projections.
 *
 * A projection reads the few fields the controller uses from a raw object (JSON.parse output from
 * a list or watch, or a generated-client instance whose timestamps are Dates) and never keeps the
 * raw object. Readers throw {@link ProjectionError}; {@link project} turns that into a
 * `{ ok: false, reason }` result, so nothing escapes into a watch loop.
 */
export class ProjectionError extends Error {
  constructor(
    readonly path: string,
    readonly what: string,
  ) {
    super(`${path}: ${what}`);
    this.name = 'ProjectionError';
  }
}

/**
 * `err` with its path placed under `prefix` (a list item's path such as `spec.volumes[2]`), so
 * that hot loops build an item's path only when the item turns out malformed.
 */
export function underPath(err: unknown, prefix: string): unknown {
  if (!(err instanceof ProjectionError)) return err;
  return new ProjectionError(err.path === '' ? prefix : `${prefix}.${err.path}`, err.what);
}

import type { KeepSpec } from '../sieve/keep-spec.js';
import type { ProjectionCodec } from './record-codec.js';

export type Projected<T> = { ok: true; value: T } | { ok: false; reason: string };

/** How one resource is listed, watched, keyed and projected. */
export interface ResourceKind<T> {
  /** Plural resource name, the metrics label (e.g. `pods`). */
  resource: string;
  /** Collection path, e.g. `/api/v1/pods` (all namespaces). */
  path: string;
  namespaced: boolean;
  project(raw: unknown): Projected<T>;
  /**
   * Pools again the strings `project` pools (string-pool.ts), for a projection that crossed a
   * thread as JSON text and so holds fresh copies of them (list-page.ts). Absent: nothing pooled.
   */
  reshare?(value: T): T;
  /**
   * An update as the store keeps it: `fresh` with every part equal to the stored `old` taken
   * from `old` (the same strings and lists), or `old` itself when nothing the projection keeps
   * changed. The parsed copies then die young instead of being promoted with the stored object
   * and freed only by a full collection. For kinds updated often through their lives (nodes,
   * PersistentVolumes, VolumeAttachments).
   */
  keepFrom?(old: T, fresh: T): T;
  /**
   * How a packed store (kube/packed-store.ts) holds the projection as bytes: for the kinds whose
   * count grows with the fleet. With a codec the store hands out decoded copies and compares
   * encoded bytes on update, so `keepFrom` is not used. Absent: a Map of the objects.
   */
  codec?: ProjectionCodec<T>;
  /**
   * For a kind whose projection reads a malformed object in part (nodes: node.ts), the parts it
   * could not read; counted and logged with the malformed objects, though the value is stored.
   */
  unreadableOf?(value: T): readonly string[] | undefined;
  /**
   * Every member `project` (and {@link readMeta}) reads, for the JSON sieve (kube/sieve): list
   * pages are cut down to these before they are parsed. A member left out here reads as absent,
   * so a spec must name all of them; test/kube/keep-spec-coverage.test.ts records the reads of
   * each projection and checks. Absent: pages are parsed whole.
   */
  keep?: KeepSpec;
}

export type Obj = Record<string, unknown>;

/** Runs a projection body; a ProjectionError (or any TypeError from a malformed input) becomes a reason. */
export function project<T>(raw: unknown, body: (o: Obj) => T): Projected<T> {
  try {
    return { ok: true, value: body(record(raw, 'object')) };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
}

export function record(v: unknown, path: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ProjectionError(path, 'not an object');
  return v as Obj;
}

export function optRecord(v: unknown, path: string): Obj | undefined {
  return v === undefined || v === null ? undefined : record(v, path);
}

export function str(v: unknown, path: string): string {
  if (typeof v !== 'string' || v.length === 0) throw new ProjectionError(path, 'missing or not a string');
  return v;
}

export function optStr(v: unknown, path: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new ProjectionError(path, 'not a string');
  return v;
}

export function optBool(v: unknown, path: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new ProjectionError(path, 'not a boolean');
  return v;
}

export function optInt(v: unknown, path: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new ProjectionError(path, 'not an integer');
  return v;
}

/** An absent list is empty. */
export function optArray(v: unknown, path: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new ProjectionError(path, 'not an array');
  return v;
}

/**
 * `read` applied to each item of an optional list. An item's path (`path[i]`) is built only when
 * `read` throws for it ({@link underPath}): `read` passes '' as the path of the item itself.
 */
export function readItems<T>(v: unknown, path: string, read: (item: unknown, index: number) => T): T[] {
  const items = optArray(v, path);
  const out = new Array<T>(items.length);
  for (let i = 0; i < items.length; i++) {
    try {
      out[i] = read(items[i], i);
    } catch (err) {
      throw underPath(err, `${path}[${i}]`);
    }
  }
  return out;
}

/** True when `test` holds for an item of an optional list; items after that one are not read. Paths as {@link readItems}. */
export function someItem(v: unknown, path: string, test: (item: unknown) => boolean): boolean {
  const items = optArray(v, path);
  for (let i = 0; i < items.length; i++) {
    try {
      if (test(items[i])) return true;
    } catch (err) {
      throw underPath(err, `${path}[${i}]`);
    }
  }
  return false;
}

export function stringArray(v: unknown, path: string): string[] {
  return readItems(v, path, (x) => str(x, ''));
}

/** A timestamp as an RFC 3339 string, whether it arrives as a string or a Date. */
export function optTimestamp(v: unknown, path: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) throw new ProjectionError(path, 'invalid date');
    return v.toISOString();
  }
  if (typeof v !== 'string') throw new ProjectionError(path, 'not a timestamp');
  return v;
}

/** The scalar fields of a volume source (enough for CSI translation); nested objects are left out. */
export function scalarFields(o: Obj): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(o)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  }
  return out;
}

export interface Meta {
  name: string;
  namespace: string | undefined;
  uid: string | undefined;
  resourceVersion: string | undefined;
}

/** What {@link readMeta} reads, for the kinds' keep specs. */
export const META_KEEP = { name: true, namespace: true, uid: true, resourceVersion: true } as const satisfies KeepSpec;

/**
 * The identity part of metadata; `namespace` is required for namespaced kinds. Throws only when
 * the name or namespace cannot be read: they make the store key, and an item without a key is
 * one a relist cannot keep (it would read as gone and be deleted). A `uid` or `resourceVersion`
 * of the wrong type is returned in `bad` instead, so the caller can skip the item as malformed
 * and keep its last good version.
 */
export function readMeta(raw: unknown, namespaced: boolean): Meta & { bad?: string } {
  const m = record(record(raw, 'object').metadata, 'metadata');
  const meta: Meta & { bad?: string } = {
    name: str(m.name, 'metadata.name'),
    namespace: namespaced ? str(m.namespace, 'metadata.namespace') : undefined,
    uid: undefined,
    resourceVersion: undefined,
  };
  try {
    meta.uid = optStr(m.uid, 'metadata.uid');
    meta.resourceVersion = optStr(m.resourceVersion, 'metadata.resourceVersion');
  } catch (err) {
    meta.bad = err instanceof Error ? err.message : String(err);
  }
  return meta;
}

/** Store key: `namespace/name` or `name`. */
export function keyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Volume source types whose in-tree plugins CSI migration translates (rule C6). */
export const MIGRATABLE_SOURCES = ['awsElasticBlockStore', 'gcePersistentDisk', 'azureDisk', 'cinder', 'vsphereVolume', 'portworxVolume', 'azureFile'] as const;
export type MigratableSource = (typeof MIGRATABLE_SOURCES)[number];
/** Volume source types whose in-tree plugins stay attachable without CSI: their attach is a no-op (C7). */
export const ATTACH_ONLY_SOURCES = ['iscsi', 'fc'] as const;
export type AttachOnlySource = (typeof ATTACH_ONLY_SOURCES)[number];

/** An in-tree volume source kept for translation or a no-op attach: its type and scalar fields (and FC's lists of names). */
export interface InTreeSource {
  type: MigratableSource | AttachOnlySource;
  fields: Record<string, string | number | boolean | readonly string[]>;
}

/** FC names its volumes by these lists (upstream fc `GetVolumeName`). */
const FC_LISTS = ['targetWWNs', 'wwids'] as const;
const KEPT_SOURCES = [...MIGRATABLE_SOURCES, ...ATTACH_ONLY_SOURCES] as const;

/** The first migratable or attach-only source set on a volume/PV spec, if any. */
export function inTreeSourceOf(spec: Obj, path: string): InTreeSource | undefined {
  for (const type of KEPT_SOURCES) {
    const v = spec[type];
    if (v === undefined || v === null) continue;
    const at = path === '' ? type : `${path}.${type}`;
    const src = record(v, at);
    const fields: InTreeSource['fields'] = scalarFields(src);
    if (type === 'fc') for (const k of FC_LISTS) if (src[k] != null) fields[k] = stringArray(src[k], `${at}.${k}`);
    return { type, fields };
  }
  return undefined;
}
