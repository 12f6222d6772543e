/**
 * What the CSI plugin needs from the rest of the controller: a writer for VolumeAttachments, a
 * read cache of them fed by the watch, and a read cache of CSIDrivers. They are deliberately
 * small so the Kubernetes client and the caches (src/kube) can be adapted to them in a few lines.
 * Expected API outcomes (AlreadyExists, NotFound) are resolved values, not errors, so this module
 * never guesses at error shapes; anything else rejects and its message reaches the event text.
 */

/** The object the plugin creates (L2): no labels, annotations or finalizers, no status. */
export interface VolumeAttachmentBody {
  readonly apiVersion: 'storage.k8s.io/v1';
  readonly kind: 'VolumeAttachment';
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly attacher: string;
    readonly nodeName: string;
    readonly source:
      | { readonly persistentVolumeName: string }
      | { readonly inlineVolumeSpec: Readonly<Record<string, unknown>> };
  };
}

export interface VolumeAttachmentApi {
  /** POST the VolumeAttachment. `already-exists` on 409 AlreadyExists; rejects on any other failure. */
  create(body: VolumeAttachmentBody): Promise<'created' | 'already-exists'>;
  /** DELETE by name. `deleted` once the API accepted it (finalizers may keep it a while), `not-found` on 404. */
  delete(name: string): Promise<'deleted' | 'not-found'>;
  /** Live GET by name (L6's second look); undefined on 404, rejects on any other failure. Without it, L6 answers from the cache alone. */
  get?(name: string): Promise<VolumeAttachmentView | undefined>;
}

/** The fields of a VolumeAttachment the plugin reads. */
export interface VolumeAttachmentView {
  /** `status.attached === true`. */
  readonly attached: boolean;
  /** `status.attachError.message` when `status.attachError` is set (may be `""`). */
  readonly attachError?: string | undefined;
  /** `status.detachError.message` when `status.detachError` is set (may be `""`). */
  readonly detachError?: string | undefined;
  /** `metadata.deletionTimestamp` is set. */
  readonly deleting: boolean;
}

export interface VolumeAttachmentCache {
  /** The cached VolumeAttachment of that name, or undefined when the watch has not seen it (or saw it deleted). */
  get(name: string): VolumeAttachmentView | undefined;
  /**
   * Registers a listener called with the name of every VolumeAttachment added, modified or
   * deleted (including deletions found by a relist), after the cache applied the change, so
   * `get(name)` inside the listener returns the new state. Returns the unsubscribe function.
   */
  onChange(listener: (name: string) => void): () => void;
}

export interface CsiDriverCache {
  /** `spec.attachRequired` of the CSIDriver named `driver`; undefined when no such CSIDriver exists (⇒ attachable, C7). */
  attachRequired(driver: string): boolean | undefined;
}
