/**
 * The resources the simulator serves, as kube-apiserver describes them: group, version, kind,
 * scope, short names and whether a `status` subresource exists. The store uses this table for
 * scope and status semantics; the server uses it for routing and discovery.
 */
import type { ResourceName } from './sim-store.js';

export interface ResourceInfo {
  readonly name: ResourceName;
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** `v1` or `group/v1`. */
  readonly apiVersion: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** True when `/status` is a subresource: main-resource writes keep the stored status and vice versa. */
  readonly status: boolean;
}

function info(name: ResourceName, kind: string, group: string, namespaced: boolean, status: boolean, shortNames: string[] = [], categories: string[] = []): ResourceInfo {
  return {
    name,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    group,
    version: 'v1',
    apiVersion: group === '' ? 'v1' : `${group}/v1`,
    namespaced,
    shortNames,
    categories,
    status,
  };
}

export const RESOURCES: Readonly<Record<ResourceName, ResourceInfo>> = {
  namespaces: info('namespaces', 'Namespace', '', false, false, ['ns']),
  nodes: info('nodes', 'Node', '', false, true, ['no']),
  pods: info('pods', 'Pod', '', true, true, ['po'], ['all']),
  persistentvolumes: info('persistentvolumes', 'PersistentVolume', '', false, true, ['pv']),
  persistentvolumeclaims: info('persistentvolumeclaims', 'PersistentVolumeClaim', '', true, true, ['pvc']),
  events: info('events', 'Event', '', true, false, ['ev']),
  volumeattachments: info('volumeattachments', 'VolumeAttachment', 'storage.k8s.io', false, true),
  csidrivers: info('csidrivers', 'CSIDriver', 'storage.k8s.io', false, false),
  csinodes: info('csinodes', 'CSINode', 'storage.k8s.io', false, false),
  leases: info('leases', 'Lease', 'coordination.k8s.io', true, false),
};

export const RESOURCE_NAMES = Object.keys(RESOURCES) as ResourceName[];

/** The API groups served, in discovery order ('' is the legacy core group at /api). */
export const API_GROUPS: readonly string[] = ['', 'storage.k8s.io', 'coordination.k8s.io'];

/** Resources of one group/version, or undefined if the group/version is not served. */
export function resourcesOf(group: string, version: string): ResourceInfo[] | undefined {
  if (version !== 'v1' || !API_GROUPS.includes(group)) return undefined;
  return RESOURCE_NAMES.map((n) => RESOURCES[n]).filter((r) => r.group === group);
}

/** Looks a resource up by group and plural name. */
export function findResource(group: string, version: string, plural: string): ResourceInfo | undefined {
  const r = (RESOURCES as Record<string, ResourceInfo | undefined>)[plural];
  return r && r.group === group && r.version === version ? r : undefined;
}
