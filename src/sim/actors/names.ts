/**
 * Names, keys and well-known strings of the simulated fleet. Generated names are pure
 * functions of indexes (and seeded draws made by the caller), so a seed replays a fleet.
 */
import { hash } from 'node:crypto';

/** Namespace holding the generated pods and claims. */
export const FLEET_NAMESPACE = 'fleet';
/** Namespace of the per-node heartbeat Leases, as in Kubernetes. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** Node annotation that makes a node managed by the attach/detach controller (value ignored). */
export const CONTROLLER_MANAGED_ANNOTATION = 'volumes.kubernetes.io/controller-managed-attach-detach';
/** Taint an administrator sets on a node known to be down, enabling force detach. */
export const OUT_OF_SERVICE_TAINT = 'node.kubernetes.io/out-of-service';
/** Label on every object the generator and churn create. */
export const FLEET_LABEL = 'fleet-attach.io/sim';

const pad = (i: number, width: number): string => String(i).padStart(width, '0');

/** `node-000001`; at least six digits. */
export function nodeName(i: number): string {
  return `node-${pad(i, 6)}`;
}

/** Pod `slot` of node `i`: `pod-000001-03`. Its claim and volume share the suffix. */
export function podName(node: number, slot: number): string {
  return `pod-${pad(node, 6)}-${pad(slot, 2)}`;
}

export function pvcName(node: number, slot: number): string {
  return `data-${pad(node, 6)}-${pad(slot, 2)}`;
}

export function pvName(node: number, slot: number): string {
  return `pv-${pad(node, 6)}-${pad(slot, 2)}`;
}

/** The CSI volume handle: a seeded random part keeps handles of different seeds apart. */
export function volumeHandle(random8hex: string, node: number, slot: number): string {
  return `vol-${random8hex}-${pad(node, 6)}-${pad(slot, 2)}`;
}

/** `kubernetes.io/csi/<driver>^<volumeHandle>`, the attach/detach controller's unique volume name. */
export function uniqueVolumeName(driver: string, handle: string): string {
  return `kubernetes.io/csi/${driver}^${handle}`;
}

/** Splits a CSI unique volume name; undefined for anything else. */
export function parseUniqueVolumeName(u: string): { driver: string; handle: string } | undefined {
  const prefix = 'kubernetes.io/csi/';
  if (!u.startsWith(prefix)) return undefined;
  const sep = u.indexOf('^', prefix.length);
  if (sep < 0) return undefined;
  return { driver: u.slice(prefix.length, sep), handle: u.slice(sep + 1) };
}

/** external-attacher's finalizer: `external-attacher/<driver>` with `/` replaced by `-`. */
export function attacherFinalizer(driver: string): string {
  return `external-attacher/${driver.replaceAll('/', '-')}`;
}

/** The VolumeAttachment name kubelet/ADC use: `csi-` + sha256(handle + driver + node) in hex. */
export function volumeAttachmentName(handle: string, driver: string, node: string): string {
  return `csi-${hash('sha256', handle + driver + node, 'hex')}`;
}

/** `namespace/name` key of a namespaced object. */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}
