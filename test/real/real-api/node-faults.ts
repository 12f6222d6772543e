/**
 * Node failures written through the fleet's remote store (admin kubeconfig), as the node
 * lifecycle controller and an administrator would write them on a real cluster:
 *
 * - Ready=False on a node (the simulated kubelets of NotReady nodes stop acting: no unmounts, no
 *   pod deletions finished), and Ready=True again on recovery;
 * - pods force-deleted (gracePeriodSeconds 0) off a failed node, as `kubectl delete --force` or
 *   the pod GC does: their volumes stay in the node's volumesInUse, so the controller may detach
 *   them only after --max-wait-for-unmount (or at once with the out-of-service taint);
 * - the `node.kubernetes.io/out-of-service` NoExecute taint, and its removal;
 * - a force-deleted pod recreated on another Ready node with the same claims, as its workload
 *   controller would (a ReadWriteOnce volume must then move: detach first, attach after).
 */
import { OUT_OF_SERVICE_TAINT, FLEET_NAMESPACE } from '../../../src/sim/actors/names.js';
import { readyCondition } from '../../../src/sim/actors/objects.js';
import { createRunningPod } from '../../../src/sim/actors/provision.js';
import { nodeIsReady, podClaimNames, podNodeName } from '../../../src/sim/actors/fields.js';
import type { KubeObject, SimStore } from '../../../src/sim/store/sim-store.js';

type Rec = Record<string, unknown>;

/** Sets node `name`'s Ready condition. False when the node is gone. */
export function setReady(store: SimStore, name: string, ready: boolean): boolean {
  const at = new Date().toISOString();
  return store.mutate('nodes', undefined, name, (o) => {
    const st = (o.status ?? {}) as Rec;
    const conditions = Array.isArray(st.conditions) ? (st.conditions as Rec[]) : [];
    st.conditions = [...conditions.filter((c) => c.type !== 'Ready'), readyCondition(ready ? 'True' : 'False', at)];
    o.status = st;
  }) !== undefined;
}

/** Puts the out-of-service taint on node `name`, or takes it off. */
export function setOutOfService(store: SimStore, name: string, on: boolean): boolean {
  const at = new Date().toISOString();
  return store.mutate('nodes', undefined, name, (o) => {
    const spec = (o.spec ?? {}) as Rec;
    const taints = (Array.isArray(spec.taints) ? (spec.taints as Rec[]) : []).filter((t) => t.key !== OUT_OF_SERVICE_TAINT);
    if (on) taints.push({ key: OUT_OF_SERVICE_TAINT, value: 'nodeshutdown', effect: 'NoExecute', timeAdded: at });
    if (taints.length > 0) spec.taints = taints;
    else delete spec.taints;
    o.spec = spec;
  }) !== undefined;
}

/** Live fleet pods (not being deleted) by node. */
export function livePodsByNode(store: SimStore): Map<string, KubeObject[]> {
  const out = new Map<string, KubeObject[]>();
  for (const p of store.list('pods', FLEET_NAMESPACE)) {
    const node = podNodeName(p);
    if (!node || p.metadata.deletionTimestamp) continue;
    let list = out.get(node);
    if (!list) out.set(node, (list = []));
    list.push(p);
  }
  return out;
}

/** Ready node names, sorted. */
export function readyNodes(store: SimStore): string[] {
  return store.list('nodes').filter(nodeIsReady).map((n) => n.metadata.name).sort();
}

/** Force-deletes `pod`; with `moveTo`, creates it again there with the same claims. */
export function forceDeletePod(store: SimStore, pod: KubeObject, moveTo?: string): void {
  const { namespace, name } = pod.metadata;
  store.delete('pods', namespace, name, { gracePeriodSeconds: 0 });
  if (moveTo) createRunningPod(store, namespace ?? FLEET_NAMESPACE, name, moveTo, podClaimNames(pod), new Date().toISOString());
}
