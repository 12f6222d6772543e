/**
 * The writes the node fault actors make: a Node's Ready condition (as the node lifecycle
 * controller writes it), a Node read-modify-write with failures reported, and the eviction of
 * the pods of a node that is gone or out of service (as the pod garbage collector and the
 * pods' workload controllers would do it).
 */
import type { KubeObject, SimStore } from '../store/sim-store.js';
import type { FleetIndex } from './fleet-index.js';
import { readyCondition } from './objects.js';
import type { Prng } from './prng.js';
import { createRunningPod } from './provision.js';

/** Reports a failed store write (`what` names it); the actor counts and logs it. */
export type WriteFailed = (err: unknown, what: string) => void;

/** Sets the Ready condition, keeping lastTransitionTime when the status does not change. */
export function setReady(o: KubeObject, status: 'True' | 'Unknown', at: string): void {
  const st = (o.status ?? {}) as Record<string, unknown>;
  const conditions = Array.isArray(st.conditions) ? (st.conditions as Array<Record<string, unknown>>) : [];
  const prev = conditions.find((c) => c.type === 'Ready');
  const next: Record<string, unknown> = readyCondition(status, at);
  if (prev?.status === status && typeof prev.lastTransitionTime === 'string') next.lastTransitionTime = prev.lastTransitionTime;
  st.conditions = [...conditions.filter((c) => c.type !== 'Ready'), next];
  o.status = st;
}

/** Changes Node `name` through `fn`; false when the node is gone or the write failed (reported). */
export function writeNode(store: SimStore, name: string, fn: (o: KubeObject) => void, failed: WriteFailed): boolean {
  try {
    return store.mutate('nodes', undefined, name, fn) !== undefined;
  } catch (err) {
    failed(err, `node ${name}`);
    return false;
  }
}

export interface EvictionDeps {
  store: SimStore;
  index: FleetIndex;
  prng: Prng;
}

/**
 * Force-deletes the pods bound to node `id` and recreates each live one (not being deleted)
 * with the same claims on another Ready node, if one is found. A pod whose delete or create
 * fails is reported and skipped. Returns how many pods were deleted and recreated.
 */
export function evictPods(d: EvictionDeps, id: number, at: string, failed: WriteFailed): { deleted: number; recreated: number } {
  const { index, store, prng } = d;
  const out = { deleted: 0, recreated: 0 };
  // Keys, not ids: the deletes and creates below release and reissue pod ids.
  for (const key of index.podsOn(id).map((p) => index.podKey(p))) {
    const pod = index.pod(key);
    if (!pod) continue;
    const { namespace, name, claims, deleting } = pod;
    try {
      store.delete('pods', namespace, name, { gracePeriodSeconds: 0 });
      out.deleted++;
      const target = deleting ? undefined : index.randomReadyNode(prng, id);
      if (target === undefined) continue;
      createRunningPod(store, namespace, name, index.nodeNames[target], claims, at);
      out.recreated++;
    } catch (err) {
      failed(err, `evict pod ${key}`);
    }
  }
  return out;
}
