/**
 * The detach half of a reconcile pass (F2, F8-F11): starts at most `budget` of the plan's
 * detaches and gates each on its node's status write. F8 at scale: upstream writes one node's
 * status synchronously before each detach; here each detach takes its operation key in the
 * pass, every node touched gets one status write (high-priority lane, concurrently), and a
 * detach sends nothing until its node's write succeeded. A failed write releases the detach
 * without backoff and puts the volume back in the report set (the executor's gate contract).
 */
import type { NodeId, VolumeId, WorldState } from '../cache/world-state.js';
import type { Plan } from '../kernel/plan-result.js';
import type { ControllerMetrics } from '../metrics/controller-metrics.js';
import type { OperationExecutor } from '../operations/operation-executor.js';
import type { NodeStatusUpdater } from '../statusupdater/index.js';
import { notify, type ControllerObserver } from '../operations/controller-observer.js';

export interface DetachPassDeps {
  state: WorldState;
  executor: OperationExecutor;
  statusUpdater: NodeStatusUpdater;
  metrics: ControllerMetrics;
  observer?: ControllerObserver;
}

/** What the detach half did: how many started, and what the budget left for later passes. */
export interface DetachPassResult {
  readonly started: number;
  /**
   * Multi-attach-forbidden volumes with a planned detach the budget did not reach. Upstream
   * starts every detach before the attach pass (E1), so their moves would be pending (G1) and
   * report no Multi-Attach error; the attach pass reports none for them either.
   */
  readonly deferred: ReadonlySet<VolumeId>;
}

const NONE: ReadonlySet<VolumeId> = new Set();

/** Starts this pass's detaches (at most `budget`). */
export function startDetaches(d: DetachPassDeps, plan: Plan, budget: number): DetachPassResult {
  const { state } = d;
  const n = plan.detaches.length;
  if (n === 0) return { started: 0, deferred: NONE };
  const gates = new Map<NodeId, { promise: Promise<boolean>; resolve(ok: boolean): void }>();
  let started = 0;
  let i = 0;
  for (; i < n && started < budget; i++) {
    const a = plan.detaches.at(i);
    // F2 re-checked at action time: an earlier action of this pass may own the key now.
    // Skipping here avoids a needless remove/re-write of the node's status.
    if (!state.isSafeToRetry(a.volume, a.node, 'detach', plan.now)) {
      if (a.timerStarted) state.resetDetachTimer(a.volume, a.node);
      continue;
    }
    // Several replicas: a node this one is handing over keeps its report set and gets no
    // status write for a detach that cannot start.
    if (!d.executor.mayStartOn(a.node)) continue;
    // F10 without the round trip: a detach no plugin can send (upstream's DetachVolume fails
    // before it starts) leaves the report set, and so the node's status, as they are.
    if (!d.executor.checkDetachable(a.volume, a.node)) continue;
    // F8, step 1: out of the node's report set before anything is sent. The node's status
    // write gates the detach whenever the node needs one, whether or not this volume was
    // reported (an uncertain one never is): upstream writes a flagged node before every detach
    // and skips the detach when that write fails.
    const removed = state.removeFromReportSet(a.volume, a.node);
    const gated = removed || state.statusUpdateNeeded(a.node);
    let gate = gated ? gates.get(a.node) : undefined;
    if (gated && !gate) {
      let resolve!: (ok: boolean) => void;
      const promise = new Promise<boolean>((r) => (resolve = r));
      gate = { promise, resolve };
      gates.set(a.node, gate);
    }
    // F8: a closed gate sends nothing and puts back what this detach took out of the report set.
    const putBack = removed ? () => state.addToReportSet(a.volume, a.node) : () => {};
    const detachGate = gate ? { after: gate.promise, onSkipped: putBack } : undefined;
    const r = d.executor.startDetach(a.volume, a.node, a.verifySafeToDetach, detachGate);
    if (r !== 'started') {
      if (removed) state.addToReportSet(a.volume, a.node); // F10
      if (r === 'pending' && a.timerStarted) state.resetDetachTimer(a.volume, a.node); // F2 came first upstream
      continue;
    }
    started++;
    const forced = a.verifySafeToDetach ? undefined : a.forcedTimeout ? 'timeout' : 'out-of-service';
    notify(d.observer, () => ({ kind: 'detach-started', volume: state.volumeName(a.volume), node: state.nodeName(a.node), ...(forced ? { forced } : {}) }));
    if (forced) {
      // F11, counted as upstream counts it: once the detach is sent, after its node's status
      // write (F8). A closed gate sends nothing and counts nothing.
      const reason = forced;
      if (gate) void gate.promise.then((open) => open && d.metrics.forcedDetaches.inc({ reason }));
      else d.metrics.forcedDetaches.inc({ reason });
    }
  }
  const deferred = i < n ? new Set<VolumeId>() : NONE;
  for (; i < n; i++) {
    const v = plan.detaches.volume(i);
    if (state.multiAttachForbidden(v)) (deferred as Set<VolumeId>).add(v);
  }
  // F8, step 2: one status write per touched node; its detaches are sent once it succeeded.
  for (const [node, gate] of gates) {
    if (!state.statusUpdateNeeded(node)) {
      gate.resolve(true);
      continue;
    }
    d.statusUpdater.updateNodeStatusForNode(state.nodeName(node)).then(
      (outcome) => gate.resolve(outcome !== 'failed'),
      () => gate.resolve(false), // the contract says never; a closed gate is the safe answer
    );
  }
  return { started, deferred };
}
