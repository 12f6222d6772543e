/**
 * FakeInspectionView: an InspectionView over a real WorldState for tests and benches, with
 * setters for everything the controller would maintain. Operation lookups scan the state's
 * operation lists after O(1) checks that the pair has any, which is fine at test and bench sizes.
 */
import type { BackoffEntry, NodeId, PendingOperation, VolumeId, WorldState } from '../../src/cache/world-state.js';
import type {
  ApiClientLoad, InspectionOptions, InspectionView, LoopTimings, NodeConditionCounts, PodRef, Readiness, WatchHealth,
} from '../../src/http/inspection-view.js';
import { createDurationWindow } from '../../src/metrics/duration-window.js';

export interface FakeInspectionViewOptions {
  state: WorldState;
  /** Start of the fake clock (ms; default 1_000_000), or a real clock (setNow/advance then throw). */
  now?: number | (() => number);
  /** Loop timing windows; default fresh ones the test records into. */
  loop?: LoopTimings;
  readiness?: Readiness;
  options?: Partial<InspectionOptions>;
  watches?: WatchHealth[];
  /** Replaces the O(nodes) scan (benches set fixed counts). */
  nodeConditionCounts?: () => NodeConditionCounts;
  /** Replace the maps filled by setPod / setPvVolumes (benches derive names instead of storing them). */
  podName?: (uid: string) => PodRef | undefined;
  volumesForPv?: (pv: string) => readonly string[];
}

export interface FakeInspectionView extends InspectionView {
  setNow(ms: number): void;
  advance(ms: number): void;
  setReadiness(r: Readiness): void;
  setPod(uid: string, ref: PodRef | undefined): void;
  setPvVolumes(pv: string, uniqueNames: string[]): void;
  setWatches(w: WatchHealth[]): void;
  setApiClient(load: ApiClientLoad): void;
}

export const DEFAULT_MAX_WAIT_MS = 6 * 60_000;

export function createFakeInspectionView(o: FakeInspectionViewOptions): FakeInspectionView {
  const { state } = o;
  const clock = typeof o.now === 'function' ? o.now : undefined;
  let now = typeof o.now === 'number' ? o.now : 1_000_000;
  const settable = () => {
    if (clock) throw new Error('this fake view reads a real clock');
  };
  let readiness: Readiness = o.readiness ?? { ready: true, role: 'single' };
  let watches: WatchHealth[] = o.watches ?? [];
  let apiClient: ApiClientLoad = { inFlight: 0, waiting: 0, maxInFlight: 96, admissionBound: 500 };
  const pods = new Map<string, PodRef>();
  const pvs = new Map<string, string[]>();
  const loop: LoopTimings = o.loop ?? { pass: createDurationWindow(), plan: createDurationWindow() };
  const options: InspectionOptions = {
    maxWaitForUnmountMs: o.options?.maxWaitForUnmountMs ?? DEFAULT_MAX_WAIT_MS,
    disableForceDetachOnTimeout: o.options?.disableForceDetachOnTimeout ?? false,
  };
  const scanConditions = (): NodeConditionCounts => {
    let healthy = 0;
    let outOfService = 0;
    for (let ids = state.nodeIds(-1, 1024); ids.length > 0; ids = state.nodeIds(ids[ids.length - 1], 1024)) {
      for (const id of ids) {
        const n = state.node(id);
        if (n?.managed && n.healthy) healthy++;
        if (n?.outOfService) outOfService++;
      }
    }
    return { healthy, outOfService };
  };
  const matchesPair = (volume: VolumeId, node: NodeId, e: { volume: VolumeId; node: NodeId; volumeWide: boolean }) =>
    e.volume === volume && (e.volumeWide || e.node === node);

  return {
    readiness: () => readiness,
    loop,
    watches: () => watches,
    volumesForPv: o.volumesForPv ?? ((pv) => pvs.get(pv) ?? []),
    podName: o.podName ?? ((uid) => pods.get(uid)),
    // O(1) pair checks first: only pairs that have operation state pay for a scan.
    pendingOperation(volume, node): PendingOperation | undefined {
      if (!state.isOperationPending(volume, node)) return undefined;
      const forbidden = state.multiAttachForbidden(volume);
      return state.pendingOperations().find((p) => p.volume === volume && (forbidden || matchesPair(volume, node, p)));
    },
    backoff(volume, node, at): BackoffEntry[] {
      if (state.isSafeToRetry(volume, node, 'attach', at) && state.isSafeToRetry(volume, node, 'detach', at)) return [];
      return state.backoffOperations(at).filter((b) => matchesPair(volume, node, b));
    },
    nodeConditionCounts: o.nodeConditionCounts ?? scanConditions,
    apiClient: () => apiClient,
    now: clock ?? (() => now),
    options,
    setNow: (ms) => { settable(); now = ms; },
    advance: (ms) => { settable(); now += ms; },
    setReadiness: (r) => { readiness = r; },
    setPod: (uid, ref) => { if (ref) pods.set(uid, ref); else pods.delete(uid); },
    setPvVolumes: (pv, names) => { pvs.set(pv, names); },
    setWatches: (w) => { watches = w; },
    setApiClient: (load) => { apiClient = load; },
  };
}
