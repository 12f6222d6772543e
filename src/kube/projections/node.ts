/**
 * Node projection: managed (B1), healthy (Ready), out-of-service taint (F), and the two status
 * lists the actual state reads (A2, D3).
 *
 * Lenient, unlike the other kinds: a node skipped as malformed would read as absent, and an
 * absent node is unhealthy, which (once its max wait for unmount has passed) allows a forced
 * detach of volumes still mounted on it (F6), on a node that may be running its pods. So a node
 * whose name can be read always projects; each part that cannot be read takes the value under
 * which the controller detaches nothing early, and is named in `unreadable`:
 * annotations → not managed (pods on a new node are left alone; B2 never unmanages a known one),
 * conditions → Ready, taints → not out of service, volumesInUse → not observed (every volume on
 * the node counts as mounted, D3), a volumesAttached entry → left out (A2 then learns the
 * attachment from its VolumeAttachment, as Uncertain), a devicePath → ''.
 */
import { keepStrings } from './keep-strings.js';
import { NODE_CODEC } from './node-codec.js';
import { META_KEEP, optRecord, optStr, project, readItems, record, someItem, str, stringArray, type Obj, type Projected, type ResourceKind } from './read.js';

export const MANAGED_ANNOTATION = 'volumes.kubernetes.io/controller-managed-attach-detach';
export const OUT_OF_SERVICE_TAINT = 'node.kubernetes.io/out-of-service';

/** One `status.volumesAttached` entry, as the controller writes it (K1). */
export interface AttachedVolume {
  /** Unique volume name (U). */
  name: string;
  devicePath: string;
}

export interface NodeRecord {
  name: string;
  uid: string;
  /** The managed annotation key is present (value ignored). */
  managed: boolean;
  /** Condition `Ready` has status `True`; absent, False or Unknown ⇒ false. */
  ready: boolean;
  /** A taint with key `node.kubernetes.io/out-of-service` exists (any value, any effect). */
  outOfService: boolean;
  /** null: `status.volumesInUse` could not be read (D3: every pair on the node counts as mounted). */
  volumesInUse: string[] | null;
  /** The unique names (U) of `status.volumesAttached`. */
  volumesAttached: string[];
  /**
   * Their `devicePath`s, index for index, only when one is not empty (A2 keeps them and the
   * first status write puts them back, A6/K1); absent on CSI fleets, whose paths are all ''.
   */
  devicePaths?: string[];
  /** The parts that could not be read and took their safe value (see the header), with why. */
  unreadable?: string[];
}

export function projectNode(raw: unknown): Projected<NodeRecord> {
  // The strict reading first (per Node watch event: ~2.5× cheaper than the lenient one); the
  // lenient one only for an object it rejects.
  const strict = project<NodeRecord>(raw, readStrict);
  return strict.ok ? strict : project<NodeRecord>(raw, readLenient);
}

/** Every part readable, or a throw. */
function readStrict(o: Obj): NodeRecord {
  const meta = record(o.metadata, 'metadata');
  const spec = optRecord(o.spec, 'spec') ?? {};
  const status = optRecord(o.status, 'status') ?? {};
  const annotations = optRecord(meta.annotations, 'metadata.annotations') ?? {};
  let devicePaths: string[] | undefined;
  const volumesAttached = readItems(status.volumesAttached, 'status.volumesAttached', (v, i) => {
    const av = record(v, '');
    const path = optStr(av.devicePath, 'devicePath') ?? '';
    if (path !== '') (devicePaths ??= [])[i] = path;
    return str(av.name, 'name');
  });
  const out: NodeRecord = {
    name: str(meta.name, 'metadata.name'),
    uid: optStr(meta.uid, 'metadata.uid') ?? '',
    managed: Object.hasOwn(annotations, MANAGED_ANNOTATION),
    ready: someItem(status.conditions, 'status.conditions', isReadyTrue),
    outOfService: someItem(spec.taints, 'spec.taints', isOutOfServiceTaint),
    volumesInUse: stringArray(status.volumesInUse, 'status.volumesInUse'),
    volumesAttached,
  };
  if (devicePaths !== undefined) out.devicePaths = pathsOf(devicePaths, volumesAttached.length);
  return out;
}

/** The name, and each other part at its safe value when it cannot be read (see the header). */
function readLenient(o: Obj): NodeRecord {
  const meta = record(o.metadata, 'metadata');
  const name = str(meta.name, 'metadata.name');
  let unreadable: string[] | undefined;
  const safe = <T>(read: () => T, fallback: T): T => {
    try {
      return read();
    } catch (err) {
      (unreadable ??= []).push(err instanceof Error ? err.message : String(err));
      return fallback;
    }
  };
  const spec = safe(() => optRecord(o.spec, 'spec') ?? {}, {});
  const status = safe(() => optRecord(o.status, 'status') ?? {}, undefined);
  const annotations = safe(() => optRecord(meta.annotations, 'metadata.annotations') ?? {}, {});
  const ready = status === undefined || safe(() => someItem(status.conditions, 'status.conditions', isReadyTrue), true);
  const outOfService = safe(() => someItem(spec.taints, 'spec.taints', isOutOfServiceTaint), false);
  const volumesAttached: string[] = [];
  let devicePaths: string[] | undefined;
  const attached = status === undefined ? [] : safe(() => readItems(status.volumesAttached, 'status.volumesAttached', (v) => v), []);
  for (let i = 0; i < attached.length; i++) {
    const at = `status.volumesAttached[${i}]`;
    const entry = safe(() => {
      const av = record(attached[i], at);
      return { name: str(av.name, `${at}.name`), path: safe(() => optStr(av.devicePath, `${at}.devicePath`) ?? '', '') };
    }, undefined);
    if (entry === undefined) continue;
    if (entry.path !== '') (devicePaths ??= [])[volumesAttached.length] = entry.path;
    volumesAttached.push(entry.name);
  }
  const out: NodeRecord = {
    name,
    uid: safe(() => optStr(meta.uid, 'metadata.uid') ?? '', ''),
    managed: Object.hasOwn(annotations, MANAGED_ANNOTATION),
    ready,
    outOfService,
    volumesInUse: status === undefined ? null : safe(() => stringArray(status.volumesInUse, 'status.volumesInUse'), null),
    volumesAttached,
  };
  if (devicePaths !== undefined) out.devicePaths = pathsOf(devicePaths, volumesAttached.length);
  if (unreadable !== undefined) out.unreadable = unreadable;
  return out;
}

const isReadyTrue = (c: unknown): boolean => {
  const cond = record(c, '');
  return cond.type === 'Ready' && cond.status === 'True';
};
const isOutOfServiceTaint = (t: unknown): boolean => record(t, '').key === OUT_OF_SERVICE_TAINT;
/** The sparse non-empty paths as one per attached volume ('' where none). */
const pathsOf = (sparse: readonly string[], n: number): string[] => Array.from({ length: n }, (_, i) => sparse[i] ?? '');

/**
 * A node update as the store keeps it (ResourceKind.keepFrom): node objects live as long as the
 * fleet and are written every few seconds (kubelet status, our volumesAttached patches), and
 * most of what the projection keeps is unchanged by any one write.
 */
export function keepNodeFrom(old: NodeRecord, fresh: NodeRecord): NodeRecord {
  const volumesInUse = old.volumesInUse === null || fresh.volumesInUse === null ? fresh.volumesInUse : keepStrings(old.volumesInUse, fresh.volumesInUse);
  const volumesAttached = keepStrings(old.volumesAttached, fresh.volumesAttached);
  if (fresh.name === old.name && fresh.uid === old.uid && fresh.managed === old.managed && fresh.ready === old.ready
    && fresh.outOfService === old.outOfService && volumesInUse === old.volumesInUse && volumesAttached === old.volumesAttached
    && fresh.devicePaths === undefined && old.devicePaths === undefined && fresh.unreadable === undefined && old.unreadable === undefined) {
    return old;
  }
  // `fresh` is this update's own projection, not yet seen by anyone: completed in place.
  if (fresh.name === old.name) fresh.name = old.name;
  if (fresh.uid === old.uid) fresh.uid = old.uid;
  fresh.volumesInUse = volumesInUse;
  fresh.volumesAttached = volumesAttached;
  return fresh;
}

export const NODE_KIND: ResourceKind<NodeRecord> = {
  resource: 'nodes', path: '/api/v1/nodes', namespaced: false, project: projectNode, keepFrom: keepNodeFrom, codec: NODE_CODEC, unreadableOf: (n) => n.unreadable,
  keep: {
    metadata: { ...META_KEEP, annotations: { [MANAGED_ANNOTATION]: true } },
    spec: { taints: [{ key: true }] },
    status: { conditions: [{ type: true, status: true }], volumesAttached: true, volumesInUse: true },
  },
};
