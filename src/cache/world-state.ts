/**
 * WorldState: the desired and actual state of world of the attach/detach controller, packed
 * into one shared `WebAssembly.Memory` so the plan kernel (src/kernel) can diff every
 * (volume, node) pair in one linear pass, on the main thread or in worker threads.
 *
 * Upstream keeps two stores (DSW and ASW, `cache/desired_state_of_world.go` and
 * `cache/actual_state_of_world.go`) plus the operation table of `nestedpendingoperations.go`.
 * Here they are one store, because the plan reads all three for every pair: a pair record
 * holds the desired pod count, the attach state, the mounted and reported flags and the detach
 * timer; volume and node records hold what the rules read per volume and per node. Rules are
 * cited as in docs/upstream-rules.md (C1, D3, I2, ...).
 *
 * Ids: node names and unique volume names are interned to dense integer ids (pods are kept by
 * UID inside their pair). An id stays valid while anything references it: a desired or actual
 * pair, a pending operation or backoff on its key, a pending status write (see each `intern*`).
 * After that it may be recycled for another name, so callers keep names, not ids, across
 * events, and re-intern (or `find*`) when an event arrives. A pending operation keeps its
 * volume (and, for (volume, node) keys, its pair and node) alive until completeOperation.
 * Using a dead id in a mutation, nodeName or volumeName throws FA_ERR_INTERNAL (a caller bug);
 * other queries answer as for an absent entry.
 *
 * Concurrency: the state lives on the main thread. While a plan runs (`planning` is true) the
 * worker threads read it, so every mutating method throws FA_ERR_KERNEL then; callers that
 * may run during a plan (informer event handlers) wrap their mutations in {@link WorldState.whenIdle}.
 * Read methods are always allowed.
 *
 * Cost: every mutation is O(1) amortised except where stated: a pair lookup checks the
 * volume's home slot and first pair (enough for every volume with one pair, see world-core.ts),
 * then walks the node's and the volume's pair lists in step and stops at the shorter; freeing a pair is O(1) on the volume's
 * list (doubly linked) and O(pairs of the node) on the node's (singly linked); node-wide calls
 * are O(pairs of the node). Counts are maintained incrementally: counts() is O(1).
 */
import type { KernelAccess } from './kernel-access.js';
import type { PluginTotalsRow } from './plugin-totals.js';

/** Dense id of a node name (0-based). */
export type NodeId = number;
/** Dense id of a unique volume name, `<plugin>/<volume>` (0-based). */
export type VolumeId = number;

/** ASW state of a pair (D1): Attached (confirmed), Uncertain (present, unconfirmed) or absent. */
export type AttachState = 'attached' | 'uncertain' | 'detached';
/** Operation names of the executor (I1: `volume_attach`, `volume_detach`). */
export type OperationKind = 'attach' | 'detach';
/** Result of {@link WorldState.tryStartOperation}: I2 refusal is `pending`, I3 refusal is `backoff`. */
export type StartResult = 'started' | 'pending' | 'backoff';
/** Result of {@link WorldState.addDesiredPod}. */
export type AddPodResult = 'added' | 'exists' | 'node-not-managed';
/**
 * The spec a desired entry keeps (§C): opaque to the state but for its name. The populator gives
 * the volume's resolved VolumeSpec (the attach sends it, J1/L2); a bare name does for callers
 * that need only the event texts.
 */
export type EntrySpec = string | { readonly name: string };

/** A snapshot of one pair for readers (HTTP, metrics, tests). Built on demand; never cached. */
export interface PairState {
  readonly volume: VolumeId;
  readonly node: NodeId;
  /** Number of pods wanting the pair (C1); 0 = not desired. */
  readonly desiredPods: number;
  /** H4: the Multi-Attach event was emitted for the current desired entry. */
  readonly multiAttachErrorReported: boolean;
  readonly attachState: AttachState;
  /** D3: the node's last observed volumesInUse lists the volume (or was never observed). */
  readonly mounted: boolean;
  /** D6: the volume is in the node's report set (written to status.volumesAttached). */
  readonly reportedAttached: boolean;
  /** D5: when the detach pass first saw the pair undesired (ms, host clock), or null. */
  readonly detachRequestedAt: number | null;
}

export interface NodeState {
  readonly id: NodeId;
  readonly name: string;
  readonly managed: boolean;
  readonly healthy: boolean;
  readonly outOfService: boolean;
  /** Null = volumesInUse never observed (D3: every pair counts as mounted). */
  readonly volumesInUse: readonly string[] | null;
  readonly statusUpdateNeeded: boolean;
  /** Pairs referencing the node (desired or actual). */
  readonly pairs: number;
}

export interface VolumeState {
  readonly id: VolumeId;
  readonly name: string;
  readonly multiAttachForbidden: boolean;
  /** Nodes holding a confirmed attachment (D7). */
  readonly attachedNodes: number;
  readonly pairs: number;
  readonly info: unknown;
}

/** A pending operation (I1 key plus the node it was started for). */
export interface PendingOperation {
  readonly volume: VolumeId;
  readonly node: NodeId;
  readonly op: OperationKind;
  /** True when the key is the volume alone (multi-attach forbidden, I1). */
  readonly volumeWide: boolean;
  readonly startedAt: number;
}

/** A backoff entry of an exact key (I3). `node` is the node of the last failure. */
export interface BackoffEntry {
  readonly volume: VolumeId;
  readonly node: NodeId;
  readonly op: OperationKind;
  readonly volumeWide: boolean;
  readonly lastErrorAt: number;
  readonly durationMs: number;
  /** First instant at which a retry is allowed: lastErrorAt + durationMs + 1 (I3 is `<=`). */
  readonly retryAt: number;
}

/** O(1) counters for /summary and metrics. */
export interface WorldCounts {
  readonly nodes: number;
  readonly managedNodes: number;
  readonly volumes: number;
  /** Live pair records (desired, actual, or holding operation state). */
  readonly pairs: number;
  readonly desiredPairs: number;
  /** Desired pairs whose attachment is confirmed: desiredPairs when every wanted volume is attached. */
  readonly desiredAttached: number;
  readonly attached: number;
  readonly uncertain: number;
  readonly reportedAttached: number;
  readonly pendingOperations: number;
  /** Backoff keys inside their window as of the last plan (windows are expired at plan start). */
  readonly backoffOperations: number;
  /** Desired pairs of multi-attach-forbidden volumes not attached here but confirmed elsewhere (G3). */
  readonly conflicts: number;
  readonly statusUpdatesNeeded: number;
}

export interface WorldState {
  // ---- interning -------------------------------------------------------------------------
  /** Id of a node name, created if absent (not managed, unhealthy, no out-of-service taint,
   * volumesInUse never observed, report set unused). Interning a removed node's name again
   * revives that node. A removed node's id is recycled once no pair references it and no
   * status write is pending; the name then starts fresh. */
  internNode(name: string): NodeId;
  /** Id of a node name, or undefined; never creates. */
  findNode(name: string): NodeId | undefined;
  /** Name of a live node id; throws FA_ERR_INTERNAL for a dead id. */
  nodeName(node: NodeId): string;
  /** Id of a unique volume name, created if absent (multi-attach allowed, no info). The id is
   * recycled when its last pair goes and no volume-wide operation or backoff remains; an id
   * that never got a pair stays until {@link releaseVolume}. */
  internVolume(uniqueName: string): VolumeId;
  findVolume(uniqueName: string): VolumeId | undefined;
  volumeName(volume: VolumeId): string;
  /** Frees a volume id that nothing references; no-op (returns false) otherwise. */
  releaseVolume(volume: VolumeId): boolean;

  // ---- nodes -----------------------------------------------------------------------------
  /** B1: the node carries the managed annotation. There is no way back but {@link removeNode}:
   * B2 says removing the annotation does not unmanage a node. */
  setNodeManaged(node: NodeId): void;
  /** Healthy = Ready condition True (F5). */
  setNodeHealthy(node: NodeId, healthy: boolean): void;
  /** The `node.kubernetes.io/out-of-service` taint key is present (F5). */
  setNodeOutOfService(node: NodeId, outOfService: boolean): void;
  /** D3: the node's latest `status.volumesInUse` as unique volume names, or null for never
   * observed. Names, not ids, so that volumes not (yet) interned need no id: a pair created
   * later takes its mounted flag from this set. Updates the mounted flag of every pair on the
   * node. O(pairs of the node + names). */
  setVolumesInUse(node: NodeId, uniqueNames: readonly string[] | null): void;
  /** B2 (Node delete event): refused (returns false, nothing changes yet) while pods want
   * volumes on the node; the removal then happens when the last of them goes, unless the node
   * is interned again first (its object is back). Upstream never retries it: on a fleet whose
   * nodes come and go under new names that keeps every such node for the life of the process.
   * Removed, the node becomes unmanaged, unhealthy and untainted; its actual pairs and
   * volumesInUse stay (D4), and its id is recycled when its last pair goes. */
  removeNode(node: NodeId): boolean;
  /** B4/K4: flags the node for a status write if its report set was ever used; returns whether
   * the flag is now set. */
  setStatusUpdateNeeded(node: NodeId): boolean;
  /** K3: the status writer took the node ("reading the set clears the flag"). */
  clearStatusUpdateNeeded(node: NodeId): void;
  statusUpdateNeeded(node: NodeId): boolean;
  /** K3 at the end of a pass: every flagged node, including those flagged since the plan
   * started (plan.statusNodes is the snapshot at plan start). O(nodes), about 0.1 ms per 100k. */
  nodesNeedingStatusUpdate(): NodeId[];
  /** K1: volumes in the node's report set, in no particular order. */
  volumesToReport(node: NodeId): VolumeId[];

  // ---- volumes ---------------------------------------------------------------------------
  /** H1. Changing it does not move pending operations between keys (I1 is decided at start). */
  setMultiAttachForbidden(volume: VolumeId, forbidden: boolean): void;
  multiAttachForbidden(volume: VolumeId): boolean;
  /** Opaque host-side metadata (plugin, spec name, PV name, VA info); dropped with the id. Kept
   * as bytes: an object is stored as its JSON (a VolumeInfo as its spec, plugin, unique name
   * and last error, see src/cache/volume-records.ts) and read back as an equal, fresh copy. */
  setVolumeInfo(volume: VolumeId, info: unknown): void;
  volumeInfo(volume: VolumeId): unknown;
  /**
   * The volume's plugin label for the per-plugin totals (O: `kubernetes.io/csi:<driver>`, or the
   * in-tree plugin's name); undefined while the volume has no spec, which leaves it uncounted.
   */
  setVolumePlugin(volume: VolumeId, plugin: string | undefined): void;
  /** Desired and actual (Attached or Uncertain) pairs per plugin label, labels with any; O(labels). */
  pluginTotals(): PluginTotalsRow[];

  // ---- desired state (C1, H4) ------------------------------------------------------------
  /** Adds pod `podUid` to the pair's pod set. Refused when the node is not managed (B3). A new
   * desired entry starts with multiAttachErrorReported false and takes `spec` (the pod's resolved
   * spec, or just its name: the PV name or the pod's volume name) as its own for as long as it
   * lives: upstream's DSW keeps the spec per (U,node) entry, from the pod that added it; the
   * entry's attach sends it and the per-pod events of the entry quote its name (§C, H3, J1, L2).
   * Later pods of the entry do not change it. Specs are kept as their JSON and compared by value.
   * Memory: an entry whose spec equals the volume's first costs nothing; only one given another
   * spec keeps it in a map. */
  addDesiredPod(volume: VolumeId, node: NodeId, podUid: string, spec?: EntrySpec): AddPodResult;
  /** Removes the pod; when the set empties the entry goes, clearing multiAttachErrorReported
   * (H4). Returns false (no-op) when the pod was not in the set. */
  removeDesiredPod(volume: VolumeId, node: NodeId, podUid: string): boolean;
  /** Whether pod `podUid` is in the pair's pod set (no copy of the set). */
  hasDesiredPod(volume: VolumeId, node: NodeId, podUid: string): boolean;
  /** Pod UIDs of the pair, in insertion order; empty when not desired. */
  desiredPods(volume: VolumeId, node: NodeId): string[];
  /** The spec the desired entry was created with (one created without a spec reads the first
   * spec an entry of its volume was given), as a fresh copy equal to it; undefined when the pair
   * is not desired or no spec was given. O(1) beside the pair lookup and the decode. */
  desiredSpec(volume: VolumeId, node: NodeId): EntrySpec | undefined;
  /** The name of {@link desiredSpec}. */
  specName(volume: VolumeId, node: NodeId): string | undefined;
  /** H4; no-op when the pair is not desired. */
  setMultiAttachErrorReported(volume: VolumeId, node: NodeId): void;

  // ---- actual state (D2, D5, D6, F8, F10) ------------------------------------------------
  /**
   * D2 attach success / start-up: Attached; added to the report set (flags the node if new).
   * `devicePath` (A2: from node status; an attach: the plugin's, '' here) becomes the volume's.
   */
  markAttached(volume: VolumeId, node: NodeId, devicePath?: string): void;
  /** D2 attach/detach failure, start-up VA: Uncertain; removed from the report set if there. The volume's devicePath becomes ''. */
  markUncertain(volume: VolumeId, node: NodeId): void;
  /** K1: the devicePath the volume's node status entries carry ('' unless node status gave one, A2). */
  devicePath(volume: VolumeId): string;
  /** D2 detach success / verification: the actual entry (state, timer, report membership) goes.
   * No-op when absent. */
  markDetached(volume: VolumeId, node: NodeId): void;
  /** F8: returns false (no-op) when the volume was not in the node's report set. */
  removeFromReportSet(volume: VolumeId, node: NodeId): boolean;
  /** F10: only for an Attached pair; returns whether it was added. */
  addToReportSet(volume: VolumeId, node: NodeId): boolean;
  attachState(volume: VolumeId, node: NodeId): AttachState;
  /** D5 timer (ms, host clock) or null. */
  detachRequestedAt(volume: VolumeId, node: NodeId): number | null;
  resetDetachTimer(volume: VolumeId, node: NodeId): void;

  // ---- operations (I1-I4) ----------------------------------------------------------------
  /** I1 key: the volume when multi-attach is forbidden, else (volume, node). I2: refused when a
   * matching key is pending (volume-wide matches every key of the volume). I3: refused while
   * the exact (key, op) failed less than its backoff ago (`now - lastError <= duration`). */
  tryStartOperation(volume: VolumeId, node: NodeId, op: OperationKind, now: number): StartResult;
  /** Ends the operation started for (volume, node, op); a volume-wide key is matched by volume
   * and op alone, and releases the pair it held on the node it started on (PF_OP_HOLD), whatever
   * `node` says. ok: deletes the key's backoff (both op names).
   * Failure: that (key, op) backs off 500 ms, doubling per consecutive failure, capped at
   * 2 min 2 s. Returns false (no-op) when no such operation is pending. */
  completeOperation(volume: VolumeId, node: NodeId, op: OperationKind, ok: boolean, now: number): boolean;
  /** Ends a started operation that never reached the API (F8: its node's status write failed):
   * the key is free again and its backoff is left as it was. False when none is pending. */
  releaseOperation(volume: VolumeId, node: NodeId, op: OperationKind): boolean;
  /** I4 / F2: false while the exact key is pending or (key, op) is inside its backoff window. */
  isSafeToRetry(volume: VolumeId, node: NodeId, op: OperationKind, now: number): boolean;
  /** G1: for allowed volumes an operation on (volume, node) or volume-wide; for forbidden ones
   * any operation on the volume. The reconciler re-checks this before emitting a conflict. */
  isOperationPending(volume: VolumeId, node: NodeId): boolean;
  pendingOperations(): PendingOperation[];
  /** The pending operation G1 matches for (volume, node) (volume-wide key first). O(1) but for
   * a forbidden volume with pair-keyed operations. */
  pendingOperationFor(volume: VolumeId, node: NodeId): PendingOperation | undefined;
  /** Backoff windows open at `now` on the keys (volume, node) uses, both operations. O(1). */
  backoffFor(volume: VolumeId, node: NodeId, now: number): BackoffEntry[];
  /** Keys inside their backoff window at `now`. */
  backoffOperations(now: number): BackoffEntry[];

  // ---- readers ---------------------------------------------------------------------------
  pair(volume: VolumeId, node: NodeId): PairState | undefined;
  forEachPairOfNode(node: NodeId, fn: (pair: PairState) => void): void;
  forEachPairOfVolume(volume: VolumeId, fn: (pair: PairState) => void): void;
  node(node: NodeId): NodeState | undefined;
  volume(volume: VolumeId): VolumeState | undefined;
  /** Live node ids greater than `after` (-1 to start), ascending, at most `limit`. */
  nodeIds(after: number, limit: number): NodeId[];
  volumeIds(after: number, limit: number): VolumeId[];
  /** Desired pairs currently in multi-attach conflict (G3), unordered. */
  conflicts(): Array<{ volume: VolumeId; node: NodeId }>;
  counts(): WorldCounts;
  /** Bytes of packed state (shared memory tables) and of host-side typed arrays. */
  memoryUsage(): { sharedBytes: number; hostBytes: number };

  // ---- plan coordination -----------------------------------------------------------------
  /** True while a plan reads the state; mutations throw then. */
  readonly planning: boolean;
  /** Runs `fn` now when no plan runs, else right after the running plan ends (FIFO). Errors
   * thrown by a deferred `fn` are logged and dropped. */
  whenIdle(fn: () => void): void;
  /** For src/kernel only: the memory, the layout and the plan hooks. */
  kernelAccess(): KernelAccess;
}

export { createWorldState, type WorldStateOptions } from './world-state-impl.js';
