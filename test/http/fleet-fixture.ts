/**
 * A small fleet on a real WorldState, its fake InspectionView, real controller metrics and the
 * inspection app, with helpers that mutate the state the way the controller would. Tests call
 * `close()` (it closes the app).
 */
import type { FastifyInstance } from 'fastify';
import { createWorldState } from '../../src/cache/world-state.js';
import type { NodeId, VolumeId, WorldState } from '../../src/cache/world-state.js';
import type { VolumeInfo } from '../../src/http/inspection-view.js';
import { buildServer } from '../../src/http/server.js';
import { createControllerMetrics, type ControllerMetrics } from '../../src/metrics/controller-metrics.js';
import type { AccessMode } from '../../src/plugins/volume-spec.js';
import { createFakeInspectionView, type FakeInspectionView, type FakeInspectionViewOptions } from './fake-inspection-view.js';

export const DRIVER = 'ebs.csi.aws.com';
export const PLUGIN_LABEL = `kubernetes.io/csi:${DRIVER}`;

export function csiName(handle: string): string {
  return `kubernetes.io/csi/${DRIVER}^${handle}`;
}

export interface NodeOpts {
  managed?: boolean;
  healthy?: boolean;
  outOfService?: boolean;
  /** Unique names in status.volumesInUse; default [] (observed, nothing mounted). null = never observed. */
  inUse?: string[] | null;
}

export interface VolumeOpts {
  accessModes?: AccessMode[];
  pv?: string;
  info?: boolean;
}

export interface Fleet {
  readonly state: WorldState;
  readonly view: FakeInspectionView;
  readonly metrics: ControllerMetrics;
  readonly app: FastifyInstance;
  node(name: string, opts?: NodeOpts): NodeId;
  /** A CSI volume with handle `handle`; RWO (multi-attach forbidden) unless accessModes say otherwise. */
  volume(handle: string, opts?: VolumeOpts): VolumeId;
  want(volume: VolumeId, node: NodeId, podUid: string, pod?: { namespace: string; name: string }): void;
  attach(volume: VolumeId, node: NodeId): void;
  get(url: string, headers?: Record<string, string>): Promise<{ status: number; json: any; body: string; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

export function createFleet(opts: { listenHost?: string; httpToken?: string; view?: Partial<FakeInspectionViewOptions> } = {}): Fleet {
  const state = createWorldState();
  const view = createFakeInspectionView({ ...opts.view, state });
  const metrics = createControllerMetrics({ processMetrics: false });
  const app = buildServer({ state, view, metrics, listenHost: opts.listenHost ?? '127.0.0.1', httpToken: opts.httpToken });
  return {
    state, view, metrics, app,
    node(name, o = {}) {
      const id = state.internNode(name);
      if (o.managed ?? true) state.setNodeManaged(id);
      state.setNodeHealthy(id, o.healthy ?? true);
      state.setNodeOutOfService(id, o.outOfService ?? false);
      state.setVolumesInUse(id, o.inUse === undefined ? [] : o.inUse);
      return id;
    },
    volume(handle, o = {}) {
      const name = csiName(handle);
      const id = state.internVolume(name);
      const accessModes = o.accessModes ?? ['ReadWriteOnce'];
      state.setMultiAttachForbidden(id, !accessModes.some((m) => m === 'ReadWriteMany' || m === 'ReadOnlyMany'));
      if (o.info ?? true) {
        const pvName = o.pv ?? `pv-${handle}`;
        const info: VolumeInfo = { specName: pvName, pvName, plugin: PLUGIN_LABEL, csi: { driver: DRIVER, volumeHandle: handle }, accessModes, migrated: false };
        state.setVolumeInfo(id, info);
        state.setVolumePlugin(id, PLUGIN_LABEL);
        view.setPvVolumes(pvName, [name]);
      }
      return id;
    },
    want(volume, node, podUid, pod) {
      state.addDesiredPod(volume, node, podUid);
      view.setPod(podUid, pod ?? { namespace: 'default', name: `pod-${podUid}` });
    },
    attach(volume, node) {
      state.markAttached(volume, node);
    },
    async get(url, headers = {}) {
      const r = await app.inject({ method: 'GET', url, headers });
      const isJson = String(r.headers['content-type'] ?? '').includes('json');
      return { status: r.statusCode, json: isJson ? r.json() : undefined, body: r.body, headers: r.headers };
    },
    close: () => app.close(),
  };
}
