/**
 * Conflict responses: one desired pair blocked by a confirmed attachment elsewhere (G3), with
 * the holder side the detach rules read (health, out-of-service taint, mounted, detach timer)
 * and a conflict class. Cost: O(pairs of the volume) per conflict, conflicts walked from the
 * maintained set.
 */
import type { NodeId, PairState, VolumeId } from '../cache/world-state.js';
import { confirmedNodes, explainPair, holderDiagnosis, nodeFacts, pairFacts, pairPods, setDiagnosis, volumeFacts, type NodeFacts, type ReadContext, type VolumeFacts } from './pair-view.js';
import type { ConflictList } from './schemas/operations.js';

type ConflictItem = ConflictList['items'][number];
type Holder = NonNullable<ConflictItem['holder']>;

/** A mounted holder pair whose detach timer is older than this is a kubelet problem, not a rollout race. */
export const ROLLOUT_RACE_MS = 60_000;

export function conflicts(ctx: ReadContext, limit: number): ConflictList {
  const all = ctx.state.conflicts();
  const items: ConflictItem[] = [];
  for (const { volume, node } of all) {
    if (items.length >= limit) break;
    const item = conflictItem(ctx, volume, node);
    if (item) items.push(item);
  }
  return { total: all.length, items };
}

export function conflictItem(ctx: ReadContext, volume: VolumeId, node: NodeId): ConflictItem | undefined {
  const pair = ctx.state.pair(volume, node);
  const nf = nodeFacts(ctx.state, node);
  if (!pair || !nf) return undefined;
  const vf = volumeFacts(ctx.state, volume);
  const attachedTo = confirmedNodes(ctx.state, volume, node);
  const item: ConflictItem = {
    volume: vf.name,
    node: nf.name,
    attachedTo,
    pods: pairPods(ctx, volume, node, pair.desiredPods),
    podCount: pair.desiredPods,
    multiAttachErrorReported: pair.multiAttachErrorReported,
  };
  if (vf.info) item.specName = vf.info.specName;
  const why = explainPair(ctx, pairFacts(ctx, pair, nf, vf, attachedTo), vf);
  if (why !== undefined) setDiagnosis(item, why);
  const holder = attachedTo.length > 0 ? holderOf(ctx, attachedTo[0], vf) : undefined;
  if (holder) {
    item.holder = holder;
    item.class = conflictClass(holder);
  }
  return item;
}

function holderOf(ctx: ReadContext, name: string, volume: VolumeFacts): Holder | undefined {
  const id = ctx.state.findNode(name);
  const nf: NodeFacts | undefined = id === undefined ? undefined : nodeFacts(ctx.state, id);
  const pair: PairState | undefined = nf && ctx.state.pair(volume.id, nf.id);
  if (!nf || !pair) return undefined;
  const out: Holder = {
    node: nf.name, healthy: nf.healthy, outOfService: nf.outOfService, mounted: pair.mounted,
    desired: pair.desiredPods > 0, podCount: pair.desiredPods,
  };
  if (pair.detachRequestedAt !== null) out.detachTimerAgeMs = ctx.now - pair.detachRequestedAt;
  const d = holderDiagnosis(ctx, name, volume);
  if (d) {
    out.reason = d.reason;
    if (d.etaMs !== undefined) out.detachInMs = d.etaMs;
    else if (d.etaWhy !== undefined) out.detachWhyNot = d.etaWhy;
  } else if (out.desired) {
    out.detachWhyNot = 'pods on the holder still want the volume (F1)';
  }
  return out;
}

/** The conflict class (docs/dashboard.md): what the operator has to act on. */
export function conflictClass(h: Holder): NonNullable<ConflictItem['class']> {
  if (!h.healthy || h.outOfService) return 'holder-node-down';
  if (h.desired) return 'two-live-consumers';
  if (h.mounted && (h.detachTimerAgeMs ?? 0) >= ROLLOUT_RACE_MS) return 'holder-still-mounted';
  return 'rollout-race';
}
