/**
 * The metadata of a PersistentVolume that the PV attach lock (sharding/volume-lock.ts) reads
 * from a live GET: its resourceVersion and its annotation and label maps, each undefined when
 * the object has none (a JSON Patch must then `add` the whole map, not a key of it).
 */
import type { Projected } from './projections/read.js';

export interface PersistentVolumeMeta {
  name: string;
  uid: string;
  resourceVersion: string;
  annotations: Readonly<Record<string, string>> | undefined;
  labels: Readonly<Record<string, string>> | undefined;
}

/** From a GET answer: raw JSON, or the generated client's object (same field names). */
export function persistentVolumeMeta(raw: unknown): Projected<PersistentVolumeMeta> {
  const meta = (raw as { metadata?: unknown } | null)?.metadata as Record<string, unknown> | undefined;
  const name = meta?.name;
  const resourceVersion = meta?.resourceVersion;
  if (typeof name !== 'string' || typeof resourceVersion !== 'string') return { ok: false, reason: 'no metadata.name or metadata.resourceVersion' };
  const uid = typeof meta?.uid === 'string' ? meta.uid : '';
  return { ok: true, value: { name, uid, resourceVersion, annotations: stringMap(meta?.annotations), labels: stringMap(meta?.labels) } };
}

/** A map of strings; a value that is not a string is left out (the API server never sends one). */
function stringMap(v: unknown): Record<string, string> | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}
