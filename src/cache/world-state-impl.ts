/**
 * The WorldState implementation over WorldCore (tables, lists, counters) and OperationTable.
 * Contracts are documented on the interface in world-state.ts.
 */
import {
  NF_HEALTHY, NF_MANAGED, NF_OUT_OF_SERVICE, NF_REMOVED, NF_STATUS_NEEDED, NF_TRACKED,
  PF_ATTACHED, PF_DESIRED, PF_MAE_REPORTED, PF_TIMER_SET, PF_UNCERTAIN, VF_FORBIDDEN,
} from '../kernel/abi.js';
import { fleetError } from '../errors/index.js';
import type { KernelAccess } from './kernel-access.js';
import type { PluginTotalsRow } from './plugin-totals.js';
import { OperationTable } from './operation-table.js';
import { PlanClock } from './plan-clock.js';
import { PlanGate } from './plan-gate.js';
import { WorldCore } from './world-core.js';
import { PodSets } from './pod-sets.js';
import { applyVolumesInUse } from './volumes-in-use.js';
import { addPod, markAttached, markDetached, markUncertain, removePod } from './pair-transitions.js';
import {
  attachStateOf, flaggedNodes, liveIds, nodeState, pairState, reportSet, volumeState,
} from './world-readers.js';
import type {
  AddPodResult, AttachState, BackoffEntry, EntrySpec, NodeId, NodeState, OperationKind, PairState, PendingOperation,
  StartResult, VolumeId, VolumeState, WorldCounts, WorldState,
} from './world-state.js';

export interface WorldStateOptions {
  /** Expected sizes; tables start this large and grow by 1.5x beyond. */
  capacity?: { nodes?: number; volumes?: number; pairs?: number };
}

export function createWorldState(options: WorldStateOptions = {}): WorldState {
  return new WorldStateImpl(options);
}

class WorldStateImpl implements WorldState {
  private readonly core: WorldCore;
  private readonly ops: OperationTable;
  private readonly pods: PodSets;
  private readonly clock: PlanClock;
  private readonly gate = new PlanGate();

  constructor(options: WorldStateOptions) {
    this.core = new WorldCore(options.capacity ?? {});
    this.ops = new OperationTable(this.core);
    this.core.ops = this.ops;
    this.pods = new PodSets(this.core);
    this.clock = new PlanClock(this.core);
  }

  // ---- interning -----------------------------------------------------------------------------
  internNode(name: string): NodeId {
    this.assertIdle();
    return this.core.internNode(name);
  }
  findNode(name: string): NodeId | undefined {
    return this.core.nodes.find(name);
  }
  nodeName(node: NodeId): string {
    return this.core.nodes.name(node) ?? this.dead('node', node);
  }
  internVolume(uniqueName: string): VolumeId {
    this.assertIdle();
    return this.core.internVolume(uniqueName);
  }
  findVolume(uniqueName: string): VolumeId | undefined {
    return this.core.volumes.find(uniqueName);
  }
  volumeName(volume: VolumeId): string {
    return this.core.volumes.name(volume) ?? this.dead('volume', volume);
  }
  releaseVolume(volume: VolumeId): boolean {
    this.assertIdle();
    return this.core.volumeLive(volume) && this.core.maybeFreeVolume(volume);
  }

  // ---- nodes ---------------------------------------------------------------------------------
  setNodeManaged(node: NodeId): void {
    this.nodeFlag(node, NF_MANAGED, true);
  }
  setNodeHealthy(node: NodeId, healthy: boolean): void {
    this.nodeFlag(node, NF_HEALTHY, healthy);
  }
  setNodeOutOfService(node: NodeId, outOfService: boolean): void {
    this.nodeFlag(node, NF_OUT_OF_SERVICE, outOfService);
  }
  setVolumesInUse(node: NodeId, uniqueNames: readonly string[] | null): void {
    this.liveNode(node);
    applyVolumesInUse(this.core, node, uniqueNames);
  }
  removeNode(node: NodeId): boolean {
    this.liveNode(node);
    return this.core.removeNode(node);
  }
  setStatusUpdateNeeded(node: NodeId): boolean {
    this.liveNode(node);
    if ((this.core.t.nodeFlags[node] & NF_TRACKED) === 0) return false;
    this.core.setStatusNeeded(node, true);
    return true;
  }
  clearStatusUpdateNeeded(node: NodeId): void {
    this.liveNode(node);
    this.core.setStatusNeeded(node, false);
    this.core.maybeFreeNode(node);
  }
  statusUpdateNeeded(node: NodeId): boolean {
    return this.core.nodeLive(node) && (this.core.t.nodeFlags[node] & NF_STATUS_NEEDED) !== 0;
  }
  nodesNeedingStatusUpdate(): NodeId[] {
    return flaggedNodes(this.core);
  }
  volumesToReport(node: NodeId): VolumeId[] {
    return this.core.nodeLive(node) ? reportSet(this.core, node) : [];
  }

  // ---- volumes -------------------------------------------------------------------------------
  setMultiAttachForbidden(volume: VolumeId, forbidden: boolean): void {
    this.liveVolume(volume);
    const t = this.core.t;
    const f = t.vflags(volume);
    if (forbidden === ((f & VF_FORBIDDEN) !== 0)) return;
    t.setVflags(volume, forbidden ? f | VF_FORBIDDEN : f & ~VF_FORBIDDEN);
    if (forbidden) this.ops.refreshPairPendingAny(volume);
    this.core.refreshVolumeConflicts(volume);
  }
  multiAttachForbidden(volume: VolumeId): boolean {
    return this.core.volumeLive(volume) && (this.core.t.vflags(volume) & VF_FORBIDDEN) !== 0;
  }
  setVolumeInfo(volume: VolumeId, info: unknown): void {
    this.liveVolume(volume);
    this.core.records.setInfo(volume, info);
  }
  volumeInfo(volume: VolumeId): unknown {
    const c = this.core;
    return c.volumeLive(volume) ? c.records.info(volume) : undefined;
  }
  setVolumePlugin(volume: VolumeId, plugin: string | undefined): void {
    this.liveVolume(volume);
    const c = this.core;
    c.pluginTotals.setLabel(volume, plugin, () => {
      let desired = 0;
      let actual = 0;
      c.forEachSlotOfVolume(volume, (slot) => {
        const f = c.t.pairFlags[slot];
        if (f & PF_DESIRED) desired++;
        if (f & (PF_ATTACHED | PF_UNCERTAIN)) actual++;
      });
      return { desired, actual };
    });
  }
  pluginTotals(): PluginTotalsRow[] {
    return this.core.pluginTotals.rows();
  }

  // ---- desired state -------------------------------------------------------------------------
  addDesiredPod(volume: VolumeId, node: NodeId, podUid: string, spec?: EntrySpec): AddPodResult {
    this.livePair(volume, node);
    if ((this.core.t.nodeFlags[node] & NF_MANAGED) === 0) return 'node-not-managed';
    return addPod(this.core, this.pods, this.core.getOrCreatePair(volume, node), podUid, spec) ? 'added' : 'exists';
  }
  removeDesiredPod(volume: VolumeId, node: NodeId, podUid: string): boolean {
    this.assertIdle();
    const slot = this.slotOf(volume, node);
    return slot >= 0 && removePod(this.core, this.pods, slot, podUid);
  }
  hasDesiredPod(volume: VolumeId, node: NodeId, podUid: string): boolean {
    const slot = this.slotOf(volume, node);
    return slot >= 0 && this.pods.has(slot, podUid);
  }
  desiredPods(volume: VolumeId, node: NodeId): string[] {
    const slot = this.slotOf(volume, node);
    return slot < 0 ? [] : this.pods.list(slot);
  }
  desiredSpec(volume: VolumeId, node: NodeId): EntrySpec | undefined {
    const slot = this.slotOf(volume, node);
    return slot >= 0 && (this.core.t.pairFlags[slot] & PF_DESIRED) !== 0 ? this.core.pairSpec(slot) : undefined;
  }
  specName(volume: VolumeId, node: NodeId): string | undefined {
    const spec = this.desiredSpec(volume, node);
    return typeof spec === 'object' ? spec.name : spec;
  }
  setMultiAttachErrorReported(volume: VolumeId, node: NodeId): void {
    this.assertIdle();
    const slot = this.slotOf(volume, node);
    if (slot >= 0 && this.core.t.pairFlags[slot] & PF_DESIRED) this.core.t.pairFlags[slot] |= PF_MAE_REPORTED;
  }

  // ---- actual state --------------------------------------------------------------------------
  markAttached(volume: VolumeId, node: NodeId, devicePath = ''): void {
    this.livePair(volume, node);
    markAttached(this.core, this.core.getOrCreatePair(volume, node));
    this.setDevicePath(volume, devicePath);
  }
  markUncertain(volume: VolumeId, node: NodeId): void {
    this.livePair(volume, node);
    markUncertain(this.core, this.core.getOrCreatePair(volume, node));
    this.setDevicePath(volume, '');
  }
  devicePath(volume: VolumeId): string {
    return this.core.devicePaths.get(volume) ?? '';
  }
  private setDevicePath(volume: VolumeId, path: string): void {
    if (path === '') this.core.devicePaths.clear(volume);
    else this.core.devicePaths.set(volume, path);
  }
  markDetached(volume: VolumeId, node: NodeId): void {
    this.assertIdle();
    const slot = this.slotOf(volume, node);
    if (slot >= 0) markDetached(this.core, slot);
  }
  removeFromReportSet(volume: VolumeId, node: NodeId): boolean {
    this.assertIdle();
    const slot = this.slotOf(volume, node);
    return slot >= 0 && this.core.removeFromReport(slot);
  }
  addToReportSet(volume: VolumeId, node: NodeId): boolean {
    this.assertIdle();
    const slot = this.slotOf(volume, node);
    return slot >= 0 && this.core.addToReport(slot);
  }
  attachState(volume: VolumeId, node: NodeId): AttachState {
    const slot = this.slotOf(volume, node);
    return slot < 0 ? 'detached' : attachStateOf(this.core.t.pairFlags[slot]);
  }
  detachRequestedAt(volume: VolumeId, node: NodeId): number | null {
    const slot = this.slotOf(volume, node);
    return slot < 0 ? null : this.clock.timerOf(slot);
  }
  resetDetachTimer(volume: VolumeId, node: NodeId): void {
    this.assertIdle();
    const slot = this.slotOf(volume, node);
    if (slot >= 0) this.core.t.pairFlags[slot] &= ~PF_TIMER_SET;
  }

  // ---- operations ----------------------------------------------------------------------------
  tryStartOperation(volume: VolumeId, node: NodeId, op: OperationKind, now: number): StartResult {
    this.livePair(volume, node);
    return this.ops.tryStart(volume, node, op, now);
  }
  completeOperation(volume: VolumeId, node: NodeId, op: OperationKind, ok: boolean, now: number): boolean {
    this.assertIdle();
    return this.core.volumeLive(volume) && this.ops.complete(volume, this.liveOrNone(node), op, ok, now);
  }
  releaseOperation(volume: VolumeId, node: NodeId, op: OperationKind): boolean {
    this.assertIdle();
    return this.core.volumeLive(volume) && this.ops.complete(volume, this.liveOrNone(node), op, 'released', 0);
  }
  isSafeToRetry(volume: VolumeId, node: NodeId, op: OperationKind, now: number): boolean {
    return !this.core.volumeLive(volume) || this.ops.isSafeToRetry(volume, this.liveOrNone(node), op, now);
  }
  isOperationPending(volume: VolumeId, node: NodeId): boolean {
    return this.core.volumeLive(volume) && this.ops.isPending(volume, this.liveOrNone(node));
  }
  pendingOperationFor(volume: VolumeId, node: NodeId): PendingOperation | undefined {
    return this.core.volumeLive(volume) ? this.ops.pendingFor(volume, this.liveOrNone(node)) : undefined;
  }
  backoffFor(volume: VolumeId, node: NodeId, now: number): BackoffEntry[] {
    return this.core.volumeLive(volume) ? this.ops.backoffFor(volume, this.liveOrNone(node), now) : [];
  }
  pendingOperations(): PendingOperation[] {
    return this.ops.pendingList();
  }
  backoffOperations(now: number): BackoffEntry[] {
    return this.ops.backoffList(now);
  }

  // ---- readers -------------------------------------------------------------------------------
  pair(volume: VolumeId, node: NodeId): PairState | undefined {
    const slot = this.slotOf(volume, node);
    return slot < 0 ? undefined : pairState(this.core, slot, this.clock.base);
  }
  forEachPairOfNode(node: NodeId, fn: (pair: PairState) => void): void {
    if (this.core.nodeLive(node)) this.core.forEachSlotOfNode(node, (p) => fn(pairState(this.core, p, this.clock.base)));
  }
  forEachPairOfVolume(volume: VolumeId, fn: (pair: PairState) => void): void {
    if (this.core.volumeLive(volume)) this.core.forEachSlotOfVolume(volume, (p) => fn(pairState(this.core, p, this.clock.base)));
  }
  node(node: NodeId): NodeState | undefined {
    return nodeState(this.core, node);
  }
  volume(volume: VolumeId): VolumeState | undefined {
    return volumeState(this.core, volume);
  }
  nodeIds(after: number, limit: number): NodeId[] {
    return liveIds(this.core.nodes.highWater, after, limit, (id) => this.core.nodeLive(id));
  }
  volumeIds(after: number, limit: number): VolumeId[] {
    return liveIds(this.core.volumes.highWater, after, limit, (id) => this.core.volumeLive(id));
  }
  conflicts(): Array<{ volume: VolumeId; node: NodeId }> {
    return [...this.core.conflictSlots].map((p) => ({ volume: this.core.pairVolume(p), node: this.core.pairNode(p) }));
  }
  counts(): WorldCounts {
    const c = this.core;
    const k = c.counters;
    // A whole literal: a spread of the counters with three more fields gave each call hidden classes
    // of its own on Node 20 (src/kube/raw-write.ts, h2RequestOptions), ~23k in one short stand-in `npm run bench:http`.
    return {
      nodes: c.nodes.size, managedNodes: k.managedNodes, volumes: c.volumes.size, pairs: k.pairs, desiredPairs: k.desiredPairs,
      desiredAttached: k.desiredAttached, attached: k.attached, uncertain: k.uncertain, reportedAttached: k.reportedAttached,
      pendingOperations: k.pendingOperations, backoffOperations: k.backoffOperations, conflicts: c.conflictSlots.size,
      statusUpdatesNeeded: k.statusUpdatesNeeded,
    };
  }
  memoryUsage(): { sharedBytes: number; hostBytes: number } {
    // Host side: the payload bytes of the names, pod UIDs, volumesInUse lists and volume records.
    const c = this.core;
    return { sharedBytes: c.t.sizes().tableBytes, hostBytes: c.nodes.bytes + c.volumes.bytes + c.podFirst.bytes + c.inUse.bytes + c.records.bytes + c.devicePaths.bytes };
  }

  // ---- plan coordination ---------------------------------------------------------------------
  get planning(): boolean {
    return this.gate.planning;
  }
  whenIdle(fn: () => void): void {
    this.gate.whenIdle(fn);
  }
  kernelAccess(): KernelAccess {
    return this.gate.access(this.core.t.memory, this.clock, this.ops);
  }

  // ---- guards --------------------------------------------------------------------------------
  /** The node id, or -1 for a dead one (volume-wide questions do not need the node). */
  private liveOrNone(node: NodeId): number {
    return this.core.nodeLive(node) ? node : -1;
  }
  private slotOf(volume: VolumeId, node: NodeId): number {
    if (!this.core.volumeLive(volume) || !this.core.nodeLive(node)) return -1;
    return this.core.findPair(volume, node);
  }
  private nodeFlag(node: NodeId, bits: number, on: boolean): void {
    this.liveNode(node);
    const t = this.core.t;
    const before = t.nodeFlags[node];
    t.nodeFlags[node] = on ? before | bits : before & ~bits;
    if ((bits & NF_MANAGED) !== 0 && ((before & NF_MANAGED) !== 0) !== on) this.core.counters.managedNodes += on ? 1 : -1;
  }
  private assertIdle(): void {
    this.gate.assertIdle();
  }
  private liveNode(node: NodeId): void {
    this.assertIdle();
    if (!this.core.nodeLive(node)) this.dead('node', node);
  }
  private livePair(volume: VolumeId, node: NodeId): void {
    this.assertIdle();
    if (!this.core.nodeLive(node)) this.dead('node', node);
    if (!this.core.volumeLive(volume)) this.dead('volume', volume);
  }
  private liveVolume(volume: VolumeId): void {
    this.assertIdle();
    if (!this.core.volumeLive(volume)) this.dead('volume', volume);
  }
  private dead(kind: string, id: number): never {
    throw fleetError('FA_ERR_INTERNAL', `${kind} id ${id} is not live`);
  }
}

