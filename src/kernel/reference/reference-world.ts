/**
 * ReferenceWorld: the upstream caches as plain Maps keyed by names, written to be read next to
 * docs/upstream-rules.md rather than to be fast. It is the oracle of the property
 * tests and the baseline of bench/kernel.bench.ts; production code uses WorldState.
 *
 *   dsw: managed node -> volume -> { pods, multiAttachErrorReported }       (C1, H4)
 *   asw: volume -> node -> { attachConfirmed, detachRequestedTime }         (D1, D5)
 *   nodes: node -> { managed, healthy, outOfService, volumesInUse, report set, statusUpdateNeeded }
 *   pending / backoff: the operation executor (I1-I4)
 */
import { INITIAL_BACKOFF_MS, MAX_BACKOFF_MS } from '../../cache/backoff-heap.js';
import type { AddPodResult, OperationKind, StartResult } from '../../cache/world-state.js';

export interface DesiredEntry {
  pods: Set<string>;
  multiAttachErrorReported: boolean;
}

export interface AttachedEntry {
  attachConfirmed: boolean;
  /** null = zero time (no detach requested). */
  detachRequestedTime: number | null;
}

export interface NodeEntry {
  managed: boolean;
  healthy: boolean;
  outOfService: boolean;
  /** D3: last observed status.volumesInUse; null = never observed. */
  volumesInUse: Set<string> | null;
  /** D6: volumes to report as attached. */
  report: Set<string>;
  /** The report set was used at least once (B4). */
  tracked: boolean;
  statusUpdateNeeded: boolean;
}

interface Pending {
  volume: string;
  node: string;
  op: OperationKind;
}

interface Backoff {
  lastErrorAt: number;
  durationMs: number;
}

export class ReferenceWorld {
  readonly dsw = new Map<string, Map<string, DesiredEntry>>();
  readonly asw = new Map<string, Map<string, AttachedEntry>>();
  readonly nodes = new Map<string, NodeEntry>();
  readonly forbidden = new Set<string>();
  readonly pending = new Map<string, Pending>();
  readonly backoff = new Map<string, Backoff>();

  node(name: string): NodeEntry {
    let n = this.nodes.get(name);
    if (!n) {
      n = {
        managed: false, healthy: false, outOfService: false, volumesInUse: null, report: new Set(), tracked: false,
        statusUpdateNeeded: false,
      };
      this.nodes.set(name, n);
    }
    return n;
  }

  // ---- nodes (B1, B2, D3, B4, K3) ------------------------------------------------------------
  setNodeManaged(node: string): void {
    this.node(node).managed = true;
    if (!this.dsw.has(node)) this.dsw.set(node, new Map());
  }
  setNodeHealthy(node: string, healthy: boolean): void {
    this.node(node).healthy = healthy;
  }
  setNodeOutOfService(node: string, oos: boolean): void {
    this.node(node).outOfService = oos;
  }
  setVolumesInUse(node: string, volumes: readonly string[] | null): void {
    this.node(node).volumesInUse = volumes === null ? null : new Set(volumes);
  }
  /** Nodes whose removal was refused (B2): removed when their last desired volume goes. */
  readonly removalDeferred = new Set<string>();

  /** The node was named again (its object is back): a deferred removal is off. */
  noteNodeSeen(node: string): void {
    this.removalDeferred.delete(node);
  }

  /** B2: refused while volumes are desired on the node, and then done when the last goes. */
  removeNode(node: string): boolean {
    if ((this.dsw.get(node)?.size ?? 0) > 0) {
      this.removalDeferred.add(node);
      return false;
    }
    this.removalDeferred.delete(node);
    this.dsw.delete(node);
    const n = this.node(node);
    n.managed = false;
    n.healthy = false;
    n.outOfService = false;
    return true;
  }
  setStatusUpdateNeeded(node: string): boolean {
    const n = this.node(node);
    if (n.tracked) n.statusUpdateNeeded = true;
    return n.statusUpdateNeeded;
  }
  clearStatusUpdateNeeded(node: string): void {
    this.node(node).statusUpdateNeeded = false;
  }
  setMultiAttachForbidden(volume: string, forbidden: boolean): void {
    if (forbidden) this.forbidden.add(volume);
    else this.forbidden.delete(volume);
  }

  // ---- desired state (C1, H4) ----------------------------------------------------------------
  addDesiredPod(volume: string, node: string, pod: string): AddPodResult {
    const volumes = this.dsw.get(node);
    if (!volumes) return 'node-not-managed';
    let entry = volumes.get(volume);
    if (!entry) {
      entry = { pods: new Set(), multiAttachErrorReported: false };
      volumes.set(volume, entry);
    }
    if (entry.pods.has(pod)) return 'exists';
    entry.pods.add(pod);
    return 'added';
  }
  removeDesiredPod(volume: string, node: string, pod: string): boolean {
    const volumes = this.dsw.get(node);
    const entry = volumes?.get(volume);
    if (!volumes || !entry || !entry.pods.delete(pod)) return false;
    if (entry.pods.size === 0) volumes.delete(volume);
    if (volumes.size === 0 && this.removalDeferred.has(node)) this.removeNode(node);
    return true;
  }
  setMultiAttachErrorReported(volume: string, node: string): void {
    const entry = this.dsw.get(node)?.get(volume);
    if (entry) entry.multiAttachErrorReported = true;
  }

  // ---- actual state (D2, D6) -----------------------------------------------------------------
  private attached(volume: string, node: string): AttachedEntry {
    let nodes = this.asw.get(volume);
    if (!nodes) {
      nodes = new Map();
      this.asw.set(volume, nodes);
    }
    let entry = nodes.get(node);
    if (!entry) {
      entry = { attachConfirmed: false, detachRequestedTime: null };
      nodes.set(node, entry);
    }
    return entry;
  }
  markAttached(volume: string, node: string): void {
    this.attached(volume, node).attachConfirmed = true;
    this.addToReportSet(volume, node);
  }
  markUncertain(volume: string, node: string): void {
    this.attached(volume, node).attachConfirmed = false;
    this.removeFromReportSet(volume, node);
  }
  markDetached(volume: string, node: string): void {
    const nodes = this.asw.get(volume);
    if (!nodes?.has(node)) return;
    nodes.delete(node);
    if (nodes.size === 0) this.asw.delete(volume);
    this.removeFromReportSet(volume, node);
  }
  addToReportSet(volume: string, node: string): boolean {
    if (!this.asw.get(volume)?.get(node)?.attachConfirmed) return false;
    const n = this.node(node);
    if (n.report.has(volume)) return false;
    n.report.add(volume);
    n.tracked = true;
    n.statusUpdateNeeded = true;
    return true;
  }
  removeFromReportSet(volume: string, node: string): boolean {
    const n = this.nodes.get(node);
    if (!n?.report.delete(volume)) return false;
    n.statusUpdateNeeded = true;
    return true;
  }
  resetDetachTimer(volume: string, node: string): void {
    const entry = this.asw.get(volume)?.get(node);
    if (entry) entry.detachRequestedTime = null;
  }

  // ---- operations (I1-I4) --------------------------------------------------------------------
  /** I1: the volume alone when multi-attach is forbidden, else volume and node. */
  operationKey(volume: string, node: string): string {
    return this.forbidden.has(volume) ? `volume:${volume}` : `pair:${volume}\u0000${node}`;
  }
  private inBackoff(key: string, op: OperationKind, now: number): boolean {
    const b = this.backoff.get(`${key}#${op}`);
    return b !== undefined && now - b.lastErrorAt <= b.durationMs;
  }
  tryStartOperation(volume: string, node: string, op: OperationKind, now: number): StartResult {
    const key = this.operationKey(volume, node);
    // I2: a volume-wide key matches every key of the volume; a pair key matches itself and the
    // volume-wide key.
    for (const [k, p] of this.pending) {
      if (p.volume !== volume) continue;
      if (this.forbidden.has(volume) || k === key || k === `volume:${volume}`) return 'pending';
    }
    if (this.inBackoff(key, op, now)) return 'backoff';
    this.pending.set(key, { volume, node, op });
    return 'started';
  }
  completeOperation(volume: string, node: string, op: OperationKind, ok: boolean, now: number): boolean {
    let key = `pair:${volume}\u0000${node}`;
    if (this.pending.get(key)?.op !== op) key = `volume:${volume}`;
    if (this.pending.get(key)?.op !== op) return false;
    this.pending.delete(key);
    if (ok) {
      this.backoff.delete(`${key}#attach`);
      this.backoff.delete(`${key}#detach`);
      return true;
    }
    const b = this.backoff.get(`${key}#${op}`) ?? { lastErrorAt: now, durationMs: 0 };
    b.durationMs = b.durationMs === 0 ? INITIAL_BACKOFF_MS : Math.min(2 * b.durationMs, MAX_BACKOFF_MS);
    b.lastErrorAt = now;
    this.backoff.set(`${key}#${op}`, b);
    return true;
  }
  /** I4: false while the exact key is pending or (key, op) backs off. */
  isSafeToRetry(volume: string, node: string, op: OperationKind, now: number): boolean {
    const key = this.operationKey(volume, node);
    return !this.pending.has(key) && !this.inBackoff(key, op, now);
  }
  /** G1. */
  isOperationPending(volume: string, node: string): boolean {
    if (this.forbidden.has(volume)) return [...this.pending.values()].some((p) => p.volume === volume);
    return this.pending.has(`pair:${volume}\u0000${node}`) || this.pending.has(`volume:${volume}`);
  }
  attachBackoff(volume: string, node: string, now: number): boolean {
    return this.inBackoff(this.operationKey(volume, node), 'attach', now);
  }
}
