/** Shared helpers of the actor tests: a store to run on and condition waits (no fixed sleeps). */
import type { KubeObject, SimStore } from '../../src/sim/store/sim-store.js';
import { createSimStore } from '../../src/sim/store/index.js';

/** The store the actor tests run on: the simulator's real in-memory store. */
export function testStore(): SimStore {
  return createSimStore();
}

/** Polls `cond` until it returns a truthy value; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, cond: () => T | undefined | false, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = cond();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

type Rec = Record<string, unknown>;
export const statusOf = (o: KubeObject | undefined): Rec => ((o?.status ?? {}) as Rec);
export const specOf = (o: KubeObject | undefined): Rec => ((o?.spec ?? {}) as Rec);

export function volumesInUse(store: SimStore, node: string): string[] {
  return (statusOf(store.get('nodes', undefined, node)).volumesInUse as string[] | undefined) ?? [];
}

/** Writes `status.volumesAttached` of a node as the attach/detach controller does. */
export function setVolumesAttached(store: SimStore, node: string, names: string[]): void {
  store.mutate('nodes', undefined, node, (o) => {
    o.status = { ...statusOf(o), volumesAttached: names.map((name) => ({ name, devicePath: '' })) };
  });
}

/** Sets the Ready condition of a node. */
export function setNodeReady(store: SimStore, node: string, status: 'True' | 'False'): void {
  store.mutate('nodes', undefined, node, (o) => {
    const st = statusOf(o);
    const conds = ((st.conditions as Rec[] | undefined) ?? []).filter((c) => c.type !== 'Ready');
    o.status = { ...st, conditions: [...conds, { type: 'Ready', status }] };
  });
}

/** The unique volume name (`kubernetes.io/csi/<driver>^<handle>`) of a pod's first claim. */
export function podVolumeName(store: SimStore, namespace: string, pod: string): string {
  const p = store.get('pods', namespace, pod);
  const vols = specOf(p).volumes as Array<{ persistentVolumeClaim?: { claimName: string } }>;
  const claim = vols[0].persistentVolumeClaim?.claimName ?? '';
  const pvName = specOf(store.get('persistentvolumeclaims', namespace, claim)).volumeName as string;
  const csi = specOf(store.get('persistentvolumes', undefined, pvName)).csi as { driver: string; volumeHandle: string };
  return `kubernetes.io/csi/${csi.driver}^${csi.volumeHandle}`;
}
