/**
 * Connects the scrape-time metric sources to the world state and the reflectors, and counts
 * watch events as they arrive. Reads are O(1) counters, and O(plugin labels) for the totals.
 */
import type { WorldState } from '../cache/world-state.js';
import { readVolumeInfo } from '../http/inspection-view.js';
import type { Reflector } from '../kube/reflector.js';
import type { ControllerMetrics } from '../metrics/controller-metrics.js';

export function wireMetrics(d: { metrics: ControllerMetrics; state: WorldState; reflectors: ReadonlyArray<Reflector<unknown>> }): void {
  const { metrics, state } = d;
  const seen = new Map<string, { events: number; relists: number; restarts: number; malformed: number }>();
  metrics.setSources({
    // Kept per plugin label as pairs change (WorldState.pluginTotals): O(labels) per scrape.
    totalVolumes: () => state.pluginTotals(),
    operations: () => {
      const c = state.counts();
      return { pending: c.pendingOperations, backoff: c.backoffOperations };
    },
    conflicts: () => state.counts().conflicts,
    volumesInUsePerNode: () => volumesInUsePerNode(state),
  });
  // Reflector stats are cumulative; export the deltas on each scrape.
  const collect = metrics.registry.metrics.bind(metrics.registry);
  metrics.registry.metrics = async () => {
    for (const r of d.reflectors) {
      const s = r.stats();
      const prev = seen.get(s.resource) ?? { events: 0, relists: 0, restarts: 0, malformed: 0 };
      if (s.events > prev.events) metrics.watchEvents.inc({ resource: s.resource, type: 'all' }, s.events - prev.events);
      if (s.relists > prev.relists) metrics.watchRelists.inc({ resource: s.resource }, s.relists - prev.relists);
      if (s.restarts > prev.restarts) metrics.watchRestarts.inc({ resource: s.resource }, s.restarts - prev.restarts);
      if (s.malformed > prev.malformed) metrics.malformedObjects.inc({ resource: s.resource }, s.malformed - prev.malformed);
      seen.set(s.resource, { events: s.events, relists: s.relists, restarts: s.restarts, malformed: s.malformed });
    }
    return collect();
  };
}

/**
 * `storage_count_attachable_volumes_in_use`: per node and plugin label, the pod volumes of the
 * desired state (each pod wanting a pair counts once, as upstream counts every pod volume it
 * resolves). O(pairs): only registered with `--per-node-volume-metric`. Volumes without a spec
 * have no label and are left out, as upstream leaves out what it cannot resolve.
 */
function volumesInUsePerNode(state: WorldState): Array<{ node: string; plugin: string; count: number }> {
  const out: Array<{ node: string; plugin: string; count: number }> = [];
  const byPlugin = new Map<string, number>();
  for (let ids = state.nodeIds(-1, 1024); ids.length > 0; ids = state.nodeIds(ids[ids.length - 1], 1024)) {
    for (const id of ids) {
      byPlugin.clear();
      state.forEachPairOfNode(id, (p) => {
        if (p.desiredPods === 0) return;
        const plugin = readVolumeInfo(state.volumeInfo(p.volume))?.plugin;
        if (plugin !== undefined) byPlugin.set(plugin, (byPlugin.get(plugin) ?? 0) + p.desiredPods);
      });
      if (byPlugin.size === 0) continue;
      const node = state.nodeName(id);
      for (const [plugin, count] of byPlugin) out.push({ node, plugin, count });
    }
  }
  return out;
}
