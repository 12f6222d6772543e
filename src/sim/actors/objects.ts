/**
 * Builders of the Kubernetes objects the generator and the actors create. Objects are kept
 * small (the store holds a million of each) but carry every field the attach/detach
 * controller reads: node annotations and Ready condition, PV CSI source, access modes and
 * claimRef, PVC binding, pod nodeName/volumes and container states.
 */
import type { KubeObject } from '../store/sim-store.js';
import { CONTROLLER_MANAGED_ANNOTATION, FLEET_LABEL } from './names.js';

const STORAGE_CLASS = 'sim';
const SIZE = '1Gi';
const IMAGE = 'registry.k8s.io/pause:3.10';

export function namespaceObject(name: string): KubeObject {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } };
}

/** A CSIDriver that requires attach, so the controller creates VolumeAttachments for it. */
export function csiDriverObject(driver: string): KubeObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIDriver',
    metadata: { name: driver, labels: { [FLEET_LABEL]: 'true' } },
    spec: { attachRequired: true, podInfoOnMount: false, volumeLifecycleModes: ['Persistent'] },
  };
}

/** Ready=True condition (or NotReady with status `False`/`Unknown`) as the node lifecycle controller writes it. */
export function readyCondition(status: 'True' | 'False' | 'Unknown', now: string): Record<string, string> {
  return status === 'True'
    ? { type: 'Ready', status, reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now }
    : { type: 'Ready', status, reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastHeartbeatTime: now, lastTransitionTime: now };
}

export function nodeObject(name: string, now: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', [FLEET_LABEL]: 'true' },
      annotations: { [CONTROLLER_MANAGED_ANNOTATION]: 'true' },
    },
    spec: {},
    status: { conditions: [readyCondition('True', now)], volumesAttached: [], volumesInUse: [] },
  };
}

const accessModes = (rwx: boolean) => [rwx ? 'ReadWriteMany' : 'ReadWriteOnce'];

export function pvcObject(namespace: string, name: string, pvName: string, rwx: boolean): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace, labels: { [FLEET_LABEL]: 'true' } },
    spec: { accessModes: accessModes(rwx), resources: { requests: { storage: SIZE } }, storageClassName: STORAGE_CLASS, volumeMode: 'Filesystem', volumeName: pvName },
    status: { phase: 'Bound', accessModes: accessModes(rwx), capacity: { storage: SIZE } },
  };
}

export interface ClaimRef {
  namespace: string;
  name: string;
  uid: string;
}

export function pvObject(name: string, driver: string, handle: string, rwx: boolean, claim: ClaimRef): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, labels: { [FLEET_LABEL]: 'true' } },
    spec: {
      capacity: { storage: SIZE },
      accessModes: accessModes(rwx),
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: STORAGE_CLASS,
      volumeMode: 'Filesystem',
      csi: { driver, volumeHandle: handle },
      claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: claim.namespace, name: claim.name, uid: claim.uid },
    },
    status: { phase: 'Bound' },
  };
}

/** A running pod on `node` using the claims; a running container keeps it "not terminated" while deleting. */
export function podObject(namespace: string, name: string, node: string, claims: readonly string[], now: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app: 'fleet', [FLEET_LABEL]: 'true' } },
    spec: {
      nodeName: node,
      containers: [{ name: 'app', image: IMAGE }],
      volumes: claims.map((claimName, i) => ({ name: i === 0 ? 'data' : `data-${i}`, persistentVolumeClaim: { claimName } })),
    },
    status: {
      phase: 'Running',
      containerStatuses: [{ name: 'app', image: IMAGE, imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: now } } }],
    },
  };
}

/** Container statuses of a pod whose containers the kubelet has stopped. */
export function terminatedContainerStatuses(now: string): unknown[] {
  return [{ name: 'app', image: IMAGE, imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed', finishedAt: now } } }];
}

/** A node heartbeat Lease, as the kubelet keeps one in `kube-node-lease`. */
export function leaseObject(namespace: string, node: string, renewTime: string, durationSeconds: number): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: node, namespace },
    spec: { holderIdentity: node, leaseDurationSeconds: durationSeconds, renewTime },
  };
}

/** RFC 3339 with microseconds, the `MicroTime` format of Lease.spec.renewTime. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
