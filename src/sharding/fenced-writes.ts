/**
 * FencedWrites: the controller's writes for one node, each sent only if this replica may act for
 * that node at the moment of the call. `mayAct(node)` is asked immediately before every call;
 * false refuses it with FA_ERR_NOT_OWNER (recognised by `isNotOwner`, expected during a
 * hand-over) and nothing is sent.
 *
 * This is the process-level fence. A write that passed the check can still reach the server
 * after ownership moved (it waits for a rate-limiter token and an in-flight slot, and then on the
 * network), so each write also carries a data-level fence the server enforces: a deterministic
 * VolumeAttachment name, delete preconditions, a compare-and-swap on the Node status list and on
 * the PV lock (api-client.ts, volume-lock.ts).
 */
import { fleetError } from '../errors/index.js';
import type { DeletePreconditions, KubeApiClient, NodeStatusCas, VolumeAttachmentBody } from '../kube/api-client.js';
import type { AttachedVolume } from '../kube/projections/node.js';
import { createVolumeLock, type LockFence, type ReleaseOutcome, type TakeOutcome, type VolumeLock, type VolumeLockApi } from './volume-lock.js';

export type FencedApi = Pick<KubeApiClient, 'createVolumeAttachment' | 'deleteVolumeAttachment' | 'patchNodeStatus'> & VolumeLockApi;

export interface FencedWritesDeps {
  api: FencedApi;
  /** Whether this replica may write for `node` now (it owns the node's bucket, renewed in time, warmed up). */
  mayAct: (node: string) => boolean;
  /**
   * The PV lock. Default: {@link createVolumeLock} on `api`, with the check asked again before
   * each of its writes (a take or release reads the PV first, and may retry).
   */
  lock?: VolumeLock;
}

/** Each method answers as the KubeApiClient or VolumeLock method it wraps, or rejects with FA_ERR_NOT_OWNER unsent. */
export interface FencedWrites {
  /** For `body.spec.nodeName`. */
  createVolumeAttachment(body: VolumeAttachmentBody): Promise<'created' | 'already-exists'>;
  /** `node` is the VolumeAttachment's `spec.nodeName`. */
  deleteVolumeAttachment(name: string, node: string, preconditions?: DeletePreconditions): Promise<'deleted' | 'not-found' | 'precondition-failed'>;
  patchNodeStatus(node: string, volumesAttached: ReadonlyArray<Readonly<AttachedVolume>> | null, cas?: NodeStatusCas): Promise<'patched' | 'not-found' | 'conflict'>;
  /** For the node taking the lock. */
  takeVolumeLock(pv: string, node: string, fence: LockFence): Promise<TakeOutcome>;
  /** For the node whose lock is cleared. */
  releaseVolumeLock(pv: string, node: string): Promise<ReleaseOutcome>;
}

export function createFencedWrites(deps: FencedWritesDeps): FencedWrites {
  return new Fenced(deps.api, deps.mayAct, deps.lock);
}

class Fenced implements FencedWrites {
  constructor(
    private readonly api: FencedApi,
    private readonly mayAct: (node: string) => boolean,
    private readonly lock: VolumeLock | undefined,
  ) {}

  async createVolumeAttachment(body: VolumeAttachmentBody): Promise<'created' | 'already-exists'> {
    this.fence(body.spec.nodeName, 'create volumeattachments', body.metadata.name);
    return this.api.createVolumeAttachment(body);
  }

  async deleteVolumeAttachment(name: string, node: string, preconditions?: DeletePreconditions): Promise<'deleted' | 'not-found' | 'precondition-failed'> {
    this.fence(node, 'delete volumeattachments', name);
    return preconditions === undefined ? this.api.deleteVolumeAttachment(name) : this.api.deleteVolumeAttachment(name, preconditions);
  }

  async patchNodeStatus(node: string, volumesAttached: ReadonlyArray<Readonly<AttachedVolume>> | null, cas?: NodeStatusCas): Promise<'patched' | 'not-found' | 'conflict'> {
    this.fence(node, 'patch nodes/status', node);
    return cas === undefined ? this.api.patchNodeStatus(node, volumesAttached) : this.api.patchNodeStatus(node, volumesAttached, cas);
  }

  async takeVolumeLock(pv: string, node: string, fence: LockFence): Promise<TakeOutcome> {
    this.fence(node, 'take the attach lock of persistentvolumes', pv);
    return this.lockFor(node, pv).take(pv, node, fence);
  }

  async releaseVolumeLock(pv: string, node: string): Promise<ReleaseOutcome> {
    this.fence(node, 'release the attach lock of persistentvolumes', pv);
    return this.lockFor(node, pv).release(pv, node);
  }

  /** The given lock, or one whose every PV write is fenced on `node` as well. */
  private lockFor(node: string, pv: string): VolumeLock {
    if (this.lock) return this.lock;
    const api = this.api;
    return createVolumeLock({
      api: {
        getPersistentVolume: (name) => api.getPersistentVolume(name),
        patchPersistentVolume: async (name, ops) => {
          this.fence(node, 'patch the attach lock of persistentvolumes', pv);
          return api.patchPersistentVolume(name, ops);
        },
      },
    });
  }

  /** Throws FA_ERR_NOT_OWNER unless this replica may act for `node` now. */
  private fence(node: string, action: string, name: string): void {
    if (this.mayAct(node)) return;
    throw fleetError('FA_ERR_NOT_OWNER', `${action} ${name} not sent: this replica does not own node ${node}`, { details: { node, action, name } });
  }
}
