/**
 * Node responses: a page of node summaries and one node's detail, read from the state tables at
 * request time. Cost: O(pairs of the node) per node; a page examines at most
 * {@link MAX_SCANNED} ids, so a filtered page may come back short with a `continue` token.
 */
import type { NodeId, NodeState } from '../cache/world-state.js';
import { encodeContinue } from './continue-token.js';
import { pairView, volumeFacts, type ReadContext } from './pair-view.js';
import type { NodeDetail, NodeFilter, NodeList, NodeSummary } from './schemas/nodes.js';

/** Node ids a filtered page examines at most. */
export const MAX_SCANNED = 2000;

export function nodeSummary(ctx: ReadContext, node: NodeState): NodeSummary {
  let desired = 0;
  let attached = 0;
  let uncertain = 0;
  ctx.state.forEachPairOfNode(node.id, (p) => {
    if (p.desiredPods > 0) desired++;
    if (p.attachState === 'attached') attached++;
    else if (p.attachState === 'uncertain') uncertain++;
  });
  return {
    name: node.name,
    managed: node.managed,
    healthy: node.healthy,
    outOfService: node.outOfService,
    statusUpdateNeeded: node.statusUpdateNeeded,
    desired,
    attached,
    uncertain,
  };
}

export function nodeDetail(ctx: ReadContext, node: NodeState): NodeDetail {
  const facts = { id: node.id, name: node.name, healthy: node.healthy, outOfService: node.outOfService };
  const volumes: NodeDetail['volumes'] = [];
  let desired = 0;
  let attached = 0;
  let uncertain = 0;
  ctx.state.forEachPairOfNode(node.id, (pair) => {
    if (pair.desiredPods > 0) desired++;
    if (pair.attachState === 'attached') attached++;
    else if (pair.attachState === 'uncertain') uncertain++;
    volumes.push(pairView(ctx, pair, facts, volumeFacts(ctx.state, pair.volume)));
  });
  const out: NodeDetail = {
    name: node.name,
    managed: node.managed,
    healthy: node.healthy,
    outOfService: node.outOfService,
    statusUpdateNeeded: node.statusUpdateNeeded,
    desired,
    attached,
    uncertain,
    volumes,
  };
  if (node.volumesInUse !== null) out.volumesInUse = node.volumesInUse as string[];
  return out;
}

function matches(ctx: ReadContext, id: NodeId, filter: NodeFilter | undefined): NodeState | undefined {
  if (filter === 'status-pending' && !ctx.state.statusUpdateNeeded(id)) return undefined;
  const node = ctx.state.node(id);
  if (node === undefined || filter === undefined || filter === 'status-pending') return node;
  switch (filter) {
    case 'healthy': return node.healthy ? node : undefined;
    case 'unhealthy': return node.healthy ? undefined : node;
    case 'out-of-service': return node.outOfService ? node : undefined;
    case 'unmanaged': return node.managed ? undefined : node;
  }
}

/**
 * The dashboard's offset window over every node matching `filter` and the name prefix, in id
 * order, with the total of matches. O(nodes) per call (a pass over the ids, no copy of the
 * fleet): at 100k nodes a few milliseconds, which a scrolled window may cost.
 */
export function nodeWindow(ctx: ReadContext, offset: number, limit: number, prefix: string, filter: NodeFilter | undefined): { total: number; offset: number; items: NodeSummary[] } {
  const items: NodeSummary[] = [];
  let total = 0;
  for (let ids = ctx.state.nodeIds(-1, 4096); ids.length > 0; ids = ctx.state.nodeIds(ids[ids.length - 1]!, 4096)) {
    for (const id of ids) {
      const node = matches(ctx, id, filter);
      if (node === undefined || (prefix !== '' && !node.name.startsWith(prefix))) continue;
      if (total >= offset && items.length < limit) items.push(nodeSummary(ctx, node));
      total++;
    }
  }
  return { total, offset, items };
}

/** One page of nodes after id `after` (-1 for the first page). */
export function listNodes(ctx: ReadContext, after: number, limit: number, filter: NodeFilter | undefined): NodeList {
  const items: NodeSummary[] = [];
  let cursor = after;
  let scanned = 0;
  while (items.length < limit && scanned < MAX_SCANNED) {
    const ids = ctx.state.nodeIds(cursor, Math.min(limit - items.length, MAX_SCANNED - scanned));
    if (ids.length === 0) return { items };
    for (const id of ids) {
      const node = matches(ctx, id, filter);
      if (node) items.push(nodeSummary(ctx, node));
      cursor = id;
    }
    scanned += ids.length;
  }
  // A full page (or an exhausted scan budget) may have more after it.
  const more = ctx.state.nodeIds(cursor, 1).length > 0;
  return more ? { items, continue: encodeContinue('nodes', cursor, filter) } : { items };
}
