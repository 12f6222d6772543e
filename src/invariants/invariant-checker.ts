/**
 * The invariant checker: subscribes to the simulator's own store (every committed change, in
 * commit order, synchronously) and records violations of the safety invariants (see
 * violation.ts for the kinds). It judges the cluster as the API server holds it, never the
 * controller's view, so it can run beside any controller: in-process tests, the soak bench.
 *
 * The max-wait timer (b) cannot be read from outside. The checker approximates its start by
 * the earliest moment the pair can have become undesired: the commit at which the last live
 * pod on the node using the volume stopped being live (deletion requested, terminated, or
 * deleted), or, when no such pod was seen, when the checker first saw the VolumeAttachment.
 * The controller sees that change later than the store commits it, so its timer starts later
 * and expires later: the approximation errs towards allowing a detach (no false alarms from
 * the timer; a detach within the real timer but after the approximated one is missed).
 * Changes of PVC/PV binding are not tracked as "undesired" moments (the sim never rebinds).
 * The out-of-service taint also counts for `outOfServiceGraceMs` after it is removed, since
 * the controller may act on a node object cached just before. The checker must be started
 * before the controller acts, or pairs that became undesired before it started are timed from
 * the checker's start.
 *
 * Mounted (b) = the volume is in the node's volumesInUse, or, for a deleted node, in its last
 * volumesInUse (upstream D4). This covers unhealthy nodes as well as healthy ones: upstream
 * never detaches a mounted volume before the timer without the taint (F5–F6), whatever the
 * node's health.
 *
 * @example
 *   const checker = createInvariantChecker({ store: sim.store, maxWaitForUnmountMs: 30_000 });
 *   … faults …; checker.faultsStopped(); await until(() => checker.convergence().converged);
 *   assert.deepEqual(checker.violations(), []); checker.stop();
 */
import { logger } from '../log/logger.js';
import { parseUniqueVolumeName, volumeAttachmentName } from '../sim/actors/names.js';
import type { KubeObject, ResourceName, SimStore, StoreEvent } from '../sim/store/sim-store.js';
import { ClusterModel, pairKey, type VaState } from './cluster-model.js';
import { VIOLATION_KINDS, type Violation, type ViolationKind } from './violation.js';

export interface InvariantCheckerOptions {
  store: Pick<SimStore, 'list' | 'subscribe' | 'resourceVersion'>;
  /** The controller's --max-wait-for-unmount. */
  maxWaitForUnmountMs: number;
  /** (e): how long after faults stop (or after it became desired, if later) a pair may stay unattached. Default 120 s. */
  convergenceBoundMs?: number;
  /** How long a removed out-of-service taint still justifies a detach. Default 10 s. */
  outOfServiceGraceMs?: number;
  /** Period of the (e) sweep once faults stopped. Default 1 s. */
  sweepIntervalMs?: number;
  /** Violations kept in full (all are counted). Default 1000. */
  maxRecorded?: number;
  now?: () => number;
  onViolation?: (v: Violation) => void;
}

export interface ConvergenceStatus {
  /** Desired pairs counted (conflicting multi-attach-forbidden pairs left out). */
  desired: number;
  /** Desired pairs with an attached, live VolumeAttachment listed in the node's volumesAttached. */
  attached: number;
  /** Up to 10 pending pairs, `U on node`. */
  pending: string[];
  /** VolumeAttachments of pairs nobody wants. */
  strayAttachments: number;
  /** volumesAttached entries of pairs nobody wants. */
  strayReports: number;
  /** Multi-attach-forbidden volumes desired on more than one node (not counted as desired). */
  conflicts: number;
  converged: boolean;
}

export interface InvariantChecker {
  /** Violations recorded so far (at most maxRecorded), oldest first. */
  violations(): readonly Violation[];
  counts(): Record<ViolationKind, number>;
  /** VolumeAttachment creations and deletion requests seen since start (R1: attach and detach calls). */
  operations(): { attaches: number; detaches: number };
  /** Starts (e): from now on every desired pair must be attached within the bound; sweeps periodically. */
  faultsStopped(at?: number): void;
  /** Computes convergence now (and records (e) violations once faults stopped). */
  convergence(): ConvergenceStatus;
  stop(): void;
}

const FOLLOWED: ReadonlySet<ResourceName> = new Set<ResourceName>(['nodes', 'pods', 'persistentvolumeclaims', 'persistentvolumes', 'volumeattachments', 'csidrivers']);
// Dependency order for the initial list: volumes resolve before the attachments that name them.
const LIST_ORDER: readonly ResourceName[] = ['csidrivers', 'persistentvolumes', 'persistentvolumeclaims', 'nodes', 'pods', 'volumeattachments'];
const MAX_UNDESIRED_ENTRIES = 100_000;

export function createInvariantChecker(opts: InvariantCheckerOptions): InvariantChecker {
  return new Checker(opts);
}

class Checker implements InvariantChecker {
  private readonly log = logger('invariants');
  private readonly model = new ClusterModel();
  private readonly now: () => number;
  private readonly recorded: Violation[] = [];
  private readonly counters = Object.fromEntries(VIOLATION_KINDS.map((k) => [k, 0])) as Record<ViolationKind, number>;
  private readonly ops = { attaches: 0, detaches: 0 };
  /** When each pair last stopped being desired (b). */
  private readonly undesiredAt = new Map<string, number>();
  /** (c) pairs now in violation, reported once until they recover. */
  private readonly reportedBad = new Set<string>();
  /** (e) first sweep that saw each pending pair, and pairs already reported. */
  private readonly pendingSince = new Map<string, number>();
  private readonly notConverged = new Set<string>();
  private stoppedAt: number | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;

  constructor(private readonly o: InvariantCheckerOptions) {
    this.now = o.now ?? Date.now;
    const now = this.now();
    for (const r of LIST_ORDER) for (const obj of o.store.list(r)) this.apply('ADDED', r, obj, now, true);
    for (const [name, node] of this.model.nodes) for (const u of node.attached) this.checkReported(u, name);
    this.unsubscribe = o.store.subscribe((ev: StoreEvent) => {
      if (!FOLLOWED.has(ev.resource)) return;
      try {
        this.apply(ev.type, ev.resource, ev.object(), this.now(), false);
      } catch (err) {
        this.log.error({ err, resource: ev.resource, name: ev.name }, 'invariant check failed on an event; skipped');
      }
    });
  }

  violations(): readonly Violation[] {
    return this.recorded;
  }

  counts(): Record<ViolationKind, number> {
    return { ...this.counters };
  }

  operations(): { attaches: number; detaches: number } {
    return { ...this.ops };
  }

  faultsStopped(at = this.now()): void {
    this.stoppedAt = at;
    this.pendingSince.clear();
    clearInterval(this.sweepTimer);
    this.sweepTimer = setInterval(() => {
      try {
        this.convergence();
      } catch (err) {
        this.log.error({ err }, 'convergence sweep failed');
      }
    }, this.o.sweepIntervalMs ?? 1000);
    this.sweepTimer.unref();
  }

  stop(): void {
    clearInterval(this.sweepTimer);
    this.unsubscribe();
  }

  private apply(type: string, resource: ResourceName, obj: KubeObject, now: number, initial: boolean): void {
    const gone = type === 'DELETED';
    const m = this.model;
    switch (resource) {
      case 'csidrivers':
        return m.applyCsiDriver(obj, gone);
      case 'persistentvolumes':
        return m.applyPv(obj, gone);
      case 'persistentvolumeclaims':
        return m.applyPvc(obj, gone);
      case 'pods':
        return this.onPod(obj, gone, now);
      case 'nodes':
        return this.onNode(obj, gone, now, initial);
      case 'volumeattachments':
        return this.onVa(obj, gone, now, initial);
      default:
    }
  }

  private onPod(obj: KubeObject, gone: boolean, now: number): void {
    const key = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
    const { prev, next } = this.model.applyPod(obj, gone);
    if (!prev?.live || next?.live || !prev.node) return;
    // The pod stopped wanting its volumes: the earliest its pairs can have become undesired.
    for (const u of this.model.podVolumes(key, prev)) this.undesiredAt.set(pairKey(u, prev.node), now);
    if (this.undesiredAt.size > MAX_UNDESIRED_ENTRIES) this.pruneUndesired(now);
  }

  private onNode(obj: KubeObject, gone: boolean, now: number, initial: boolean): void {
    const name = obj.metadata.name;
    const { prev, next } = this.model.applyNode(obj, gone, now);
    if (initial) return;
    for (const u of prev?.attached ?? []) if (!next?.attached.has(u)) this.reportedBad.delete(pairKey(u, name));
    for (const u of next?.attached ?? []) this.checkReported(u, name);
  }

  private onVa(obj: KubeObject, gone: boolean, now: number, initial: boolean): void {
    const { prev, next } = this.model.applyVa(obj, gone, now);
    if (next && !prev) {
      if (!initial) this.ops.attaches++;
      this.checkNewAttachment(next);
    }
    const deletionRequested = prev !== undefined && !prev.deleting && (next === undefined || next.deleting);
    if (deletionRequested && !initial) {
      this.ops.detaches++;
      this.checkDetach(prev, now);
    }
    const va = next ?? prev;
    if (va && !initial && this.model.nodes.get(va.node)?.attached.has(va.volume)) this.checkReported(va.volume, va.node);
  }

  /** (a) and (d) for a VolumeAttachment just seen. */
  private checkNewAttachment(va: VaState): void {
    const m = this.model;
    const same = [...(m.vasByPair.get(pairKey(va.volume, va.node)) ?? [])].filter((n) => n !== va.name);
    if (same.length > 0) {
      this.record('duplicate-attachment', va.volume, [va.node], [va.name, ...same], `${same.length + 1} VolumeAttachments for one volume and node`);
    }
    if (!va.forbidden) return;
    for (const other of m.vasByVolume.get(va.volume) ?? []) {
      const o = m.vas.get(other);
      if (!o || o.name === va.name || o.node === va.node || (o.deleting && va.deleting)) continue;
      const state = (x: VaState) => `${x.attached ? 'attached' : 'not attached'}${x.deleting ? ', being deleted' : ''}`;
      this.record('multi-attach', va.volume, [o.node, va.node], [o.name, va.name], `multi-attach-forbidden volume has a VolumeAttachment on ${o.node} (${state(o)}) and on ${va.node} (${state(va)})`);
    }
  }

  /** (b): the deletion of `va` was just requested. */
  private checkDetach(va: VaState, now: number): void {
    const m = this.model;
    if (!m.inUse(va.node)?.has(va.volume)) return;
    const node = m.nodes.get(va.node);
    const oosSeen = m.outOfServiceSeen.get(va.node);
    if (node?.outOfService || (oosSeen !== undefined && now - oosSeen <= (this.o.outOfServiceGraceMs ?? 10_000))) return;
    const health = node ? (node.ready ? 'healthy' : 'unhealthy') : 'deleted';
    if (m.desiredOn(va.volume, va.node)) {
      this.record('detach-while-mounted', va.volume, [va.node], [va.name], `detach requested while mounted on a ${health} node and still wanted by a live pod`);
      return;
    }
    const since = this.undesiredAt.get(pairKey(va.volume, va.node)) ?? va.since;
    const waited = now - since;
    if (waited > this.o.maxWaitForUnmountMs) return;
    this.record('detach-while-mounted', va.volume, [va.node], [va.name], `detach requested while mounted on a ${health} node without out-of-service taint, ${Math.round(waited)} ms after the pair became undesired (max wait ${this.o.maxWaitForUnmountMs} ms)`);
  }

  /** (c): `node` lists `u` in volumesAttached. */
  private checkReported(u: string, node: string): void {
    const key = pairKey(u, node);
    const va = this.attachmentOf(u, node);
    if (va?.attached && !va.deleting) {
      this.reportedBad.delete(key);
      return;
    }
    if (this.reportedBad.has(key)) return;
    this.reportedBad.add(key);
    const why = !va ? 'has no VolumeAttachment' : va.deleting ? 'has a VolumeAttachment being deleted' : 'has a VolumeAttachment that is not attached';
    this.record('reported-not-attached', u, [node], va ? [va.name] : [], `listed in volumesAttached but ${why}`);
  }

  private attachmentOf(u: string, node: string): VaState | undefined {
    const va = this.model.attachmentOf(u, node);
    if (va) return va;
    // Keyed by PV name when the PV was unknown at creation: find it by its L1 name instead.
    const parsed = parseUniqueVolumeName(u);
    return parsed ? this.model.vas.get(volumeAttachmentName(parsed.handle, parsed.driver, node)) : undefined;
  }

  convergence(): ConvergenceStatus {
    const m = this.model;
    const now = this.now();
    const { desired, conflicts } = m.desiredPairs();
    let attached = 0;
    const pending: string[] = [];
    const stillPending = new Set<string>();
    for (const [key, { u, node }] of desired) {
      const va = this.attachmentOf(u, node);
      if (va?.attached && !va.deleting && m.nodes.get(node)?.attached.has(u)) {
        attached++;
        continue;
      }
      stillPending.add(key);
      if (pending.length < 10) pending.push(`${u} on ${node}`);
      if (this.stoppedAt === undefined) continue;
      const since = Math.max(this.stoppedAt, this.pendingSince.get(key) ?? now);
      if (!this.pendingSince.has(key)) this.pendingSince.set(key, since);
      if (now - since > (this.o.convergenceBoundMs ?? 120_000) && !this.notConverged.has(key)) {
        this.notConverged.add(key);
        this.record('not-converged', u, [node], va ? [va.name] : [], `desired but not attached and reported ${Math.round((now - since) / 1000)} s after faults stopped (${!va ? 'no VolumeAttachment' : !va.attached ? 'VolumeAttachment not attached' : va.deleting ? 'VolumeAttachment being deleted' : 'not in volumesAttached'})`);
      }
    }
    for (const key of this.pendingSince.keys()) if (!stillPending.has(key)) this.pendingSince.delete(key);
    let strayAttachments = 0;
    for (const va of m.vas.values()) if (!desired.has(pairKey(va.volume, va.node))) strayAttachments++;
    let strayReports = 0;
    for (const [name, node] of m.nodes) for (const u of node.attached) if (!desired.has(pairKey(u, name))) strayReports++;
    return {
      desired: desired.size, attached, pending, strayAttachments, strayReports, conflicts,
      converged: attached === desired.size && strayAttachments === 0 && strayReports === 0,
    };
  }

  private record(kind: ViolationKind, volume: string, nodes: string[], attachments: string[], detail: string): void {
    const v: Violation = { kind, at: this.now(), rv: this.o.store.resourceVersion(), volume, nodes, attachments, detail };
    this.counters[kind]++;
    if (this.recorded.length < (this.o.maxRecorded ?? 1000)) this.recorded.push(v);
    this.log.warn({ violation: v }, `invariant violated: ${kind}`);
    this.o.onViolation?.(v);
  }

  private pruneUndesired(now: number): void {
    const horizon = now - 2 * this.o.maxWaitForUnmountMs;
    for (const [k, at] of this.undesiredAt) if (at < horizon) this.undesiredAt.delete(k);
  }
}
