/**
 * Node events (B1–B4, D3–D4): a Node add or update sets the node's flags and volumesInUse in the
 * world state; a delete keeps the node while pods still want volumes on it (B2), and removes it
 * when they are gone.
 */
import type { WorldState } from '../cache/world-state.js';
import type { NodeRecord } from '../kube/projections/index.js';
import type { Logger } from '../log/logger.js';
import type { NodeConditionCounter } from './node-condition-counter.js';

export function applyNodeRecord(state: WorldState, conditions: NodeConditionCounter | undefined, n: NodeRecord, isAdd: boolean): void {
  const id = state.internNode(n.name);
  if (n.managed) state.setNodeManaged(id); // B2: never unmanaged by an update
  state.setNodeHealthy(id, n.ready);
  state.setNodeOutOfService(id, n.outOfService);
  state.setVolumesInUse(id, n.volumesInUse);
  conditions?.set(n.name, n.managed, n.ready, n.outOfService);
  if (isAdd) state.setStatusUpdateNeeded(id); // B4 (only takes effect if the node's report set was used)
}

export function deleteNodeRecord(state: WorldState, conditions: NodeConditionCounter | undefined, n: NodeRecord, log: Logger): void {
  const id = state.findNode(n.name);
  if (id === undefined) return;
  state.setVolumesInUse(id, n.volumesInUse); // D4: the deleted object's last volumesInUse stays
  state.setNodeHealthy(id, false); // an absent node is unhealthy
  state.setNodeOutOfService(id, false); // F5: node lookup error ⇒ no taint
  conditions?.delete(n.name);
  if (!state.removeNode(id)) log.info({ node: n.name }, 'node deleted but pods still want volumes on it; removed when they are gone (B2)');
}
