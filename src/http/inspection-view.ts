/**
 * InspectionView: what the inspection API reads that is not in the WorldState tables. The
 * controller implements it (readiness, loop timings, watch health, indexes it keeps anyway);
 * the HTTP layer only reads it, on the main thread, between and during plans.
 *
 * Every method is a read and must be cheap: O(1), or O(answer) where the doc says so. None may
 * copy the world, block, or throw for an unknown id (return undefined / an empty list instead).
 *
 * Times are milliseconds on the controller's host clock: the clock whose `now` is passed to the
 * planner and to the operation table, so that `now() - detachRequestedAt` is the D5 timer age.
 */
import type { BackoffEntry, NodeId, OperationKind, PendingOperation, VolumeId } from '../cache/world-state.js';
import type { DurationWindow } from '../metrics/duration-window.js';
import type { AccessMode } from '../plugins/volume-spec.js';

/** `single` = leader election disabled (one replica acts). */
export type ReplicaRole = 'leader' | 'standby' | 'single' | 'shard';

export interface Readiness {
  /** Watches synced, start-up population (A1-A4) done, reconcile passes not failing in a row. */
  readonly ready: boolean;
  /** Why not ready (e.g. "waiting for the pods watch to sync"); shown verbatim in /readyz. */
  readonly reason?: string;
  readonly role: ReplicaRole;
}

/** Health of one list+watch (reflector) per resource, since process start. */
export interface WatchHealth {
  /** Resource name, e.g. `nodes`, `pods`, `volumeattachments`. */
  readonly resource: string;
  readonly synced: boolean;
  readonly events: number;
  readonly relists: number;
  readonly restarts: number;
  /** Age of the last event or bookmark; undefined before the first one. */
  readonly lastEventAgeMs?: number;
}

/** The reconcile loop's recent durations (ms): a whole pass, and the plan inside it. */
export interface LoopTimings {
  readonly pass: DurationWindow;
  readonly plan: DurationWindow;
}

/**
 * The controller's Kubernetes API client right now: requests on the wire and waiting for a
 * slot, against their bounds. `waiting` at `admissionBound` means the reconciler starts nothing
 * new: the API server takes less than the controller has to send.
 */
export interface ApiClientLoad {
  readonly inFlight: number;
  readonly waiting: number;
  /** `--kube-api-max-in-flight`. */
  readonly maxInFlight: number;
  /** `--max-api-backlog`: no operation starts while more requests than this wait. */
  readonly admissionBound: number;
}

/** The controller options `waitingFor` explanations depend on (F4-F6, P2). */
export interface InspectionOptions {
  readonly maxWaitForUnmountMs: number;
  readonly disableForceDetachOnTimeout: boolean;
}

/** The last failed attach or detach of a volume (J2/J3), for operators. */
export interface OperationError {
  readonly op: OperationKind;
  readonly node: string;
  /** The upstream failure text (as in the FailedAttachVolume event). Must not contain secrets. */
  readonly message: string;
  /** Host-clock ms of the failure. */
  readonly at: number;
}

/**
 * Host-side metadata of a volume, stored by the controller with `state.setVolumeInfo(volume, info)`
 * when it resolves the volume's spec, and read by the HTTP layer with {@link readVolumeInfo}.
 * Volumes known only from node status (A2/A5: no spec yet) may have none.
 */
export interface VolumeInfo {
  /** Spec name (vocabulary §1): PV name, or the pod volume name for inline volumes. */
  readonly specName: string;
  /** PV name for PV-backed (and migrated inline) specs. */
  readonly pvName?: string;
  /** The metrics plugin label, e.g. `kubernetes.io/csi:ebs.csi.aws.com` (J4). */
  readonly plugin: string;
  /** CSI driver and handle: the VolumeAttachment name per node is derived from them (L1). */
  readonly csi?: { readonly driver: string; readonly volumeHandle: string };
  /** The PV's access modes (empty for inline volumes); H1 reads them. */
  readonly accessModes: readonly AccessMode[];
  /** Translated from an in-tree source (C6). */
  readonly migrated: boolean;
  readonly lastError?: OperationError;
}

/** A pod's name, for showing the pods that want a volume (DSW keeps only UIDs). */
export interface PodRef {
  readonly namespace: string;
  readonly name: string;
}

/** Node condition counts for /summary, O(1) (maintained by whoever applies Node events). */
export interface NodeConditionCounts {
  /** Managed nodes whose Ready condition is True. */
  readonly healthy: number;
  /** Nodes carrying the `node.kubernetes.io/out-of-service` taint. */
  readonly outOfService: number;
}

export interface InspectionView {
  readiness(): Readiness;
  readonly loop: LoopTimings;
  /** One entry per watched resource; O(resources). */
  watches(): readonly WatchHealth[];
  /** Unique volume names whose spec is PV `pvName` (normally one); O(answer). */
  volumesForPv(pvName: string): readonly string[];
  /** The pod with this UID, or undefined when the pod is no longer known. O(1). */
  podName(uid: string): PodRef | undefined;
  /**
   * The pending operation that blocks (volume, node) under G1 matching: the pair's own key, or
   * the volume-wide key (multi-attach forbidden: any node of the volume). O(1).
   */
  pendingOperation(volume: VolumeId, node: NodeId): PendingOperation | undefined;
  /** I3: backoff windows still open at `now` on the keys (volume, node) uses: the pair key and
   * the volume-wide key, either operation name. O(1). */
  backoff(volume: VolumeId, node: NodeId, now: number): readonly BackoffEntry[];
  nodeConditionCounts(): NodeConditionCounts;
  /** O(1). */
  apiClient(): ApiClientLoad;
  /** Host-clock ms (see the module header). */
  now(): number;
  readonly options: InspectionOptions;
}

const ACCESS_MODES: ReadonlySet<string> = new Set(['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod']);

/**
 * The VolumeInfo stored for a volume, or undefined when none was stored or the stored value
 * is not a VolumeInfo (the state keeps it as `unknown`; a malformed value is ignored, not served).
 */
export function readVolumeInfo(stored: unknown): VolumeInfo | undefined {
  if (typeof stored !== 'object' || stored === null) return undefined;
  const v = stored as Partial<Record<keyof VolumeInfo, unknown>>;
  if (typeof v.specName !== 'string' || typeof v.plugin !== 'string' || typeof v.migrated !== 'boolean') return undefined;
  if (!Array.isArray(v.accessModes) || !v.accessModes.every((m) => typeof m === 'string' && ACCESS_MODES.has(m))) return undefined;
  return stored as VolumeInfo;
}
