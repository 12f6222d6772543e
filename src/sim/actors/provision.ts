/**
 * Creating bound objects in the store: a claim with its volume, and pods. Shared by the
 * generator and churn. Like kube-apiserver, a store may reset `.status` on create; then the
 * intended status is written back through the status subresource.
 */
import type { KubeObject, ResourceName, SimStore } from '../store/sim-store.js';
import { podObject, pvcObject, pvObject } from './objects.js';

/** Creates `obj`, then restores its status if the store dropped it. Returns the committed object. */
export function createWithStatus(store: SimStore, resource: ResourceName, obj: KubeObject): KubeObject {
  const created = store.create(resource, obj);
  if (obj.status !== undefined && !statusKept(created.status, obj.status)) {
    return store.update(resource, { ...created, status: obj.status }, { subresource: 'status' });
  }
  return created;
}

// Phase is what every consumer reads; comparing it avoids a deep comparison per object.
function statusKept(got: unknown, want: unknown): boolean {
  const phase = (s: unknown) => (s && typeof s === 'object' ? (s as { phase?: unknown }).phase : undefined);
  return got !== undefined && phase(got) === phase(want);
}

export interface ClaimSpec {
  namespace: string;
  pvcName: string;
  pvName: string;
  driver: string;
  handle: string;
  rwx: boolean;
}

/** Creates a PVC bound to a new CSI PV (PVC first: the PV's claimRef carries the PVC's uid). */
export function provisionClaim(store: SimStore, c: ClaimSpec): void {
  const pvc = createWithStatus(store, 'persistentvolumeclaims', pvcObject(c.namespace, c.pvcName, c.pvName, c.rwx));
  const uid = pvc.metadata.uid ?? '';
  createWithStatus(store, 'persistentvolumes', pvObject(c.pvName, c.driver, c.handle, c.rwx, { namespace: c.namespace, name: c.pvcName, uid }));
}

/** Creates a running pod on `node` that uses the claims. */
export function createRunningPod(store: SimStore, namespace: string, name: string, node: string, claims: readonly string[], now: string): KubeObject {
  return createWithStatus(store, 'pods', podObject(namespace, name, node, claims, now));
}
