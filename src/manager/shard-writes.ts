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
 *   as a compare-and-swap on the list last seen in the Node cache and on the resourceVersion it
 *   was seen at, so that a paused or cut-off former owner's write fails once anyone (the new
 *   owner, kubelet) has written the Node since its read, even when the list looks the same again. A lost compare-and-swap is a
 *   failed write: the node is flagged again and written from the cache's newer list (K4).
 * - The attach lock's release: while the bucket is held, once the detach is done.
 *
 * A lock held by another node of a bucket this replica holds is cleared before taking it only
 * once the lock sweep (lock-sweep.ts, which shares its tracking) finds it left over: nothing
 * has needed it for `holdMs`. Otherwise `take` refuses as a Multi-Attach, and the attach is
 * tried again after its backoff.
 *
 * A volume attached before sharding (a VolumeAttachment on another node, and no lock) is
 * refused too: after a `take` that wrote the lock, a VolumeAttachment of the PV on another node
 * in the cache gives the lock back and refuses.
 */
import { fleetError } from '../errors/index.js';
import type { KubeApiClient } from '../kube/api-client.js';
import type { NodeRecord } from '../kube/projections/index.js';
import type { AttachLock } from '../operations/operation-executor.js';
import type { VolumeAttachmentApi } from '../plugins/index.js';
import { createFencedWrites, type FencedWrites } from '../sharding/fenced-writes.js';
import { createLockSweep, type LockSweep } from '../sharding/lock-sweep.js';
import type { Logger } from '../log/logger.js';
import type { ShardGuard } from './controller-options.js';
import type { LockNeeds } from './lock-needs.js';
import type { NodeStatusApi } from '../statusupdater/index.js';
import type { ShardRoles } from './shard-roles.js';
import { inApiWords } from './adapters.js';

export interface ShardWritesDeps {
  api: KubeApiClient;
  roles: () => ShardRoles | undefined;
  nodes: { get(name: string): NodeRecord | undefined; resourceVersionOf(name: string): string | undefined };
  volumeAttachments: { get(name: string): unknown };
  /** The nodes with a VolumeAttachment of a PV (attachments-by-pv.ts). */
  attachedNodes(pv: string): ReadonlySet<string>;
  /** What still needs a lock (lock-needs.ts). */
  lockNeeds: LockNeeds;
  /** The lock sweep's `holdMs` (ControllerOptions.shardLockSweepHoldMs). */
  lockHoldMs: number;
  /** Monotonic ms for the lock sweep (tests). */
  now?: () => number;
  log: Logger;
  /** Tests only (ControllerOptions.unsafeShardGuardsOff). */
  guardsOff?: ReadonlyArray<ShardGuard>;
}

export interface ShardWrites {
  volumeAttachments: VolumeAttachmentApi;
  nodeStatus: NodeStatusApi;
  /** Absent only with the 'volume-lock' guard switched off. */
  attachLock: AttachLock | undefined;
  /** The left-over lock sweep, which the shard roles run; absent as `attachLock`. */
  lockSweep: LockSweep | undefined;
}

export function createShardWrites(d: ShardWritesDeps): ShardWrites {
  // With the 'ownership' guard off, every node passes the process-level fence.
  const anyNode = d.guardsOff?.includes('ownership') === true;
  const mayStart = (n: string) => anyNode || d.roles()?.mayStart(n) === true;
  const holds = (n: string) => anyNode || d.roles()?.holds(n) === true;
  const acting: FencedWrites = createFencedWrites({ api: d.api, mayAct: mayStart });
  const holding: FencedWrites = createFencedWrites({ api: d.api, mayAct: holds });
  const lockOff = d.guardsOff?.includes('volume-lock') === true;
  const casOff = d.guardsOff?.includes('status-cas') === true;
  const versionOff = d.guardsOff?.includes('status-version') === true;
  const sweep = lockOff ? undefined : createLockSweep({
    api: d.api,
    buckets: () => d.roles()?.coordinator.ownedBuckets() ?? [],
    mayAct: holds,
    needed: d.lockNeeds,
    release: (pv, node) => holding.releaseVolumeLock(pv, node),
    holdMs: d.lockHoldMs,
    ...(d.now ? { now: d.now } : {}),
    log: d.log,
  });
  const fence = (node: string) => {
    const c = d.roles()?.coordinator;
    const bucket = c === undefined ? 0 : c.bucketOf(node);
    return { bucket, epoch: c?.epoch(bucket) ?? 0 };
  };
  /**
   * A volume attached before sharding has a VolumeAttachment on another node and no lock: the
   * lock just taken (`taken`) is given back, and the attach is refused as a Multi-Attach.
   */
  const refuseLegacy = async (pv: string, node: string, taken: boolean): Promise<void> => {
    const other = [...d.attachedNodes(pv)].find((n) => n !== node);
    if (other === undefined) return;
    if (taken) {
      try {
        await holding.releaseVolumeLock(pv, node);
      } catch (err) {
        d.log.warn({ err, pv, node }, 'could not give back an attach lock taken for a volume attached elsewhere; the lock sweep clears it');
      }
    }
    throw fleetError('FA_ERR_VOLUME_LOCKED', `Multi-Attach: PersistentVolume ${pv} is attached to node ${other} (a VolumeAttachment without an attach lock)`);
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
        const resourceVersion = cur === undefined || versionOff ? undefined : d.nodes.resourceVersionOf(node);
        const r = casOff
          ? await holding.patchNodeStatus(node, patch.status.volumesAttached)
          : await holding.patchNodeStatus(node, patch.status.volumesAttached, resourceVersion === undefined ? { expected } : { expected, resourceVersion });
        if (r === 'conflict') throw fleetError('FA_ERR_KUBE_CONFLICT', `node ${node}: changed since it was read; written again from the newer state`);
        return r;
      },
    },
    attachLock: sweep === undefined ? undefined : {
      async take(pv, node) {
        for (let attempt = 0; attempt < 2; attempt++) {
          const r = await acting.takeVolumeLock(pv, node, fence(node));
          if (r.outcome === 'taken' || r.outcome === 'already-held') {
            sweep.forget(pv);
            await refuseLegacy(pv, node, r.outcome === 'taken');
            return;
          }
          if (r.outcome === 'held-by') {
            const other = r.holder.node;
            if (attempt === 0 && holds(other) && sweep.leftOver(pv, r.holder, node)) {
              await holding.releaseVolumeLock(pv, other);
              sweep.forget(pv);
              d.log.info({ pv, node: other, holdMs: d.lockHoldMs }, 'cleared a left-over attach lock before taking it');
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
          sweep.forget(pv);
        } catch {
          // Not ours any more, or the API failed: the lock sweep of the node's owner clears it.
        }
      },
    },
    lockSweep: sweep,
  };
}
