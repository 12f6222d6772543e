/**
 * Periodic verification (M1–M2): for each node, the Attached entries that have a spec are
 * grouped per plugin and the plugin is asked — from its caches, never one GET per volume
 * (upstream issue 84169) — which are still attached. Entries reported "not attached" are
 * removed from the actual state (and so from node status); if still desired, the next attach
 * pass re-attaches. A plugin with a second look (`recheckAttached`: CSI asks the API server for
 * VolumeAttachments its cache lacks, L6) is asked once the walk is done, and only the entries it
 * also finds detached, and that nothing changed meanwhile, are removed. Returns how many
 * entries were removed.
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
  /**
   * Called with the seconds each node with Attached entries took (J4's
   * `verify_volumes_are_attached_per_node`): the cache walk only, as the second look's reads
   * are batched after it.
   */
  observeNode?: (seconds: number) => void;
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
  const doubts: Doubt[] = [];
  const stats = await runInSlices(nodesOf(state), (node) => {
    if (state.node(node) !== undefined) removed += verifyNode(d, node, doubts, o.observeNode);
  }, { whenIdle: (fn) => state.whenIdle(fn), budgetMs: o.budgetMs, cancelled: o.cancelled });
  if (doubts.length > 0 && !o.cancelled?.()) removed += await settleDoubts(state, doubts, o.cancelled);
  return { removed, stats };
}

/** Entries a plugin's cache answered "not attached" and whose plugin can take a second look. */
interface Doubt {
  plugin: AttachableVolumePlugin;
  node: NodeId;
  nodeName: string;
  volumes: VolumeId[];
  /** The volumes' unique names: ids may be freed and reused while the second look is out. */
  names: string[];
  specs: VolumeSpec[];
}

/**
 * The second look, node group by node group; an entry is removed only if still as it was judged.
 * Stops between groups once cancelled (each look is a live read: a stop must not wait for all).
 */
async function settleDoubts(state: WorldState, doubts: readonly Doubt[], cancelled?: () => boolean): Promise<number> {
  let removed = 0;
  for (const g of doubts) {
    if (cancelled?.()) break;
    const attached = await g.plugin.recheckAttached!(g.specs, g.nodeName);
    await new Promise<void>((resolve) => state.whenIdle(() => {
      g.volumes.forEach((v, i) => {
        if (attached[i] || state.findNode(g.nodeName) !== g.node || state.findVolume(g.names[i]!) !== v) return;
        if (state.attachState(v, g.node) !== 'attached' || state.isOperationPending(v, g.node)) return;
        state.markDetached(v, g.node);
        removed++;
      });
      resolve();
    }));
  }
  return removed;
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

function verifyNode(d: VerifyDeps, node: NodeId, doubts: Doubt[], observe: ((seconds: number) => void) | undefined): number {
  const { state } = d;
  const t0 = performance.now();
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
    const doubt: Doubt = { plugin, node, nodeName, volumes: [], names: [], specs: [] };
    g.volumes.forEach((v, i) => {
      if (attached[i]) return;
      if (state.isOperationPending(v, node)) return; // an operation owns the pair; its result decides
      if (plugin.recheckAttached) {
        doubt.volumes.push(v);
        doubt.names.push(state.volumeName(v));
        doubt.specs.push(g.specs[i]!);
        return;
      }
      state.markDetached(v, node);
      removed++;
    });
    if (doubt.volumes.length > 0) doubts.push(doubt);
  }
  if (groups.size > 0) observe?.((performance.now() - t0) / 1000);
  return removed;
}
