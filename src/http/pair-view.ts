/**
 * PairView: one (volume, node) pair as the node, volume and conflict endpoints show it, built
 * from the WorldState tables and the InspectionView at request time. Cost per pair: O(1) plus
 * the pods listed (at most {@link MAX_PODS}) and, for multi-attach-forbidden volumes that wait
 * for an attachment elsewhere, one walk of the volume's pairs.
 */
import type { BackoffEntry, NodeId, PairState, PendingOperation, VolumeId, WorldState } from '../cache/world-state.js';
import { attachmentName } from '../plugins/csi/attachment-name.js';
import { readVolumeInfo, type InspectionOptions, type InspectionView, type VolumeInfo } from './inspection-view.js';
import type { PairView, PodView } from './schemas/common.js';
import { uncertainHolders } from '../reconciler/attach-hold.js';
import { diagnose, holderOf, type Diagnosis, type PairFacts } from './waiting-for.js';

/** Pods listed per pair; `podCount` has the total. */
export const MAX_PODS = 20;

/** What one request reads, with `now` fixed once so every age in a response agrees. */
export interface ReadContext {
  readonly state: WorldState;
  readonly view: InspectionView;
  readonly now: number;
  readonly options: InspectionOptions;
}

export function readContext(state: WorldState, view: InspectionView): ReadContext {
  return { state, view, now: view.now(), options: view.options };
}

/** The node facts the rules read (F5): name, health, out-of-service taint. */
export interface NodeFacts {
  readonly id: NodeId;
  readonly name: string;
  readonly healthy: boolean;
  readonly outOfService: boolean;
}

/** The volume facts shared by all pairs of a volume. */
export interface VolumeFacts {
  readonly id: VolumeId;
  readonly name: string;
  readonly forbidden: boolean;
  readonly info: VolumeInfo | undefined;
}

export function nodeFacts(state: WorldState, id: NodeId): NodeFacts | undefined {
  const n = state.node(id);
  return n && { id, name: n.name, healthy: n.healthy, outOfService: n.outOfService };
}

export function volumeFacts(state: WorldState, id: VolumeId): VolumeFacts {
  return { id, name: state.volumeName(id), forbidden: state.multiAttachForbidden(id), info: readVolumeInfo(state.volumeInfo(id)) };
}

export interface PairViewOptions {
  /** Confirmed attachments on other nodes, when the caller has them (else computed if needed). */
  readonly attachedElsewhere?: readonly string[];
  /** Include the VolumeAttachment name (a SHA-256 per pair: volume responses only). */
  readonly attachmentName?: boolean;
}

/** The pair as served. */
export function pairView(ctx: ReadContext, pair: PairState, node: NodeFacts, volume: VolumeFacts, opts: PairViewOptions = {}): PairView {
  const ops = pairOperations(ctx, volume.id, node.id);
  const { pending, backoff } = ops;
  const out: PairView = {
    volume: volume.name,
    node: node.name,
    desired: pair.desiredPods > 0,
    pods: pairPods(ctx, volume.id, node.id, pair.desiredPods),
    podCount: pair.desiredPods,
    attachState: pair.attachState,
    state: pending && pending.node === node.id ? (pending.op === 'attach' ? 'attaching' : 'detaching') : pair.attachState,
    mounted: pair.mounted,
    reportedAsAttached: pair.reportedAttached,
    multiAttachErrorReported: pair.multiAttachErrorReported,
  };
  if (pair.detachRequestedAt !== null) out.detachRequestedAgeMs = ctx.now - pair.detachRequestedAt;
  if (pending) {
    const on = pending.node === node.id ? node.name : safeNodeName(ctx.state, pending.node);
    out.operation = { op: pending.op, node: on, volumeWide: pending.volumeWide, ageMs: ctx.now - pending.startedAt };
  }
  if (backoff.length > 0) out.backoff = backoff.map((b) => ({ op: b.op, retryInMs: Math.max(0, b.retryAt - ctx.now), durationMs: b.durationMs }));
  const csi = opts.attachmentName ? volume.info?.csi : undefined;
  if (csi) out.attachmentName = attachmentName(csi.volumeHandle, csi.driver, node.name);
  // Desired, attached and reported is settled (G2, D6): there is no rule to explain.
  if (pair.desiredPods === 0 || pair.attachState !== 'attached' || !pair.reportedAttached) {
    const why = explainPair(ctx, pairFacts(ctx, pair, node, volume, opts.attachedElsewhere, ops), volume);
    if (why !== undefined) setDiagnosis(out, why);
  }
  return out;
}

/** Copies a diagnosis into a served item: `waitingFor`, `reason`, and `etaMs` or `etaWhy`. */
export function setDiagnosis(out: { waitingFor?: string; reason?: string; etaMs?: number; etaWhy?: string }, d: Diagnosis): void {
  out.waitingFor = d.sentence;
  out.reason = d.reason;
  if (d.etaMs !== undefined) out.etaMs = d.etaMs;
  else if (d.etaWhy !== undefined) out.etaWhy = d.etaWhy;
}

/** The pods wanting the pair, first {@link MAX_PODS}. */
export function pairPods(ctx: ReadContext, volume: VolumeId, node: NodeId, count: number): PodView[] {
  if (count === 0) return [];
  const uids = ctx.state.desiredPods(volume, node);
  const out: PodView[] = [];
  for (let i = 0; i < uids.length && i < MAX_PODS; i++) {
    const ref = ctx.view.podName(uids[i]);
    out.push(ref ? { uid: uids[i], namespace: ref.namespace, name: ref.name } : { uid: uids[i] });
  }
  return out;
}

/** The operation state of a pair (G1 pending, I3 backoff), read once per pair. */
export interface PairOperations {
  readonly pending: PendingOperation | undefined;
  readonly backoff: readonly BackoffEntry[];
}

export function pairOperations(ctx: ReadContext, volume: VolumeId, node: NodeId): PairOperations {
  return { pending: ctx.view.pendingOperation(volume, node), backoff: ctx.view.backoff(volume, node, ctx.now) };
}

export function pairFacts(
  ctx: ReadContext, pair: PairState, node: NodeFacts, volume: VolumeFacts,
  attachedElsewhere?: readonly string[], ops: PairOperations = pairOperations(ctx, volume.id, node.id),
): PairFacts {
  const desired = pair.desiredPods > 0;
  const pending = ops.pending;
  const needElsewhere = volume.forbidden && desired && pair.attachState !== 'attached';
  const lastError = volume.info?.lastError;
  return {
    node: node.name,
    healthy: node.healthy,
    outOfService: node.outOfService,
    desired,
    attachState: pair.attachState,
    mounted: pair.mounted,
    reportedAttached: pair.reportedAttached,
    detachRequestedAt: pair.detachRequestedAt,
    multiAttachForbidden: volume.forbidden,
    pending: pending && { op: pending.op, node: pending.node === node.id ? node.name : safeNodeName(ctx.state, pending.node), startedAt: pending.startedAt },
    backoff: ops.backoff,
    attachedElsewhere: attachedElsewhere ?? (needElsewhere ? confirmedNodes(ctx.state, volume.id, node.id) : []),
    uncertainElsewhere: needElsewhere ? uncertainHolders(ctx.state, volume.id, node.id).map((id) => safeNodeName(ctx.state, id)) : [],
    lastError: lastError && lastError.node === node.name ? lastError : undefined,
  };
}

/**
 * The pair's explanation; an attach held by another node (G3, or an Uncertain entry there:
 * attach-hold.ts) is followed by the explanation of that node's entry ("attach to b: attached
 * to a …; detach from a: still mounted, node healthy, will not force"), since that is what the
 * operator has to act on.
 */
export function explain(ctx: ReadContext, facts: PairFacts, volume: VolumeFacts): string | undefined {
  return explainPair(ctx, facts, volume)?.sentence;
}

/**
 * {@link explain} with its reason and ETA. A held attach keeps its own reason and takes the
 * holder's ETA (it moves when the holder lets go), or its own `etaWhy` when the holder has none.
 */
export function explainPair(ctx: ReadContext, facts: PairFacts, volume: VolumeFacts): Diagnosis | undefined {
  const own = diagnose(facts, ctx.now, ctx.options);
  const holderName = own === undefined ? undefined : holderOf(facts);
  if (own === undefined || holderName === undefined) return own;
  const holder = holderDiagnosis(ctx, holderName, volume);
  if (holder === undefined) return own;
  const sentence = `${own.sentence}; ${holder.sentence}`;
  return holder.etaMs !== undefined ? { reason: own.reason, sentence, etaMs: holder.etaMs }
    : { reason: own.reason, sentence, etaWhy: `${own.etaWhy ?? ''}: ${holder.etaWhy ?? 'unknown'}` };
}

/** The explanation of the holder's own pair, if the holder and the pair are still there. */
export function holderDiagnosis(ctx: ReadContext, holderName: string, volume: VolumeFacts): Diagnosis | undefined {
  const holderId = ctx.state.findNode(holderName);
  const holder = holderId === undefined ? undefined : nodeFacts(ctx.state, holderId);
  const pair = holder && ctx.state.pair(volume.id, holder.id);
  if (!holder || !pair) return undefined;
  return diagnose(pairFacts(ctx, pair, holder, volume, []), ctx.now, ctx.options);
}

/** Nodes other than `except` holding a confirmed attachment of the volume (D7). O(pairs of the volume). */
export function confirmedNodes(state: WorldState, volume: VolumeId, except: NodeId): string[] {
  const out: string[] = [];
  state.forEachPairOfVolume(volume, (p) => {
    if (p.node !== except && p.attachState === 'attached') out.push(state.nodeName(p.node));
  });
  return out;
}

/** The name of an operation's node, which may have been removed since (then `#<id>`). */
function safeNodeName(state: WorldState, id: NodeId): string {
  return state.node(id)?.name ?? `#${id}`;
}
