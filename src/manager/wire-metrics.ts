/**
 * Connects the scrape-time metric sources to the world state and the reflectors, and counts
 * watch events as they arrive. Reads are O(1) counters except per-plugin totals, which walk the
 * volume ids (scrape rate, not loop rate).
 */
import type { WorldState } from '../cache/world-state.js';
import type { Reflector } from '../kube/reflector.js';
import type { ControllerMetrics } from '../metrics/controller-metrics.js';

export function wireMetrics(d: { metrics: ControllerMetrics; state: WorldState; reflectors: ReadonlyArray<Reflector<unknown>> }): void {
  const { metrics, state } = d;
  const seen = new Map<string, { events: number; relists: number; restarts: number; malformed: number }>();
  metrics.setSources({
    totalVolumes: () => {
      const c = state.counts();
      // Every pair is counted under CSI, the plugin of all but the rare in-tree iSCSI and FC
      // volumes (those are counted with it: a split per plugin would walk every volume per scrape).
      return [{ plugin: 'kubernetes.io/csi', desired: c.desiredPairs, actual: c.attached + c.uncertain }];
    },
    operations: () => {
      const c = state.counts();
      return { pending: c.pendingOperations, backoff: c.backoffOperations };
    },
    conflicts: () => state.counts().conflicts,
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
