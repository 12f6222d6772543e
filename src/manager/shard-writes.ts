/**
 * The writes of one replica of several (`sharding`), each fenced twice: by the process (the
 * node's bucket must be this replica's at the moment of the call: fenced-writes.ts) and at the
 * data (a check the API server makes):
 *
 * - VolumeAttachment creates and deletes: only while the node's bucket acts here; the name is
 *   deterministic (a second create is AlreadyExists), a delete carries the uid of the incarnation
 *   it means (DeleteOptions preconditions), and a ReadWriteOnce volume's attach first
 *   takes its PV's attach lock (volume-lock.ts), so two replicas never attach it to two nodes.
 * - Node status writes: while the bucket is held (also while it drains: the drain flushes them),
 *   as a compare-and-swap on the list last seen in the Node cache, so that a paused or cut-off
 *   former owner's write fails once the new owner has written. A lost compare-and-swap is a
 *   failed write: the node is flagged again and written from the cache's newer list (K4).
 * - The attach lock's release: while the bucket is held, once the detach is done.
 *
 * A lock held by another node of a bucket this replica holds, with no VolumeAttachment of the
 * volume there, is left over (its detach finished under an earlier owner of the bucket before
 * the release): it is cleared before taking it.
 */
import { fleetError } from '../errors/index.js';
import type { KubeApiClient } from '../kube/api-client.js';
import type { NodeRecord, PvRecord } from '../kube/projections/index.js';
import type { AttachLock } from '../operations/operation-executor.js';
import type { VolumeAttachmentApi } from '../plugins/index.js';
import { attachmentName } from '../plugins/csi/attachment-name.js';
import { createFencedWrites, type FencedWrites } from '../sharding/fenced-writes.js';
import type { NodeStatusApi } from '../statusupdater/index.js';
import type { ShardRoles } from './shard-roles.js';
import { inApiWords } from './adapters.js';

export interface ShardWritesDeps {
  api: KubeApiClient;
  roles: () => ShardRoles | undefined;
  nodes: { get(name: string): NodeRecord | undefined };
  pvs: { get(name: string): PvRecord | undefined };
  volumeAttachments: { get(name: string): unknown };
  /** Tests only (ControllerOptions.unsafeShardGuardsOff). */
  guardsOff?: ReadonlyArray<'volume-lock' | 'status-cas'>;
}

export interface ShardWrites {
  volumeAttachments: VolumeAttachmentApi;
  nodeStatus: NodeStatusApi;
  /** Absent only with the 'volume-lock' guard switched off. */
  attachLock: AttachLock | undefined;
}

export function createShardWrites(d: ShardWritesDeps): ShardWrites {
  const acting: FencedWrites = createFencedWrites({ api: d.api, mayAct: (n) => d.roles()?.mayStart(n) === true });
  const holding: FencedWrites = createFencedWrites({ api: d.api, mayAct: (n) => d.roles()?.holds(n) === true });
  const fence = (node: string) => {
    const c = d.roles()?.coordinator;
    const bucket = c === undefined ? 0 : c.bucketOf(node);
    return { bucket, epoch: c?.epoch(bucket) ?? 0 };
  };
  const vaOf = (pv: string, node: string) => {
    const csi = d.pvs.get(pv)?.csi;
    return csi === undefined ? undefined : d.volumeAttachments.get(attachmentName(csi.volumeHandle, csi.driver, node));
  };
  return {
    volumeAttachments: {
      create: (body) => acting.createVolumeAttachment(body).catch(inApiWords),
      delete: async (name) => {
        const va = d.volumeAttachments.get(name) as { nodeName?: string; uid?: string } | undefined;
        if (va?.nodeName === undefined) return 'not-found'; // not in the cache: nothing of ours to delete
        // The incarnation the cache shows: one re-created since under the same name is not deleted.
        const r = await acting.deleteVolumeAttachment(name, va.nodeName, va.uid === undefined ? undefined : { uid: va.uid });
        return r === 'precondition-failed' ? 'not-found' : r;
      },
      get: (name) => d.api.getVolumeAttachment(name),
    },
    nodeStatus: {
      async patchNodeStatus(node, patch) {
        const cur = d.nodes.get(node);
        const expected = cur === undefined ? null : cur.volumesAttached.map((name, i) => ({ name, devicePath: cur.devicePaths?.[i] ?? '' }));
        const r = d.guardsOff?.includes('status-cas')
          ? await holding.patchNodeStatus(node, patch.status.volumesAttached)
          : await holding.patchNodeStatus(node, patch.status.volumesAttached, { expected });
        if (r === 'conflict') throw fleetError('FA_ERR_KUBE_CONFLICT', `node ${node}: status.volumesAttached changed since it was read; written again from the newer list`);
        return r;
      },
    },
    attachLock: d.guardsOff?.includes('volume-lock') ? undefined : {
      async take(pv, node) {
        for (let attempt = 0; attempt < 2; attempt++) {
          const r = await acting.takeVolumeLock(pv, node, fence(node));
          if (r.outcome === 'taken' || r.outcome === 'already-held') return;
          if (r.outcome === 'held-by') {
            const other = r.holder.node;
            // Left over by this replica's own buckets: no attachment of the volume there.
            if (attempt === 0 && d.roles()?.holds(other) === true && vaOf(pv, other) === undefined) {
              await holding.releaseVolumeLock(pv, other);
              continue;
            }
            throw fleetError('FA_ERR_VOLUME_LOCKED', `Multi-Attach: the attach lock of PersistentVolume ${pv} is held by node ${other}`);
          }
          throw fleetError('FA_ERR_KUBE_CONFLICT', `attach lock of PersistentVolume ${pv}: ${r.outcome}`);
        }
        throw fleetError('FA_ERR_KUBE_CONFLICT', `attach lock of PersistentVolume ${pv}: still held after clearing a left-over lock`);
      },
      async release(pv, node) {
        try {
          await holding.releaseVolumeLock(pv, node);
        } catch {
          // Not ours any more, or the API failed: the node's next owner clears a left-over lock.
        }
      },
    },
  };
}
