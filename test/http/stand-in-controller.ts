/**
 * Stand-in controller for `npm run bench:http -- --stand-in` (bench/http.bench.ts): the HTTP
 * path alone, without a simulator. A WorldState filled directly (nodes x 10 volumes: 9 RWO
 * volumes of its own and one RWX volume shared by 10 nodes, every pair desired, attached and
 * mounted; ready in seconds at 100k nodes) and a reconcile loop every 100 ms (sliding) that runs
 * the real planner (worker pool), starts the plan's detaches and attaches and completes them on
 * the next pass, and churns pods (they leave, the "kubelet" unmounts, the detach follows; they
 * come back later) so every pass has work. The default bench runs the real controller.
 */
import { performance } from 'node:perf_hooks';
import { createWorldState, type NodeId, type VolumeId, type WorldState } from '../../src/cache/world-state.js';
import type { VolumeInfo } from '../../src/http/inspection-view.js';
import { createPlanner, type PlanOptions, type Planner } from '../../src/kernel/planner.js';
import { createDurationWindow, type DurationWindow } from '../../src/metrics/duration-window.js';
import { createFakeInspectionView, type FakeInspectionView } from './fake-inspection-view.js';

export const VOLUMES_PER_NODE = 10;
const DRIVER = 'bench.csi.k8s.io';
export const PLUGIN = `kubernetes.io/csi:${DRIVER}`;
const OPTIONS: PlanOptions = { maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false };
const PERIOD_MS = 100;
/** Pods moved per pass (half leave, half come back). */
const CHURN_PER_PASS = 100;

export const nodeName = (i: number) => `node-${i}`;
/** Volume k of node i (k = 9: the RWX volume shared by nodes 10j..10j+9). */
export const volumeName = (i: number, k: number) =>
  k === VOLUMES_PER_NODE - 1 ? `kubernetes.io/csi/${DRIVER}^shared-${Math.floor(i / 10)}` : `kubernetes.io/csi/${DRIVER}^n${i}-v${k}`;

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface StandInController {
  readonly state: WorldState;
  /** Pass and plan durations (ms). */
  readonly pass: DurationWindow;
  readonly plan: DurationWindow;
  /** Every pass duration (ms) is also pushed here while set. */
  samples: number[] | undefined;
  stop(): Promise<void>;
}

interface Fleet { state: WorldState; inUse: Array<Set<string>> }

const RWO: VolumeInfo['accessModes'] = ['ReadWriteOnce'];
const RWX: VolumeInfo['accessModes'] = ['ReadWriteMany'];

/** The volume's id, interned with its policy and info if it is new (ids die with their last pair). */
function ensureVolume(state: WorldState, name: string): VolumeId {
  const existing = state.findVolume(name);
  if (existing !== undefined) return existing;
  const v = state.internVolume(name);
  const handle = name.slice(name.indexOf('^') + 1);
  const shared = handle.startsWith('shared-');
  state.setMultiAttachForbidden(v, !shared);
  const info: VolumeInfo = { specName: `pv-${handle}`, pvName: `pv-${handle}`, plugin: PLUGIN, csi: { driver: DRIVER, volumeHandle: handle }, accessModes: shared ? RWX : RWO, migrated: false };
  state.setVolumeInfo(v, info);
  state.setVolumePlugin(v, PLUGIN);
  return v;
}

function buildFleet(nodes: number): Fleet {
  const state = createWorldState({ capacity: { nodes, volumes: nodes * VOLUMES_PER_NODE, pairs: nodes * VOLUMES_PER_NODE } });
  const inUse: Array<Set<string>> = [];
  for (let i = 0; i < nodes; i++) {
    const n = state.internNode(nodeName(i));
    state.setNodeManaged(n);
    state.setNodeHealthy(n, true);
    const mounted = new Set<string>();
    for (let k = 0; k < VOLUMES_PER_NODE; k++) {
      const name = volumeName(i, k);
      const v = ensureVolume(state, name);
      state.addDesiredPod(v, n, `pod-${i}-${k}`);
      state.markAttached(v, n);
      mounted.add(name);
    }
    state.setVolumesInUse(n, [...mounted]);
    state.clearStatusUpdateNeeded(n);
    inUse.push(mounted);
  }
  return { state, inUse };
}

/** The reconcile loop stand-in: plan, act, churn; sliding 100 ms period. */
function startLoop(fleet: Fleet, planner: Planner, nodes: number): StandInController {
  const { state } = fleet;
  const pass = createDurationWindow({ capacity: 4096 });
  const plan = createDurationWindow({ capacity: 4096 });
  const random = rng(7);
  const away: Array<{ n: NodeId; uid: string; name: string }> = [];
  let inflight: Array<{ v: VolumeId; n: NodeId; op: 'attach' | 'detach'; i: number; name: string }> = [];
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const once = async () => {
    const t0 = performance.now();
    const now = Date.now();
    for (const o of inflight) {
      if (o.op === 'attach') {
        state.markAttached(o.v, o.n);
        fleet.inUse[o.i].add(o.name);
        state.setVolumesInUse(o.n, [...fleet.inUse[o.i]]);
      } else {
        state.markDetached(o.v, o.n);
      }
      state.completeOperation(o.v, o.n, o.op, true, now);
    }
    inflight = [];
    const p0 = performance.now();
    const result = await planner.plan(now, OPTIONS);
    plan.record(performance.now() - p0);
    for (const [list, op] of [[result.detaches, 'detach'], [result.attaches, 'attach']] as const) {
      for (let j = 0; j < list.length; j++) {
        const v = list.volume(j);
        const n = list.node(j);
        if (op === 'detach') state.removeFromReportSet(v, n);
        if (state.tryStartOperation(v, n, op, now) !== 'started') continue;
        const name = state.volumeName(v);
        const i = Number(state.nodeName(n).slice(5));
        inflight.push({ v, n, op, i, name });
      }
    }
    for (const n of result.statusNodes) state.clearStatusUpdateNeeded(n);
    // Churn: pods leave (the kubelet unmounts, the detach follows) and earlier ones come back.
    for (let c = 0; c < CHURN_PER_PASS / 2 && away.length > 0; c++) {
      const back = away.shift()!;
      state.addDesiredPod(ensureVolume(state, back.name), back.n, back.uid);
    }
    for (let c = 0; c < CHURN_PER_PASS / 2; c++) {
      const i = Math.floor(random() * nodes);
      const k = Math.floor(random() * (VOLUMES_PER_NODE - 1));
      const name = volumeName(i, k);
      const v = state.findVolume(name);
      const n = state.findNode(nodeName(i));
      const uid = `pod-${i}-${k}`;
      if (v === undefined || n === undefined || !state.removeDesiredPod(v, n, uid)) continue;
      fleet.inUse[i].delete(name);
      state.setVolumesInUse(n, [...fleet.inUse[i]]);
      away.push({ n, uid, name });
    }
    const ms = performance.now() - t0;
    pass.record(ms);
    loop.samples?.push(ms);
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = once().catch((err) => console.error('pass failed', err)).finally(schedule);
    }, PERIOD_MS);
  };
  const loop: StandInController = {
    state,
    pass,
    plan,
    samples: undefined,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await planner.close();
    },
  };
  schedule();
  return loop;
}

/** Fills the fleet and starts the loop; `fillSeconds` is how long the fill took. */
export function startStandInController(nodes: number): StandInController & { fillSeconds: number } {
  const t0 = performance.now();
  const fleet = buildFleet(nodes);
  const fillSeconds = (performance.now() - t0) / 1000;
  const loop = startLoop(fleet, createPlanner({ state: fleet.state }), nodes);
  return Object.assign(loop, { fillSeconds });
}

/** The inspection view the benches serve the stand-in through: ready, leading, every node healthy, pods named by UID. */
export function standInView(loop: StandInController, nodes: number): FakeInspectionView {
  return createFakeInspectionView({
    state: loop.state,
    now: () => Date.now(),
    loop: { pass: loop.pass, plan: loop.plan },
    readiness: { ready: true, role: 'leader' },
    nodeConditionCounts: () => ({ healthy: nodes, outOfService: 0 }),
    podName: (uid) => ({ namespace: 'bench', name: uid }),
  });
}
