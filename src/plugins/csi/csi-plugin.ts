/**
 * The CSI volume plugin, controller side (rules C7, L1–L7): attach creates a VolumeAttachment
 * for the external-attacher and waits for its verdict; detach deletes it and waits until it is
 * gone. Unlike upstream, which polls its lister with backoff (L7), waits here are woken by the
 * VolumeAttachment cache's change notifications, with a timer for the timeout (see
 * attachment-waiter.ts); outcomes and texts are upstream's.
 */
import { fleetError, isNotSent } from '../../errors/index.js';
import { CSI_PLUGIN_NAME, csiVolumeName, splitCsiVolumeName } from '../unique-volume-name.js';
import type { AttachResult, AttachableVolumePlugin } from '../volume-plugin.js';
import { csiPersistentSource, type VolumeSpec } from '../volume-spec.js';
import { attachmentName } from './attachment-name.js';
import { createAttachmentWaiter, type AttachmentWaiter, type WaitCheck } from './attachment-waiter.js';
import type {
  CsiDriverCache,
  VolumeAttachmentApi,
  VolumeAttachmentBody,
  VolumeAttachmentCache,
} from './volume-attachment-deps.js';

/** Upstream `csiTimeout`: how long attach and detach wait for the external-attacher. */
export const DEFAULT_CSI_TIMEOUT_MS = 120_000;

export interface CsiPluginDeps {
  api: VolumeAttachmentApi;
  attachments: VolumeAttachmentCache;
  drivers: CsiDriverCache;
  /** Wait limit per attach/detach (`--csi-timeout`); default {@link DEFAULT_CSI_TIMEOUT_MS}. */
  csiTimeoutMs?: number;
}

export interface CsiPlugin extends AttachableVolumePlugin {
  recheckAttached(specs: readonly VolumeSpec[], nodeName: string): Promise<boolean[]>;
  /** Attach/detach waits currently pending. */
  pendingWaits(): number;
  /** Shutdown: rejects every pending wait (the operation is abandoned; state is rebuilt at next start). */
  close(): void;
}

/**
 * @example
 * const csi = createCsiPlugin({ api, attachments, drivers, csiTimeoutMs: flags['csi-timeout'] });
 * await csi.attach(spec, 'node-1'); // resolves { devicePath: '' } once status.attached is true
 */
export function createCsiPlugin(deps: CsiPluginDeps): CsiPlugin {
  const timeoutMs = deps.csiTimeoutMs ?? DEFAULT_CSI_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw fleetError('FA_ERR_FLAG_INVALID', `csiTimeoutMs must be a positive number of milliseconds, got ${timeoutMs}`);
  }
  return new CsiPluginImpl(deps, timeoutMs, createAttachmentWaiter({ cache: deps.attachments }));
}

/** L3: deletion first, then attached, then attachError; absent is tolerated while waiting. */
const attachCheck: WaitCheck = (va) => {
  if (!va) return 'pending';
  if (va.deleting) return { error: 'volume attachment is being deleted' };
  if (va.attached) return 'done';
  if (va.attachError !== undefined) return { error: va.attachError };
  return 'pending';
};

/** L4: gone is success; a detachError fails at once. */
const detachCheck: WaitCheck = (va) => {
  if (!va) return 'done';
  if (va.detachError !== undefined) return { error: va.detachError };
  return 'pending';
};

class CsiPluginImpl implements CsiPlugin {
  readonly name = CSI_PLUGIN_NAME;

  constructor(
    private readonly deps: CsiPluginDeps,
    private readonly timeoutMs: number,
    private readonly waiter: AttachmentWaiter,
  ) {}

  canSupport(spec: VolumeSpec): boolean {
    return spec.source.type === 'csi';
  }

  getVolumeName(spec: VolumeSpec): string | undefined {
    const src = csiPersistentSource(spec);
    return src && src.volumeHandle !== '' ? csiVolumeName(src.driver, src.volumeHandle) : undefined;
  }

  /** C7: CSI ephemeral inline volumes never; otherwise unless the CSIDriver says attachRequired: false. */
  canAttach(spec: VolumeSpec): boolean {
    const src = csiPersistentSource(spec);
    if (!src || src.volumeHandle === '') return false;
    return this.deps.drivers.attachRequired(src.driver) !== false;
  }

  async attach(spec: VolumeSpec, nodeName: string): Promise<AttachResult> {
    const src = csiPersistentSource(spec);
    if (!src || src.volumeHandle === '') {
      throw fleetError('FA_ERR_SPEC_UNSUPPORTED', `attacher.Attach failed to get CSIPersistentVolumeSource for volume "${spec.name}"`, { terminal: true });
    }
    const name = attachmentName(src.volumeHandle, src.driver, nodeName);
    // L3: an existing VolumeAttachment is reused as is, whatever its spec or status.
    if (this.deps.attachments.get(name) === undefined) {
      // Upstream's text for a refused create (what FailedAttachVolume events show and alerts match).
      await this.deps.api.create(attachmentBody(name, src.driver, nodeName, spec)).catch((err: unknown) => {
        throw fleetError('FA_ERR_OP_FAILED', `kubernetes.io/csi: attacher.Attach failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      });
    }
    await this.waiter.wait({
      name,
      check: attachCheck,
      timeoutMs: this.timeoutMs,
      onTimeout: () => fleetError('FA_ERR_OP_TIMEOUT', `timed out waiting for external-attacher of ${src.driver} CSI driver to attach volume ${src.volumeHandle}`),
      onError: (message) => fleetError('FA_ERR_OP_FAILED', message),
    });
    return { devicePath: '' };
  }

  async detach(volumeName: string, nodeName: string): Promise<void> {
    const split = splitCsiVolumeName(volumeName);
    if (!split) {
      throw fleetError('FA_ERR_SPEC_UNSUPPORTED', `csi.Detach failed to get driver and volume handle from volume name ${volumeName}`, { terminal: true });
    }
    const name = attachmentName(split.volumeHandle, split.driver, nodeName);
    await this.deps.api.delete(name); // not-found counts as deleted (L4)
    await this.waiter.wait({
      name,
      check: detachCheck,
      timeoutMs: this.timeoutMs,
      // Upstream's detach wait has no PV to name the driver from, hence "unknown" (L4).
      onTimeout: () => fleetError('FA_ERR_OP_TIMEOUT', `timed out waiting for external-attacher of unknown CSI driver to detach volume ${split.volumeHandle}`),
      onError: (message) => fleetError('FA_ERR_OP_FAILED', message),
    });
  }

  /**
   * L6 from the cache: attachRequired false ⇒ attached; VA missing or not attached ⇒ false.
   * A spec without a CSI persistent source cannot be judged and reports true, because upstream
   * leaves such entries untouched rather than marking them detached.
   */
  volumesAreAttached(specs: readonly VolumeSpec[], nodeName: string): boolean[] {
    return specs.map((spec) => {
      const src = csiPersistentSource(spec);
      if (!src || src.volumeHandle === '') return true;
      if (this.deps.drivers.attachRequired(src.driver) === false) return true;
      return this.deps.attachments.get(attachmentName(src.volumeHandle, src.driver, nodeName))?.attached === true;
    });
  }

  /**
   * L6 as upstream's `VolumesAreAttached` finishes it: a VolumeAttachment the cache does not
   * hold (a watch that has not seen it, a relist under way) is read from the API server, and a
   * failed read counts as not attached, as upstream counts it; a read this replica refused to
   * send (stopping or not leading) is no answer at all, so the look fails and removes nothing.
   * One the cache holds keeps the
   * cache's answer. Misses are rare (every attached volume's object is in the cache once its
   * attach was confirmed), so these GETs are few.
   */
  async recheckAttached(specs: readonly VolumeSpec[], nodeName: string): Promise<boolean[]> {
    const api = this.deps.api;
    if (!api.get) return specs.map(() => false);
    return Promise.all(
      specs.map(async (spec) => {
        const src = csiPersistentSource(spec);
        if (!src || src.volumeHandle === '') return false;
        const name = attachmentName(src.volumeHandle, src.driver, nodeName);
        const cached = this.deps.attachments.get(name);
        if (cached !== undefined) return cached.attached;
        return api.get!(name).then((va) => va?.attached === true, (err: unknown) => {
          if (isNotSent(err)) throw err;
          return false;
        });
      }),
    );
  }

  pendingWaits(): number {
    return this.waiter.pending();
  }

  close(): void {
    this.waiter.close(fleetError('FA_ERR_OP_FAILED', 'CSI plugin closed: wait abandoned'));
  }
}

/** L2: the created VolumeAttachment; migrated inline volumes carry their translated PV spec. */
export function attachmentBody(name: string, driver: string, nodeName: string, spec: VolumeSpec): VolumeAttachmentBody {
  const source =
    spec.origin === 'inline-migrated' && spec.inlineVolumeSpec
      ? { inlineVolumeSpec: spec.inlineVolumeSpec }
      : { persistentVolumeName: spec.name };
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'VolumeAttachment',
    metadata: { name },
    spec: { attacher: driver, nodeName, source },
  };
}
