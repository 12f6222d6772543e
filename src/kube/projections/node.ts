/**
 * Node projection: managed (B1), healthy (Ready), out-of-service taint (F), and the two status
 * lists the actual state reads (A2, D3).
 */
import { keepStrings } from './keep-strings.js';
import { optRecord, optStr, project, readItems, record, someItem, str, stringArray, type ResourceKind } from './read.js';

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
  volumesInUse: string[];
  /** The unique names (U) of `status.volumesAttached`. */
  volumesAttached: string[];
  /**
   * Their `devicePath`s, index for index, only when one is not empty (A2 keeps them and the
   * first status write puts them back, A6/K1); absent on CSI fleets, whose paths are all ''.
   */
  devicePaths?: string[];
}

export function projectNode(raw: unknown) {
  return project<NodeRecord>(raw, (o) => {
    const meta = record(o.metadata, 'metadata');
    const spec = optRecord(o.spec, 'spec') ?? {};
    const status = optRecord(o.status, 'status') ?? {};
    const annotations = optRecord(meta.annotations, 'metadata.annotations') ?? {};
    const ready = someItem(status.conditions, 'status.conditions', (c) => {
      const cond = record(c, '');
      return cond.type === 'Ready' && cond.status === 'True';
    });
    const outOfService = someItem(spec.taints, 'spec.taints', (t) => record(t, '').key === OUT_OF_SERVICE_TAINT);
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
      ready,
      outOfService,
      volumesInUse: stringArray(status.volumesInUse, 'status.volumesInUse'),
      volumesAttached,
    };
    if (devicePaths !== undefined) out.devicePaths = Array.from({ length: volumesAttached.length }, (_, i) => devicePaths?.[i] ?? '');
    return out;
  });
}

/**
 * A node update as the store keeps it (ResourceKind.keepFrom): node objects live as long as the
 * fleet and are written every few seconds (kubelet status, our volumesAttached patches), and
 * most of what the projection keeps is unchanged by any one write.
 */
export function keepNodeFrom(old: NodeRecord, fresh: NodeRecord): NodeRecord {
  const volumesInUse = keepStrings(old.volumesInUse, fresh.volumesInUse);
  const volumesAttached = keepStrings(old.volumesAttached, fresh.volumesAttached);
  if (fresh.name === old.name && fresh.uid === old.uid && fresh.managed === old.managed && fresh.ready === old.ready
    && fresh.outOfService === old.outOfService && volumesInUse === old.volumesInUse && volumesAttached === old.volumesAttached
    && fresh.devicePaths === undefined && old.devicePaths === undefined) {
    return old;
  }
  // `fresh` is this update's own projection, not yet seen by anyone: completed in place.
  if (fresh.name === old.name) fresh.name = old.name;
  if (fresh.uid === old.uid) fresh.uid = old.uid;
  fresh.volumesInUse = volumesInUse;
  fresh.volumesAttached = volumesAttached;
  return fresh;
}

export const NODE_KIND: ResourceKind<NodeRecord> = { resource: 'nodes', path: '/api/v1/nodes', namespaced: false, project: projectNode, keepFrom: keepNodeFrom };
