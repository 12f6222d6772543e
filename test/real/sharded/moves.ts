/**
 * ReadWriteOnce pods moved to another node through the API, as a workload controller
 * reschedules them: the pod is deleted through the fleet's remote store (its kubelet unmounts,
 * then deletes it for good), and once the test's watcher shows it gone from the server it is
 * created again under the same name and claims on the target node. The volume must then be
 * detached from the old node before it is attached to the new one, whichever replicas hold the
 * two nodes' buckets.
 */
import { podClaimNames } from '../../../src/sim/actors/fields.js';
import { FLEET_NAMESPACE } from '../../../src/sim/actors/names.js';
import { createRunningPod } from '../../../src/sim/actors/provision.js';
import type { SimStore } from '../../../src/sim/store/sim-store.js';
import type { WatchedObjects } from '../real-api/api-watcher.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Move {
  pod: string;
  from: string;
  to: string;
}

/**
 * Picks up to `count` live pods whose every claim is ReadWriteOnce and for whose node `target`
 * names another node (undefined: not this pod), moves them all at once, and resolves with the
 * moves once every pod is created again. Fails when a pod is not gone from the server within
 * `timeoutMs`.
 */
export async function moveRwoPods(o: { store: SimStore; view: WatchedObjects; count: number; target: (node: string, i: number) => string | undefined; timeoutMs?: number }): Promise<Move[]> {
  const rwo = (claim: string) => ((o.view.get('persistentvolumeclaims', FLEET_NAMESPACE, claim)?.spec as { accessModes?: string[] } | undefined)?.accessModes ?? []).includes('ReadWriteOnce');
  const moves: Array<Move & { claims: string[] }> = [];
  for (const p of o.view.list('pods', FLEET_NAMESPACE)) {
    if (moves.length === o.count) break;
    if (p.metadata.deletionTimestamp) continue;
    const claims = podClaimNames(p);
    if (claims.length === 0 || !claims.every(rwo)) continue;
    const from = (p.spec as { nodeName?: string }).nodeName ?? '';
    const to = o.target(from, moves.length);
    if (to === undefined || to === from) continue;
    moves.push({ pod: p.metadata.name, from, to, claims });
  }
  await Promise.all(moves.map(async (m) => {
    o.store.delete('pods', FLEET_NAMESPACE, m.pod);
    const deadline = Date.now() + (o.timeoutMs ?? 60_000);
    while (o.view.get('pods', FLEET_NAMESPACE, m.pod) !== undefined) {
      if (Date.now() > deadline) throw new Error(`pod ${m.pod} not gone from ${m.from} within ${(o.timeoutMs ?? 60_000) / 1000} s`);
      await sleep(200);
    }
    createRunningPod(o.store, FLEET_NAMESPACE, m.pod, m.to, m.claims, new Date().toISOString());
  }));
  return moves.map(({ pod, from, to }) => ({ pod, from, to }));
}
