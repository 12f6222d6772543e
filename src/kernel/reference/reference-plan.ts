/**
 * The reference plan: upstream's reconcile() (reconciler.go) over a ReferenceWorld, with the
 * executor calls replaced by recorded actions, so it decides from the state at plan start
 * exactly as the kernel does. Rule numbers refer to docs/upstream-rules.md.
 */
import type { PlanOptions } from '../planner.js';
import type { ReferenceWorld } from './reference-world.js';

export interface ReferenceDetach {
  volume: string;
  node: string;
  forcedTimeout: boolean;
  outOfService: boolean;
  verifySafeToDetach: boolean;
  timerStarted: boolean;
}

export interface ReferencePlan {
  detaches: ReferenceDetach[];
  attaches: Array<{ volume: string; node: string }>;
  conflicts: Array<{ volume: string; node: string }>;
  statusNodes: string[];
}

export function referencePlan(world: ReferenceWorld, now: number, options: PlanOptions): ReferencePlan {
  const plan: ReferencePlan = { detaches: [], attaches: [], conflicts: [], statusNodes: [] };
  // E1: detaches first, so that a volume moving between nodes is released before it is
  // attached again; then attaches; then node status.
  detachPass(world, now, options, plan);
  attachPass(world, now, plan);
  for (const [name, node] of world.nodes) {
    // K3
    if (node.statusUpdateNeeded) plan.statusNodes.push(name);
  }
  return plan;
}

function detachPass(world: ReferenceWorld, now: number, options: PlanOptions, plan: ReferencePlan): void {
  // E1 (1): every ASW entry, Attached and Uncertain alike.
  for (const [volume, nodes] of world.asw) {
    for (const [nodeName, attached] of nodes) {
      // F1: still desired.
      if (world.dsw.get(nodeName)?.has(volume)) continue;
      // F2: a detach on the same key is running or backing off; the timer is not started.
      if (!world.isSafeToRetry(volume, nodeName, 'detach', now)) continue;
      // F3: the entry cannot vanish within a plan.
      // F4: start the timer on first sight, else read it.
      let timerStarted = false;
      if (attached.detachRequestedTime === null) {
        attached.detachRequestedTime = now;
        timerStarted = true;
      }
      const elapsed = now - attached.detachRequestedTime;
      const timerExpired = elapsed > options.maxWaitForUnmountMs;
      // F5
      const node = world.nodes.get(nodeName);
      const healthy = node?.healthy ?? false;
      const forceDetachTimeoutExpired = timerExpired && !options.disableForceDetachOnTimeout;
      const forceDetach = !healthy && forceDetachTimeoutExpired;
      const outOfService = node?.outOfService ?? false;
      // F6 with D3: mounted when listed in volumesInUse, or when volumesInUse was never seen.
      const inUse = node?.volumesInUse ?? null;
      const mounted = inUse === null || inUse.has(volume);
      if (mounted && !forceDetach && !outOfService) continue;
      // F7, F9 (F11 follows from verifySafeToDetach === false)
      const verifySafeToDetach = !(forceDetachTimeoutExpired || outOfService);
      plan.detaches.push({
        volume, node: nodeName, forcedTimeout: forceDetachTimeoutExpired, outOfService, verifySafeToDetach, timerStarted,
      });
    }
  }
}

function attachPass(world: ReferenceWorld, now: number, plan: ReferencePlan): void {
  // E1 (2): every DSW entry.
  for (const [nodeName, volumes] of world.dsw) {
    for (const [volume, desired] of volumes) {
      // G1: an operation is pending on a matching key.
      if (world.isOperationPending(volume, nodeName)) continue;
      // G2: attached (confirmed) and desired: reset the detach timer. Uncertain is not attached.
      const attached = world.asw.get(volume)?.get(nodeName);
      if (attached?.attachConfirmed) {
        attached.detachRequestedTime = null;
        continue;
      }
      // G3 (H1, D7): multi-attach forbidden and confirmed on another node.
      if (world.forbidden.has(volume)) {
        const elsewhere = [...(world.asw.get(volume) ?? [])].some(([n, e]) => n !== nodeName && e.attachConfirmed);
        if (elsewhere) {
          // H4: once per desired entry.
          if (!desired.multiAttachErrorReported) plan.conflicts.push({ volume, node: nodeName });
          continue;
        }
      }
      // G4: start the attach, unless its key backs off (refused quietly).
      if (world.attachBackoff(volume, nodeName, now)) continue;
      plan.attaches.push({ volume, node: nodeName });
    }
  }
}
