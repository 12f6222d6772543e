/**
 * Volume responses: one volume with its pairs, and pages of volumes. Cost: O(pairs of the
 * volume) to count and find confirmed attachments, plus a PairView for each node listed (at
 * most `limit`).
 */
import type { PairState, VolumeId } from '../cache/world-state.js';
import { encodeContinue } from './continue-token.js';
import { nodeFacts, pairView, volumeFacts, type ReadContext } from './pair-view.js';
import type { PairView } from './schemas/common.js';
import type { VolumeDetail, VolumeList } from './schemas/volumes.js';

/** Nodes listed per volume in a volume listing (the detail endpoint takes `limit`). */
export const NODES_PER_LISTED_VOLUME = 20;

export function volumeDetail(ctx: ReadContext, id: VolumeId, limit: number): VolumeDetail {
  const { state } = ctx;
  const facts = volumeFacts(state, id);
  const listed: PairState[] = [];
  const attachedIds: number[] = [];
  let count = 0;
  state.forEachPairOfVolume(id, (p) => {
    count++;
    if (listed.length < limit) listed.push(p);
    if (p.attachState === 'attached') attachedIds.push(p.node);
  });
  const attachedTo = attachedIds.slice(0, limit).map((n) => state.nodeName(n));
  const nodes: PairView[] = [];
  for (const pair of listed) {
    const node = nodeFacts(state, pair.node);
    if (node === undefined) continue;
    const elsewhere = facts.forbidden ? attachedTo.filter((n) => n !== node.name) : [];
    nodes.push(pairView(ctx, pair, node, facts, { attachedElsewhere: elsewhere, attachmentName: true }));
  }
  const info = facts.info;
  const out: VolumeDetail = {
    name: facts.name,
    accessModes: info ? [...info.accessModes] : [],
    multiAttach: facts.forbidden ? 'forbidden' : 'allowed',
    attachedTo,
    nodeCount: count,
    nodes,
  };
  if (info) {
    out.specName = info.specName;
    out.plugin = info.plugin;
    out.migrated = info.migrated;
    if (info.pvName !== undefined) out.pvName = info.pvName;
    if (info.csi) out.driver = info.csi.driver;
    if (info.lastError) out.lastError = { ...info.lastError, ageMs: ctx.now - info.lastError.at };
  }
  let retryIn = -1;
  for (const n of nodes) for (const b of n.backoff ?? []) retryIn = Math.max(retryIn, b.retryInMs);
  if (retryIn >= 0) out.backoffRetryInMs = retryIn;
  const why = summarise(nodes);
  if (why !== undefined) out.waitingFor = why;
  return out;
}

/**
 * The volume's one line: an attach that waits (it names the holder's reason too) before a
 * detach that waits, then "(+N more)".
 */
function summarise(nodes: readonly PairView[]): string | undefined {
  const lines = nodes.filter((n) => n.waitingFor !== undefined);
  if (lines.length === 0) return undefined;
  const first = lines.find((n) => n.desired) ?? lines[0];
  return lines.length === 1 ? first.waitingFor : `${first.waitingFor} (+${lines.length - 1} more)`;
}

/** A page of volumes after id `after` (-1 for the first page). */
export function listVolumes(ctx: ReadContext, after: number, limit: number): VolumeList {
  const ids = ctx.state.volumeIds(after, limit);
  const items = ids.map((id) => volumeDetail(ctx, id, NODES_PER_LISTED_VOLUME));
  const last = ids.length > 0 ? ids[ids.length - 1] : after;
  const more = ids.length === limit && ctx.state.volumeIds(last, 1).length > 0;
  return more ? { items, continue: encodeContinue('volumes', last) } : { items };
}

/** The volumes of PersistentVolume `pv` (normally one). */
export function volumesOfPv(ctx: ReadContext, pv: string, limit: number): VolumeList {
  const items: VolumeDetail[] = [];
  for (const name of ctx.view.volumesForPv(pv)) {
    const id = ctx.state.findVolume(name);
    if (id !== undefined) items.push(volumeDetail(ctx, id, limit));
  }
  return { items };
}
