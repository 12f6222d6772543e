/** The request bodies the controller writes through KubeApiClient (api-client.ts). */

/** The VolumeAttachment to create (L2): name, attacher, node, and a PV name or an inline (translated) PV spec. */
export interface VolumeAttachmentBody {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly attacher: string;
    readonly nodeName: string;
    readonly source: { readonly persistentVolumeName?: string; readonly inlineVolumeSpec?: Readonly<Record<string, unknown>> };
  };
}

/** A core/v1 Event as the event recorder builds it (timestamps as RFC 3339 strings). */
export interface EventBody {
  metadata: { name: string; namespace?: string };
  involvedObject: { kind: string; name: string; namespace?: string; uid?: string; apiVersion?: string };
  reason: string;
  message: string;
  type: string;
  source?: { component?: string; host?: string };
  firstTimestamp?: string;
  lastTimestamp?: string;
  count?: number;
  reportingComponent?: string;
  reportingInstance?: string;
}

/** The fields a repeated Event updates (merge patch). */
export interface EventPatchBody {
  count: number;
  lastTimestamp: string;
  message: string;
}
