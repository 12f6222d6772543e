/**
 * Adapters from the kube layer (API client, reflectors) and the world state to the small
 * dependency interfaces the plugins, the status updater and the event recorder declare, and
 * from the kernel's worker pool to the reflectors' list page reader.
 * Pure glue: no behaviour of its own beyond name ↔ id translation.
 */
import type { WorldState } from '../cache/world-state.js';
import type { KubeApiClient } from '../kube/api-client.js';
import type { Reflector } from '../kube/reflector.js';
import type { CsiDriverRecord, VolumeAttachmentRecord } from '../kube/projections/index.js';
import type { CsiDriverCache, VolumeAttachmentApi, VolumeAttachmentCache } from '../plugins/index.js';
import type { NodeLookup, NodeStatusApi, ReportedAttachments } from '../statusupdater/index.js';
import type { EventSink } from '../events/index.js';
import type { KernelPool } from '../kernel/kernel-pool.js';
import { decodePage, type PageReader } from '../kube/list-page.js';
import type { SieveBuild } from '../kube/sieve/json-sieve.js';
import { kubeErrorDetails } from '../kube/kube-errors.js';

/**
 * A refused create rejects with the API server's own words (`Status.message`) when it sent
 * some, as client-go's StatusError reads: the CSI plugin puts that text after upstream's
 * `attacher.Attach failed:` in the FailedAttachVolume event. The client's error is its cause.
 */
export function inApiWords(err: unknown): never {
  const words = kubeErrorDetails(err)?.statusMessage;
  throw words === undefined ? err : new Error(words, { cause: err });
}

export function volumeAttachmentApi(api: KubeApiClient): VolumeAttachmentApi {
  return {
    create: (body) => api.createVolumeAttachment(body).catch(inApiWords),
    delete: (name) => api.deleteVolumeAttachment(name),
    get: (name) => api.getVolumeAttachment(name),
  };
}

export function volumeAttachmentCache(vas: Reflector<VolumeAttachmentRecord>): VolumeAttachmentCache {
  return {
    get: (name) => vas.get(name),
    onChange: (listener) =>
      vas.addHandler({ add: (va) => listener(va.name), update: (va) => listener(va.name), delete: (va) => listener(va.name) }),
  };
}

export function csiDriverCache(drivers: Reflector<CsiDriverRecord>): CsiDriverCache {
  return { attachRequired: (driver) => drivers.get(driver)?.attachRequired };
}

export function nodeStatusApi(api: KubeApiClient): NodeStatusApi {
  return { patchNodeStatus: (node, patch) => api.patchNodeStatus(node, patch.status.volumesAttached) };
}

export function nodeLookup(nodes: { get(name: string): unknown }): NodeLookup {
  return { hasNode: (name) => nodes.get(name) !== undefined };
}

/**
 * The report sets of the world state by node name. `flaggedNodes` runs once per pass (every
 * 100 ms under churn): it takes the world state's scan of its node flags, a typed-array read per
 * node that allocates only the answer. Walking the live node ids a page at a time in a
 * generator would allocate every id and an iterator result per node and pass: 56% of
 * everything the controller allocated at 50k nodes under light churn (a sampling heap profile,
 * `npm run bench:e2e -- --nodes 50000 --churn 100`).
 */
export function reportedAttachments(state: WorldState): ReportedAttachments {
  return {
    flaggedNodes: () => state.nodesNeedingStatusUpdate().map((id) => state.nodeName(id)),
    takeVolumesToReport(nodeName) {
      const id = state.findNode(nodeName);
      if (id === undefined || !state.statusUpdateNeeded(id)) return undefined;
      state.clearStatusUpdateNeeded(id);
      return state.volumesToReport(id).map((v) => ({ name: state.volumeName(v), devicePath: state.devicePath(v) }));
    },
    setNodeStatusUpdateNeeded(nodeName) {
      const id = state.findNode(nodeName);
      if (id !== undefined) state.setStatusUpdateNeeded(id);
    },
    whenIdle: (fn) => state.whenIdle(fn),
  };
}

export function eventSink(api: KubeApiClient): EventSink {
  return {
    create: (namespace, event) => api.createEvent(namespace, event),
    patch: (namespace, name, patch) => api.patchEvent(namespace, name, patch),
  };
}

/**
 * List pages read in the pool's workers, through the JSON sieve of build `sieve` when given. A
 * body in its own ArrayBuffer is moved there; one that shares a larger buffer (a single network
 * chunk) is copied once first, since moving would take the whole buffer along.
 */
export function listPageReader(pool: KernelPool, sieve?: SieveBuild): PageReader {
  return async (kind, body) => {
    const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer;
    const bytes = own ? body : new Uint8Array(body);
    const { text } = await pool.run('readListPage', { resource: kind.resource, body: bytes, ...(sieve ? { sieve } : {}) }, [bytes.buffer as ArrayBuffer]);
    return decodePage(kind, text);
  };
}
