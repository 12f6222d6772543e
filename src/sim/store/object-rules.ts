/**
 * The validation and metadata rules kube-apiserver applies to every write, as far as the
 * simulator needs them: names, kind/apiVersion, the metadata fields the server owns, and the
 * pod graceful-deletion period.
 */
import type { ResourceInfo } from './resources.js';
import { StoreError, type KubeObject, type ObjectMeta } from './sim-store.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function invalid(info: ResourceInfo, name: string, why: string): StoreError {
  return new StoreError('Invalid', 422, `${info.kind} "${name}" is invalid: ${why}`, kindDetails(info, name));
}

/**
 * Status details as kube-apiserver writes them: errors about a stored object (NotFound,
 * AlreadyExists, a stale resourceVersion) name its resource; validation and precondition
 * failures name its kind. Clients read `details.kind` to tell which object an error is about.
 */
export function resourceDetails(info: ResourceInfo, name: string): { name: string; group?: string; kind: string } {
  return info.group === '' ? { name, kind: info.name } : { name, group: info.group, kind: info.name };
}

export function kindDetails(info: ResourceInfo, name: string): { name: string; group?: string; kind: string } {
  return info.group === '' ? { name, kind: info.kind } : { name, group: info.group, kind: info.kind };
}

/** Checks that `obj` is an object of `info`'s kind with a valid name; throws Invalid otherwise. */
export function validateObject(info: ResourceInfo, obj: unknown): asserts obj is KubeObject {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw invalid(info, '', 'body must be a JSON object');
  const o = obj as Record<string, unknown>;
  const meta = o.metadata;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) throw invalid(info, '', 'metadata: Required value');
  const name = (meta as Record<string, unknown>).name;
  const label = typeof name === 'string' ? name : '';
  if (o.kind !== undefined && o.kind !== info.kind) throw invalid(info, label, `kind: Invalid value: "${String(o.kind)}": must be ${info.kind}`);
  if (o.apiVersion !== undefined && o.apiVersion !== info.apiVersion) {
    throw invalid(info, label, `apiVersion: Invalid value: "${String(o.apiVersion)}": must be ${info.apiVersion}`);
  }
  if (typeof name !== 'string' || name === '') throw invalid(info, '', 'metadata.name: Required value: name or generateName is required');
  validateName(info, name);
  const m = meta as Record<string, unknown>;
  for (const f of ['labels', 'annotations'] as const) {
    const v = m[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string')) {
      throw invalid(info, name, `metadata.${f}: Invalid value: must be a map of strings`);
    }
  }
  const fin = m.finalizers;
  if (fin !== undefined && fin !== null && (!Array.isArray(fin) || fin.some((x) => typeof x !== 'string'))) {
    throw invalid(info, name, 'metadata.finalizers: Invalid value: must be a list of strings');
  }
}

export function validateName(info: ResourceInfo, name: string): void {
  const ok = info.name === 'namespaces' ? name.length <= 63 && DNS_LABEL.test(name) : name.length <= 253 && DNS_SUBDOMAIN.test(name);
  if (!ok) {
    throw invalid(info, name, `metadata.name: Invalid value: "${name}": a lowercase RFC 1123 ${info.name === 'namespaces' ? 'label' : 'subdomain'} must consist of lower case alphanumeric characters, '-' or '.'`);
  }
}

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `generateName` plus five random characters, as kube-apiserver's name generator does. */
export function generateName(prefix: string, random: () => number): string {
  let s = prefix.length > 58 ? prefix.slice(0, 58) : prefix;
  for (let i = 0; i < 5; i++) s += GENERATE_ALPHABET[Math.floor(random() * GENERATE_ALPHABET.length)];
  return s;
}

/** RFC 3339 with seconds precision, as Kubernetes writes timestamps. */
export function rfc3339(ms: number): string {
  const sec = Math.floor(ms / 1000);
  if (sec !== lastSecond) {
    lastSecond = sec;
    lastStamp = new Date(sec * 1000).toISOString().replace('.000Z', 'Z');
  }
  return lastStamp;
}
let lastSecond = NaN;
let lastStamp = '';

/** Metadata fields the server owns: an update keeps the stored values. */
const SERVER_OWNED_META = ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const;

/** Copies server-owned metadata from `stored` into `next` (removing fields `stored` lacks). */
export function keepServerOwnedMeta(next: ObjectMeta, stored: ObjectMeta): void {
  const out = next as Record<string, unknown>;
  for (const f of SERVER_OWNED_META) {
    if (stored[f] === undefined) delete out[f];
    else out[f] = stored[f];
  }
  next.name = stored.name;
  if (stored.namespace === undefined) delete next.namespace;
  else next.namespace = stored.namespace;
}

/**
 * The grace period a pod deletion gets, as kube-apiserver's pod strategy computes it: the
 * requested period, else spec.terminationGracePeriodSeconds (default 30); 0 for a pod that is
 * not bound to a node or has terminated.
 */
export function podGracePeriod(pod: KubeObject, requested: number | undefined): number {
  const spec = (pod.spec ?? {}) as { nodeName?: unknown; terminationGracePeriodSeconds?: unknown };
  const status = (pod.status ?? {}) as { phase?: unknown };
  if (typeof spec.nodeName !== 'string' || spec.nodeName === '') return 0;
  if (status.phase === 'Succeeded' || status.phase === 'Failed') return 0;
  if (requested !== undefined) return Math.max(0, Math.floor(requested));
  const t = spec.terminationGracePeriodSeconds;
  return typeof t === 'number' && t >= 0 ? Math.floor(t) : 30;
}

export function hasFinalizers(meta: ObjectMeta): boolean {
  return Array.isArray(meta.finalizers) && meta.finalizers.length > 0;
}

export function podNodeName(obj: KubeObject): string | undefined {
  const n = (obj.spec as { nodeName?: unknown } | undefined)?.nodeName;
  return typeof n === 'string' && n !== '' ? n : undefined;
}

/** The status kube-apiserver gives a Node created without one (its defaulted zero values). */
const NODE_STATUS_DEFAULT = JSON.stringify({
  daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
  nodeInfo: { architecture: '', bootID: '', containerRuntimeVersion: '', kernelVersion: '', kubeProxyVersion: '', kubeletVersion: '', machineID: '', operatingSystem: '', osImage: '', systemUUID: '' },
});

/**
 * Fields kube-apiserver fills in at create and clients read: a Node's status object (so that a
 * JSON patch can `add` under /status) and a VolumeAttachment's `status.attached: false`. Only
 * where the object has no status: the simulator keeps a status given at create (kube-apiserver
 * drops a VolumeAttachment's), which fixtures use to start from attached volumes.
 */
export function applyCreateDefaults(info: ResourceInfo, obj: KubeObject): void {
  if (obj.status !== undefined) return;
  if (info.name === 'nodes') obj.status = JSON.parse(NODE_STATUS_DEFAULT);
  else if (info.name === 'volumeattachments') obj.status = { attached: false };
}

/**
 * Lists kube-apiserver never stores empty because their Go fields are `omitempty`: a Node's
 * `status.volumesAttached` and `status.volumesInUse`. Written as `[]`, they are absent when read
 * back, so a JSON patch `test` of the absent list (null) holds on the simulator as it does there.
 */
export function dropOmittedEmpty(info: ResourceInfo, obj: KubeObject): void {
  if (info.name !== 'nodes') return;
  const status = obj.status as Record<string, unknown> | undefined;
  if (status === undefined || status === null || typeof status !== 'object') return;
  for (const f of ['volumesAttached', 'volumesInUse']) {
    const v = status[f];
    if (Array.isArray(v) && v.length === 0) delete status[f];
  }
}

/** A VolumeAttachment's spec is immutable (its validation strategy); throws Invalid on a change. */
export function checkImmutable(info: ResourceInfo, stored: KubeObject, next: KubeObject): void {
  if (info.name !== 'volumeattachments') return;
  if (JSON.stringify(stored.spec) !== JSON.stringify(next.spec)) {
    throw invalid(info, next.metadata.name, 'spec: Invalid value: field is immutable');
  }
}
