/**
 * REST paths of the resources the remote store mirrors and writes, and what it mirrors by
 * default: every resource a fleet actor reads or writes (node Leases in `kube-node-lease` only).
 */
import { pathSegment } from '../../kube/raw-write.js';
import { NODE_LEASE_NAMESPACE } from '../actors/names.js';
import { RESOURCES } from '../store/resources.js';
import type { ResourceName } from '../store/sim-store.js';

/** One mirrored resource: all of it, or one namespace of it, or the objects a label selector picks. */
export interface MirrorSpec {
  resource: ResourceName;
  namespace?: string;
  labelSelector?: string;
}

export const DEFAULT_MIRROR: readonly MirrorSpec[] = [
  { resource: 'namespaces' },
  { resource: 'csidrivers' },
  { resource: 'nodes' },
  { resource: 'persistentvolumeclaims' },
  { resource: 'persistentvolumes' },
  { resource: 'pods' },
  { resource: 'volumeattachments' },
  { resource: 'leases', namespace: NODE_LEASE_NAMESPACE },
];

/** `mirror` with the nodes limited to those `nodeSelector` picks (all when empty). */
export function withNodeSelector(mirror: readonly MirrorSpec[], nodeSelector: string): MirrorSpec[] {
  return mirror.map((m) => (m.resource === 'nodes' && nodeSelector !== '' ? { ...m, labelSelector: nodeSelector } : m));
}

/** `/api/v1` or `/apis/<group>/v1`, then the namespace when there is one, then the plural. */
export function collectionPath(resource: ResourceName, namespace: string | undefined): string {
  const info = RESOURCES[resource];
  const base = info.group === '' ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`;
  const ns = info.namespaced && namespace !== undefined ? `/namespaces/${pathSegment(namespace)}` : '';
  return `${base}${ns}/${info.name}`;
}

export function objectPath(resource: ResourceName, namespace: string | undefined, name: string, subresource?: 'status'): string {
  return `${collectionPath(resource, namespace)}/${pathSegment(name)}${subresource ? `/${subresource}` : ''}`;
}

/** The mirror's key of an object: `namespace/name`, or `name` for a cluster-scoped resource. */
export function mirrorKey(resource: ResourceName, namespace: string | undefined, name: string): string {
  return RESOURCES[resource].namespaced ? `${namespace ?? ''}/${name}` : name;
}
