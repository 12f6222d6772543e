/**
 * Periodic verification (M1–M2): for each node, the Attached entries that have a spec are
 * grouped per plugin and the plugin is asked — from its caches, never one GET per volume
 * (upstream issue 84169) — which are still attached. Entries reported "not attached" are
 * removed from the actual state (and so from node status); if still desired, the next attach
 * pass re-attaches. Returns how many entries were removed.
 */
import type { NodeId, VolumeId, WorldState } from '../cache/world-state.js';
import type { AttachableVolumePlugin, VolumePluginManager, VolumeSpec } from '../plugins/index.js';
import { runInSlices, type SliceStats } from '../populator/run-in-slices.js';
import { volumeInfoOf } from '../populator/volume-info.js';

export interface VerifyDeps {
  state: WorldState;
  plugins: VolumePluginManager;
}

export interface VerifyOptions {
  /** CPU per slice, ms (default 2): see runInSlices. */
  budgetMs?: number;
  /** Stops the walk between two slices (the controller is stopping). */
  cancelled?: () => boolean;
}

const PAGE = 1024;

/**
 * M1 over every node, a node at a time, in ~2 ms slices between which events, passes and HTTP
 * requests run: at 100k nodes one synchronous walk of a million pairs held the event loop for
 * seconds. Each node is judged from the state at its turn (runInSlices' contract), and nodes
 * added during the walk after its cursor are verified too. Resolves with the entries removed and
 * what the walk cost (its items are nodes).
 */
export async function verifyAttachedVolumes(d: VerifyDeps, o: VerifyOptions = {}): Promise<{ removed: number; stats: SliceStats }> {
  const { state } = d;
  let removed = 0;
  const stats = await runInSlices(nodesOf(state), (node) => {
    if (state.node(node) !== undefined) removed += verifyNode(d, node);
  }, { whenIdle: (fn) => state.whenIdle(fn), budgetMs: o.budgetMs, cancelled: o.cancelled });
  return { removed, stats };
}

/** Live node ids, ascending, read a page at a time when the walk gets there. */
function* nodesOf(state: WorldState): Iterator<NodeId> {
  for (let after = -1; ; ) {
    const ids = state.nodeIds(after, PAGE);
    if (ids.length === 0) return;
    after = ids[ids.length - 1];
    yield* ids;
  }
}

function verifyNode(d: VerifyDeps, node: NodeId): number {
  const { state } = d;
  const groups = new Map<AttachableVolumePlugin, { volumes: VolumeId[]; specs: VolumeSpec[] }>();
  state.forEachPairOfNode(node, (p) => {
    if (p.attachState !== 'attached') return;
    const spec = volumeInfoOf(state, p.volume)?.spec;
    if (!spec) return;
    const plugin = d.plugins.findAttachablePluginBySpec(spec);
    if (!plugin) return;
    let g = groups.get(plugin);
    if (!g) groups.set(plugin, (g = { volumes: [], specs: [] }));
    g.volumes.push(p.volume);
    g.specs.push(spec);
  });
  let removed = 0;
  const nodeName = state.nodeName(node);
  for (const [plugin, g] of groups) {
    const attached = plugin.volumesAreAttached(g.specs, nodeName);
    g.volumes.forEach((v, i) => {
      if (attached[i]) return;
      if (state.isOperationPending(v, node)) return; // an operation owns the pair; its result decides
      state.markDetached(v, node);
      removed++;
    });
  }
  return removed;
}
