// Inspection API benchmark (issue 5): `npm run bench:http` [-- --sizes 10000,100000 --duration 4
// --window 5 --rounds 3 --rate 2000 --connections 10].
//
// Stand-in controller: the real `startController` needs an API server holding the whole fleet,
// so this bench fills a WorldState directly (nodes x 10 volumes: 9 RWO volumes of its own and one
// RWX volume shared by 10 nodes, every pair desired, attached and mounted) and runs a reconcile
// loop of its own every 100 ms (sliding): the real planner (`createPlanner`, worker pool), then
// the plan's detaches and attaches started and completed on the next pass, plus churn (pods
// leaving and coming back, volumes unmounted by the "kubelet") so every pass has work.
//
// Load comes from autocannon in a child process (this file, forked with BENCH_HTTP_CLIENT=1), so
// it does not share the server's event loop. Per fleet size, in one run:
//   capacity: each endpoint alone, unthrottled, `--connections` connections, `--duration` s:
//             a bare fastify route on the same app (the ceiling), /healthz, /api/v1/summary,
//             /api/v1/nodes/{random}, /api/v1/volumes/{random}, /metrics.
//   loop:     reconcile pass p50/p99 idle vs under a mixed load (node and volume lookups,
//             summaries) capped with autocannon's overallRate `--rate` so it leaves the loop its
//             share of the 2 cores; `--rounds` alternations of `--window` s idle and loaded, so
//             background noise on a shared machine falls on both alike.
// Results: bench/results/http.json (top-level figures from the largest size).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createWorldState, type NodeId, type VolumeId, type WorldState } from '../src/cache/world-state.js';
import type { VolumeInfo } from '../src/http/inspection-view.js';
import { buildServer, listenServer } from '../src/http/server.js';
import { createPlanner, type PlanOptions, type Planner } from '../src/kernel/planner.js';
import { createControllerMetrics } from '../src/metrics/controller-metrics.js';
import { createDurationWindow, type DurationWindow } from '../src/metrics/duration-window.js';
import { createFakeInspectionView } from '../test/http/fake-inspection-view.js';

const VOLUMES_PER_NODE = 10;
const DRIVER = 'bench.csi.k8s.io';
const PLUGIN = `kubernetes.io/csi:${DRIVER}`;
const OPTIONS: PlanOptions = { maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false };
const PERIOD_MS = 100;
/** Pods moved per pass (half leave, half come back). */
const CHURN_PER_PASS = 100;
type Target = 'bare' | 'healthz' | 'summary' | 'node' | 'volume' | 'metrics' | 'mixed';

const nodeName = (i: number) => `node-${i}`;
const volumeName = (i: number, k: number, nodes: number) =>
  k === VOLUMES_PER_NODE - 1 ? `kubernetes.io/csi/${DRIVER}^shared-${Math.floor(i / 10) % Math.ceil(nodes / 10)}` : `kubernetes.io/csi/${DRIVER}^n${i}-v${k}`;

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- load client (child process) ------------------------------------------------------------

interface RunRequest { url: string; target: Target; nodes: number; duration: number; connections: number; rate?: number }
interface RunResult { req_per_s: number; p50_ms: number; p99_ms: number; non2xx: number; errors: number }
interface AutocannonResult {
  requests: { total: number };
  latency: { p50: number; p99: number };
  duration: number;
  non2xx: number;
  errors: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;

function pathFor(target: Target, nodes: number, random: () => number, turn: number): string {
  const i = Math.floor(random() * nodes);
  switch (target) {
    case 'bare': return '/bare';
    case 'healthz': return '/healthz';
    case 'summary': return '/api/v1/summary';
    case 'metrics': return '/metrics';
    case 'node': return `/api/v1/nodes/${nodeName(i)}`;
    case 'volume': return `/api/v1/volumes/${encodeURIComponent(volumeName(i, Math.floor(random() * VOLUMES_PER_NODE), nodes))}`;
    case 'mixed': return pathFor(turn % 10 === 9 ? 'summary' : turn % 3 === 2 ? 'volume' : 'node', nodes, random, 0);
  }
}

async function clientMain(): Promise<void> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  process.on('message', async (msg: RunRequest) => {
    const random = rng(msg.nodes ^ msg.target.length);
    let turn = 0;
    const result = await autocannon({
      url: msg.url,
      connections: msg.connections,
      duration: msg.duration,
      ...(msg.rate ? { overallRate: msg.rate } : {}),
      requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, path: pathFor(msg.target, msg.nodes, random, turn++) }) }],
    });
    const out: RunResult = {
      req_per_s: Math.round(result.requests.total / result.duration),
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors,
    };
    process.send?.(out);
  });
}

// ---- stand-in controller ---------------------------------------------------------------------

interface Fleet { state: WorldState; inUse: Array<Set<string>>; pods: number }

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
      const name = volumeName(i, k, nodes);
      const v = ensureVolume(state, name);
      state.addDesiredPod(v, n, `pod-${i}-${k}`);
      state.markAttached(v, n);
      mounted.add(name);
    }
    state.setVolumesInUse(n, [...mounted]);
    state.clearStatusUpdateNeeded(n);
    inUse.push(mounted);
  }
  return { state, inUse, pods: nodes * VOLUMES_PER_NODE };
}

interface Loop {
  pass: DurationWindow;
  plan: DurationWindow;
  /** Every pass duration (ms) is also pushed here while set. */
  samples: number[] | undefined;
  stop(): Promise<void>;
}

/** The reconcile loop stand-in: plan, act, churn; sliding 100 ms period. */
function startLoop(fleet: Fleet, planner: Planner, nodes: number): Loop {
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
      const name = volumeName(i, k, nodes);
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
  const loop: Loop = {
    pass,
    plan,
    samples: undefined,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
  schedule();
  return loop;
}

// ---- driver ----------------------------------------------------------------------------------

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};

interface EndpointResult { name: string; nodes: number; req_per_s: number; p50_ms: number; p99_ms: number }
interface SizeResult {
  nodes: number;
  fill_s: number;
  ceiling_req_per_s: number;
  loop_p99_ms_idle: number;
  loop_p99_ms_loaded: number;
  loop_p50_ms_idle: number;
  loop_p50_ms_loaded: number;
  loaded_rate_req_per_s: number;
  loaded_p99_ms: number;
  node_vs_ceiling: number;
}

function runLoad(child: ChildProcess, req: RunRequest): Promise<RunResult> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as RunResult));
    child.send(req);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Nearest-rank percentile. */
const percentile = (xs: number[], q: number) => {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
};
const round = (x: number) => Math.round(x * 1000) / 1000;

async function benchSize(nodes: number, child: ChildProcess, o: { duration: number; window: number; rounds: number; rate: number; connections: number }) {
  const t0 = performance.now();
  const fleet = buildFleet(nodes);
  const fill = (performance.now() - t0) / 1000;
  const { state } = fleet;
  const planner = createPlanner({ state });
  const loop = startLoop(fleet, planner, nodes);
  const view = createFakeInspectionView({
    state,
    now: () => Date.now(),
    loop: { pass: loop.pass, plan: loop.plan },
    readiness: { ready: true, role: 'leader' },
    nodeConditionCounts: () => ({ healthy: nodes, outOfService: 0 }),
    podName: (uid) => ({ namespace: 'bench', name: uid }),
  });
  const metrics = createControllerMetrics();
  metrics.setSources({
    totalVolumes: () => [{ plugin: PLUGIN, desired: state.counts().desiredPairs, actual: state.counts().attached + state.counts().uncertain }],
    operations: () => ({ pending: state.counts().pendingOperations, backoff: state.counts().backoffOperations }),
    conflicts: () => state.counts().conflicts,
  });
  const app = buildServer({ state, view, metrics, listenHost: '127.0.0.1' });
  app.get('/bare', () => ({ ok: true }));
  const url = await listenServer(app, '127.0.0.1:0');
  console.log(`\n${nodes} nodes (${nodes * VOLUMES_PER_NODE} pairs): filled in ${fill.toFixed(1)} s; ${url}`);

  const endpoints: EndpointResult[] = [];
  const targets = ['bare', 'healthz', 'summary', 'node', 'volume', 'metrics'] as const;
  for (const target of targets) await runLoad(child, { url, target, nodes, duration: 1, connections: o.connections }); // JIT warm-up
  for (const target of targets) {
    const r = await runLoad(child, { url, target, nodes, duration: o.duration, connections: o.connections });
    const name = target === 'bare' ? 'bare fastify route' : target === 'node' ? '/api/v1/nodes/{name}' : target === 'volume' ? '/api/v1/volumes/{uniqueName}' : target === 'summary' ? '/api/v1/summary' : `/${target}`;
    endpoints.push({ name, nodes, req_per_s: r.req_per_s, p50_ms: r.p50_ms, p99_ms: r.p99_ms });
    console.log(`  ${name.padEnd(30)} ${String(r.req_per_s).padStart(7)} req/s  p50 ${r.p50_ms} ms  p99 ${r.p99_ms} ms${r.non2xx || r.errors ? `  non2xx ${r.non2xx} errors ${r.errors}` : ''}`);
  }

  // Loop impact: idle and loaded windows interleaved, so background noise on the shared
  // machine falls on both alike; percentiles over all samples of each kind.
  const idleSamples: number[] = [];
  const loadedSamples: number[] = [];
  let loadedRate = 0;
  let loadedP99 = 0;
  for (let round = 0; round < o.rounds; round++) {
    await sleep(1000);
    loop.samples = idleSamples;
    await sleep(o.window * 1000);
    loop.samples = undefined;
    const run = runLoad(child, { url, target: 'mixed', nodes, duration: o.window + 1, connections: o.connections, rate: o.rate });
    await sleep(1000);
    loop.samples = loadedSamples;
    const r = await run;
    loop.samples = undefined;
    loadedRate += r.req_per_s / o.rounds;
    loadedP99 = Math.max(loadedP99, r.p99_ms);
  }
  const idle = { p50: percentile(idleSamples, 0.5), p99: percentile(idleSamples, 0.99), n: idleSamples.length };
  const loaded = { p50: percentile(loadedSamples, 0.5), p99: percentile(loadedSamples, 0.99), n: loadedSamples.length };
  const loadedResult = { req_per_s: Math.round(loadedRate), p99_ms: loadedP99 };
  console.log(`  loop pass idle   p50 ${idle.p50.toFixed(2)} ms  p99 ${idle.p99.toFixed(2)} ms  (${idle.n} passes)`);
  console.log(`  loop pass loaded p50 ${loaded.p50.toFixed(2)} ms  p99 ${loaded.p99.toFixed(2)} ms  (${loaded.n} passes, mixed load ${loadedResult.req_per_s} req/s, p99 ${loadedResult.p99_ms} ms)`);

  await app.close();
  await loop.stop();
  await planner.close();
  const ceiling = endpoints[0].req_per_s;
  const node = endpoints.find((e) => e.name.startsWith('/api/v1/nodes'))!;
  const size: SizeResult = {
    nodes,
    fill_s: round(fill),
    ceiling_req_per_s: ceiling,
    loop_p99_ms_idle: round(idle.p99),
    loop_p99_ms_loaded: round(loaded.p99),
    loop_p50_ms_idle: round(idle.p50),
    loop_p50_ms_loaded: round(loaded.p50),
    loaded_rate_req_per_s: loadedResult.req_per_s,
    loaded_p99_ms: loadedResult.p99_ms,
    node_vs_ceiling: round(node.req_per_s / ceiling),
  };
  return { endpoints, size };
}

async function main(): Promise<void> {
  const sizes = arg('sizes', '10000,100000').split(',').map(Number);
  const o = { duration: Number(arg('duration', '4')), window: Number(arg('window', '5')), rounds: Number(arg('rounds', '3')), rate: Number(arg('rate', '2000')), connections: Number(arg('connections', '10')) };
  const loadStart = loadavg().map(round);
  const child = fork(new URL(import.meta.url).pathname, [], { env: { ...process.env, BENCH_HTTP_CLIENT: '1' }, execArgv: ['--import', 'tsx'] });
  const endpoints: EndpointResult[] = [];
  const runs: SizeResult[] = [];
  try {
    for (const nodes of sizes) {
      const r = await benchSize(nodes, child, o);
      endpoints.push(...r.endpoints);
      runs.push(r.size);
    }
  } finally {
    child.kill();
  }
  const top = runs[runs.length - 1];
  const out = {
    ceiling_req_per_s: top.ceiling_req_per_s,
    loop_p99_ms_idle: top.loop_p99_ms_idle,
    loop_p99_ms_loaded: top.loop_p99_ms_loaded,
    endpoints,
    command: `npm run bench:http -- ${args.join(' ')}`.trim(),
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version, loadavg_start: loadStart, loadavg_end: loadavg().map(round) },
    controller: 'stand-in loop over a directly filled WorldState (real planner, worker pool); not startController',
    options: o,
    runs,
  };
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/http.json', import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
  console.log('\nwrote bench/results/http.json');
}

if (process.env.BENCH_HTTP_CLIENT === '1') await clientMain();
else await main();
