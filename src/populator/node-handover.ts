/**
 * NodeHandover: what a replica does to its state when its share of the nodes changes (several
 * replicas, each acting for the nodes of the buckets it holds: src/sharding).
 *
 * - `adopt`: the start-up fill (A2–A4) for the adopted nodes only: their actual state from
 *   their `status.volumesAttached` (Attached) and their VolumeAttachments (Uncertain), then
 *   their pods into the desired state. The reconciler's next pass then detaches first, as after
 *   a restart. Every replica watches every object, so this reads the warm caches and sends no
 *   request.
 * - `release`: hands nodes over only once they are quiet: no operation pending on any of their
 *   pairs, no status write wanted or under way. Until then it answers `busy` and changes nothing
 *   (the caller has stopped starting operations there and asks again). Quiet, the nodes leave
 *   the state at once, their pods, pairs and report sets with them, without any API call: what
 *   the API holds (the status this replica wrote last, the VolumeAttachments) is what the next
 *   owner rebuilds from.
 *
 * Selections are predicates over node names (`on`), so a change of many buckets is one walk.
 */
import type { NodeId, WorldState } from '../cache/world-state.js';
import type { NodeRecord, PvRecord, VolumeAttachmentRecord } from '../kube/projections/index.js';
import type { CsiTranslator, VolumePluginManager } from '../plugins/index.js';
import type { Logger } from '../log/logger.js';
import { loadActualState } from './actual-state-loader.js';
import type { DesiredStatePopulator } from './desired-state-populator.js';
import type { NodeConditionCounter } from './node-condition-counter.js';

export type NodeSelection = (nodeName: string) => boolean;

export interface NodeHandoverDeps {
  state: WorldState;
  populator: Pick<DesiredStatePopulator, 'processPodsOn' | 'forgetPodsOn'>;
  nodes: { values(): Iterable<NodeRecord> };
  volumeAttachments: { values(): Iterable<VolumeAttachmentRecord> };
  pv(name: string): PvRecord | undefined;
  plugins: VolumePluginManager;
  translator: CsiTranslator;
  conditions?: NodeConditionCounter;
  /** Whether a status write to the node is on the wire (the status updater's). */
  writingStatus(nodeName: string): boolean;
  log: Logger;
}

export interface AdoptResult {
  nodes: number;
  attached: number;
  uncertain: number;
  /** False when `cancelled` stopped the pods' pass. */
  complete: boolean;
}

export interface NodeHandover {
  adopt(on: NodeSelection, cancelled: () => boolean): Promise<AdoptResult>;
  /** `released` once the selected nodes were quiet and left the state; `busy` (nothing changed) otherwise. */
  release(on: NodeSelection): Promise<{ outcome: 'released' | 'busy'; nodes: number; pods: number; reason?: string }>;
}

export function createNodeHandover(deps: NodeHandoverDeps): NodeHandover {
  return new Handover(deps);
}

class Handover implements NodeHandover {
  constructor(private readonly d: NodeHandoverDeps) {}

  async adopt(on: NodeSelection, cancelled: () => boolean): Promise<AdoptResult> {
    const d = this.d;
    let nodes = 0;
    const loaded = await this.idle(() =>
      loadActualState({
        state: d.state,
        nodes: filter(d.nodes.values(), (n) => on(n.name) && ++nodes > 0),
        volumeAttachments: filter(d.volumeAttachments.values(), (va) => on(va.nodeName)),
        pv: d.pv, plugins: d.plugins, translator: d.translator, log: d.log, conditions: d.conditions,
      }),
    );
    const complete = await d.populator.processPodsOn(on, cancelled);
    return { nodes, attached: loaded.attached, uncertain: loaded.uncertain, complete };
  }

  release(on: NodeSelection): Promise<{ outcome: 'released' | 'busy'; nodes: number; pods: number; reason?: string }> {
    return this.idle(() => {
      const { state } = this.d;
      const ids = this.selected(on);
      for (const id of ids) {
        const name = state.nodeName(id);
        const reason = this.busy(id, name);
        if (reason !== undefined) return { outcome: 'busy' as const, nodes: ids.length, pods: 0, reason: `node ${name}: ${reason}` };
      }
      const pods = this.d.populator.forgetPodsOn(on);
      for (const id of ids) this.drop(id);
      return { outcome: 'released' as const, nodes: ids.length, pods };
    });
  }

  private selected(on: NodeSelection): NodeId[] {
    const { state } = this.d;
    const out: NodeId[] = [];
    for (let after = -1; ; ) {
      const page = state.nodeIds(after, 4096);
      if (page.length === 0) return out;
      for (const id of page) if (on(state.nodeName(id))) out.push(id);
      after = page[page.length - 1];
    }
  }

  private busy(id: NodeId, name: string): string | undefined {
    const { state } = this.d;
    if (state.statusUpdateNeeded(id)) return 'status write wanted';
    if (this.d.writingStatus(name)) return 'status write under way';
    let pending: string | undefined;
    state.forEachPairOfNode(id, (p) => {
      if (pending === undefined && state.isOperationPending(p.volume, id)) pending = `operation pending on ${state.volumeName(p.volume)}`;
    });
    return pending;
  }

  /** Forgets the node's pairs (its pods are gone from them already) and the node itself. */
  private drop(id: NodeId): void {
    const { state } = this.d;
    const name = state.nodeName(id);
    const volumes: number[] = [];
    state.forEachPairOfNode(id, (p) => void volumes.push(p.volume));
    for (const v of volumes) {
      state.removeFromReportSet(v, id);
      if (state.attachState(v, id) !== 'detached') state.markDetached(v, id);
    }
    state.clearStatusUpdateNeeded(id);
    if (!state.removeNode(id)) this.d.log.warn({ node: name }, 'handed-over node still has desired pods');
    this.d.conditions?.delete(name);
  }

  private idle<T>(fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.d.state.whenIdle(() => {
        try {
          resolve(fn());
        } catch (err) {
          reject(err);
        }
      });
    });
  }
}

function* filter<T>(items: Iterable<T>, keep: (item: T) => boolean): Generator<T> {
  for (const item of items) if (keep(item)) yield item;
}
