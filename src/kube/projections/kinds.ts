/**
 * Every reflected kind by its resource name: how a worker, which gets only the name across the
 * thread boundary, finds the projection to run (list-page.ts).
 */
import { CSI_DRIVER_KIND } from './csi-driver.js';
import { CSI_NODE_KIND } from './csi-node.js';
import { NODE_KIND } from './node.js';
import { POD_KIND } from './pod.js';
import { PV_KIND } from './pv.js';
import { PVC_KIND } from './pvc.js';
import type { ResourceKind } from './read.js';
import { VOLUME_ATTACHMENT_KIND } from './volume-attachment.js';

const ALL = [POD_KIND, PVC_KIND, PV_KIND, NODE_KIND, VOLUME_ATTACHMENT_KIND, CSI_DRIVER_KIND, CSI_NODE_KIND] as Array<ResourceKind<unknown>>;

export const KINDS_BY_RESOURCE: ReadonlyMap<string, ResourceKind<unknown>> = new Map(ALL.map((k) => [k.resource, k]));
