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

export function volumeAttachmentApi(api: KubeApiClient): VolumeAttachmentApi {
  return {
    create: (body) => api.createVolumeAttachment(body),
    delete: (name) => api.deleteVolumeAttachment(name),
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
 * The report sets of the world state by node name. `flaggedNodes` walks the live node ids; it
 * runs once per pass at the end, and a node flag set costs nothing to find when it is cheap to
 * test, so this stays O(nodes) of a typed-array read per pass.
 */
export function reportedAttachments(state: WorldState): ReportedAttachments {
  return {
    *flaggedNodes() {
      if (state.counts().statusUpdatesNeeded === 0) return;
      for (let after = -1; ; ) {
        const ids = state.nodeIds(after, 4096);
        if (ids.length === 0) return;
        after = ids[ids.length - 1];
        for (const id of ids) if (state.statusUpdateNeeded(id)) yield state.nodeName(id);
      }
    },
    takeVolumesToReport(nodeName) {
      const id = state.findNode(nodeName);
      if (id === undefined || !state.statusUpdateNeeded(id)) return undefined;
      state.clearStatusUpdateNeeded(id);
      return state.volumesToReport(id).map((v) => state.volumeName(v));
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
 * List pages read in the pool's workers. A body in its own ArrayBuffer is moved there; one that
 * shares a larger buffer (a single network chunk) is copied once first, since moving would take
 * the whole buffer along.
 */
export function listPageReader(pool: KernelPool): PageReader {
  return async (kind, body) => {
    const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer;
    const bytes = own ? body : new Uint8Array(body);
    const { text } = await pool.run('readListPage', { resource: kind.resource, body: bytes }, [bytes.buffer as ArrayBuffer]);
    return decodePage(kind, text);
  };
}
