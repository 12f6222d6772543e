/**
 * AttachmentsByPv: the nodes each PersistentVolume has a VolumeAttachment on, as the
 * VolumeAttachment cache holds them (one replica of several: every VolumeAttachment of the
 * cluster, whichever replica or controller made it; one marked for deletion counts until it is
 * gone). Kept by the cache's handlers, so a look-up is O(1) where the cache's deterministic
 * names would need the node.
 */
import type { VolumeAttachmentRecord } from '../kube/projections/index.js';
import type { ProjectionHandler } from '../kube/projection-store.js';

export interface AttachmentsByPv {
  /** The nodes with a VolumeAttachment of `pv` (empty when none). */
  nodesOf(pv: string): ReadonlySet<string>;
  /** Stops following the cache. */
  close(): void;
}

const NONE: ReadonlySet<string> = new Set();

export function createAttachmentsByPv(deps: {
  volumeAttachments: { addHandler(h: ProjectionHandler<VolumeAttachmentRecord>): () => void; values(): Iterable<VolumeAttachmentRecord> };
}): AttachmentsByPv {
  /** pv → node → VolumeAttachments of the pair (names differ for two drivers). */
  const byPv = new Map<string, Map<string, Set<string>>>();
  const add = (va: VolumeAttachmentRecord) => {
    if (va.pvName === undefined) return;
    const nodes = byPv.get(va.pvName) ?? byPv.set(va.pvName, new Map()).get(va.pvName)!;
    const names = nodes.get(va.nodeName) ?? nodes.set(va.nodeName, new Set()).get(va.nodeName)!;
    names.add(va.name);
  };
  const remove = (va: VolumeAttachmentRecord) => {
    if (va.pvName === undefined) return;
    const nodes = byPv.get(va.pvName);
    const names = nodes?.get(va.nodeName);
    if (!nodes || !names) return;
    names.delete(va.name);
    if (names.size === 0) nodes.delete(va.nodeName);
    if (nodes.size === 0) byPv.delete(va.pvName);
  };
  for (const va of deps.volumeAttachments.values()) add(va);
  const unsubscribe = deps.volumeAttachments.addHandler({
    add,
    // Node and source are immutable in the API; a changed projection is taken as it comes.
    update: (va, old) => {
      remove(old);
      add(va);
    },
    delete: remove,
  });
  return {
    nodesOf: (pv) => {
      const nodes = byPv.get(pv);
      return nodes === undefined ? NONE : new Set(nodes.keys());
    },
    close: unsubscribe,
  };
}
