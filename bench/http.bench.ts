// Inspection API benchmark: `npm run bench:http` [-- --nodes 10000,100000 --churn 100
// --duration 5 --reps 4 --paced 60 --window 10 --rounds 12 --rate 2000 --connections 10 --timeout 2400
// --settle 30 --qps 20000 --min-free-mb 1536 --stand-in --http1 --out FILE --profile DIR].
// `--http1` runs the controller with `--kube-api-http2=false` (its hot calls over HTTP/1.1).
// `--alloc` measures instead the heap each inspection request allocates, by allocating function
// (bench/lib/http-alloc.ts: the stand-in at one size, `--duration` s per route, default 4,
// `--routes bare,bare-sized,node,volume,summary`; results in bench/results/http-alloc.json).
//
// Subject, per fleet size: the real controller reconciling a simulated fleet. The simulator
// (bench/lib/sim-child.ts: nodes × 10 pods, each with its own PVC/PV, attacher and kubelets on)
// runs in a child process; the controller and its inspection API (startControllerWithApi, leader
// election off, API qps and burst `--qps`, the in-flight bound of the simulator's
// client sizing (src/sim/server/client-sizing.ts), one plan worker) run in this process. The bench waits until
// every desired pair is attached and reported, then starts `--churn` pod changes/s, which run
// until the end of the size, so every reconcile pass has work while it is measured (from
// `--settle` s later).
// `--stand-in` measures test/http/stand-in-controller.ts instead (a WorldState filled directly, a
// 100 ms loop over the real planner with churn; ready in seconds at 100k nodes): the HTTP path
// alone, without the simulator's CPU and memory; it writes no results file unless `--out`.
//
// Load comes from autocannon in child processes (this file with BENCH_HTTP_ROLE=client), so it
// does not share the server's event loop; paths take random node names and a random sample of
// volume names read from the controller's state. In one run per size:
//   capacity: each endpoint alone, unthrottled, `--connections` connections, `--duration` s,
//             `--reps` sweeps alternately forwards and backwards: a bare route (the ceiling) and a
//             bare route sending a constant node-sized body, both on a second app built by the
//             same buildServer over the same controller in this process; /healthz,
//             /api/v1/summary, /api/v1/nodes/{name}, /api/v1/volumes/{uniqueName}, /metrics;
//             req/s, p50 and p99 are medians over the sweeps (`p99_ms_worst` the worst).
//   paced:    node lookups alone at `--rate` req/s for `--paced` s (latency when the server is
//             not saturated; 60 s covers one round of the controller's once-a-minute full scans).
//   loop:     reconcile pass durations (every pass, teed from `reconciler.passTime`) idle vs under
//             a mixed load (node and volume lookups, summaries) paced at `--rate` by a niced
//             client; `--rounds` alternations of `--window` s each, so the machine's background
//             load falls on both alike; and this process's event loop lag in the same windows.
// `--profile DIR` writes a V8 CPU profile of this process (controller and API) over the loop
// windows, idle and loaded, to DIR/http-<nodes>.cpuprofile, one of the first capacity sweep
// of each endpoint to DIR/http-<nodes>-capacity-<target>.cpuprofile, and one of the paced
// minute to DIR/http-<nodes>-paced.cpuprofile.
// Processes: this file re-executes itself (BENCH_HTTP_ROLE=driver) with a heap sized for the
// largest fleet; the driver and every child stop when the launcher goes away (IPC disconnect),
// and bench/lib/children.ts kills children still running on any exit of the driver.
// Results: bench/results/http.json; runs of other sizes already there (same subject) are kept,
// the top-level figures come from the largest size.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, freemem, loadavg, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { commandLine, givenFlags } from './lib/args.js';
import { forkTs, nextMessage, runMain, SEMI_SPACE_FLAG, type Child } from './lib/children.js';
import { ALLOC_ROUTES, type AllocRoute } from './lib/http-alloc.js';
import { readProc } from './lib/proc-stats.js';
import { phaseBar } from './lib/progress.js';
import type { SimChildMessage } from './lib/sim-child.js';
import { percentile } from './lib/stats.js';
import { startCpuProfile } from './lib/cpu-profile.js';
import { createGcRecorder } from './lib/gc-pauses.js';
import { SIMULATOR_CLIENT_SIZING } from '../src/sim/server/client-sizing.js';

const ROLE = process.env.BENCH_HTTP_ROLE;
const args = process.argv.slice(2);
const cli = commandLine('bench:http', {
  nodes: { type: 'string', default: '10000,100000', arg: 'N,N…', help: 'fleet sizes, one run each' },
  churn: { type: 'string', default: '100', arg: 'PER_S', help: 'pod changes/s while measured' },
  duration: { type: 'string', arg: 'S', help: 'seconds per capacity sweep of an endpoint (default 5; 4 per route with --alloc)' },
  reps: { type: 'string', default: '4', help: 'capacity sweeps' },
  paced: { type: 'string', default: '60', arg: 'S', help: 'seconds of paced node lookups' },
  window: { type: 'string', default: '10', arg: 'S', help: 'seconds per idle / loaded loop window' },
  rounds: { type: 'string', default: '12', help: 'idle + loaded window pairs' },
  rate: { type: 'string', default: '2000', arg: 'PER_S', help: 'paced and mixed load rate' },
  connections: { type: 'string', default: '10', help: 'autocannon connections' },
  timeout: { type: 'string', default: '2400', arg: 'S', help: 'convergence timeout' },
  settle: { type: 'string', default: '30', arg: 'S', help: 'seconds of churn before measuring' },
  qps: { type: 'string', default: String(SIMULATOR_CLIENT_SIZING.kubeApiQps), help: "the controller's API qps and burst" },
  'min-free-mb': { type: 'string', default: '1536', arg: 'MB', help: 'give up converging below this free memory' },
  'stand-in': { type: 'boolean', help: 'measure test/http/stand-in-controller.ts (no simulator); no results file unless --out' },
  http1: { type: 'boolean', help: "the controller's hot calls over HTTP/1.1" },
  alloc: { type: 'boolean', help: 'instead: heap allocated per request, by allocating function (stand-in, one size)' },
  routes: { type: 'string', arg: 'R,R…', help: `with --alloc: routes (default ${ALLOC_ROUTES.join(',')})` },
  profile: { type: 'string', arg: 'DIR', help: 'V8 CPU profiles of the measured phases' },
  out: { type: 'string', arg: 'FILE', help: 'results file (default bench/results/http.json, http-alloc.json with --alloc)' },
});
const arg = (name: 'profile' | 'out') => cli.values[name] ?? '';
const num = (name: Parameters<typeof cli.num>[0]) => cli.num(name);
const STAND_IN = cli.values['stand-in'];
const HTTP1 = cli.values.http1;
const SIZES = cli.ints('nodes');
const PODS_PER_NODE = 10;
/** Volume names sampled for lookups (the client holds them all). */
const VOLUME_SAMPLE = 20_000;
/** Heap of the driver, which holds the controller: ~3.6 GB RSS at 10k nodes; the e2e bench saw 8 GB run out at 50k. */
const heapMb = (nodes: number) => (STAND_IN ? 4096 : Math.min(20_480, Math.max(4096, Math.ceil(nodes / 2500) * 1024)));

// ---- load client (child process) ------------------------------------------------------------

type Target = 'bare' | 'bare-sized' | 'healthz' | 'summary' | 'node' | 'volume' | 'metrics' | 'mixed';
interface Names { nodes: string[]; volumes: string[] }
interface RunRequest { url: string; target: Target; duration: number; connections: number; rate?: number; seed: number }
type ClientMessage = ({ type: 'names' } & Names) | ({ type: 'run' } & RunRequest);
interface RunResult { req_per_s: number; p50_ms: number; p99_ms: number; non2xx: number; errors: number; cpu_us_per_req?: number; elu?: number }
interface AutocannonResult { requests: { total: number }; latency: { p50: number; p99: number }; duration: number; non2xx: number; errors: number }
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;

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

function pathFor(target: Target, names: Names, random: () => number, turn: number): string {
  const node = () => names.nodes[Math.floor(random() * names.nodes.length)];
  switch (target) {
    case 'bare': return `/bare/${node()}`;
    case 'bare-sized': return `/bare-sized/${node()}`;
    case 'healthz': return '/healthz';
    case 'summary': return '/api/v1/summary';
    case 'metrics': return '/metrics';
    case 'node': return `/api/v1/nodes/${node()}`;
    case 'volume': return `/api/v1/volumes/${encodeURIComponent(names.volumes[Math.floor(random() * names.volumes.length)])}`;
    case 'mixed': return pathFor(turn % 10 === 9 ? 'summary' : turn % 3 === 2 ? 'volume' : 'node', names, random, 0);
  }
}

function clientMain(): void {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  let names: Names = { nodes: [], volumes: [] };
  process.on('disconnect', () => process.exit(0));
  process.on('message', async (msg: ClientMessage) => {
    if (msg.type === 'names') {
      names = { nodes: msg.nodes, volumes: msg.volumes };
      return;
    }
    const random = rng(msg.seed);
    let turn = 0;
    // Bare routes take the same random path parameter as node lookups, so the client does the
    // same work for both (autocannon rebuilds every request setupRequest rewrites).
    const result = await autocannon({
      url: msg.url,
      connections: msg.connections,
      duration: msg.duration,
      ...(msg.rate ? { overallRate: msg.rate } : {}),
      requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, path: pathFor(msg.target, names, random, turn++) }) }],
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

// ---- subjects: what the load is sent to -------------------------------------------------------

interface Subject {
  /** The inspection API under test. */
  apiUrl: string;
  /** An app with `/bare/:name` and `/bare-sized/:name` in the same process. */
  bareUrl: string;
  /** Every node; a fresh sample of the live volumes (churn deletes some). */
  names(): Names;
  nodeBodyBytes: number;
  /** Every reconcile pass duration (ms) is pushed to `sink` while it is set. */
  setPassSink(sink: number[] | undefined): void;
  /** Setup figures and end-of-run readings for the results. */
  figures(): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/**
 * The ceiling routes: a constant `{ok: true}`, and the bytes of a node answer from a constant,
 * which separates moving the answer (serialising, writing, the client parsing it) from reading
 * the state.
 */
function addBareRoutes(app: FastifyInstance, sized: () => string): void {
  app.get('/bare/:name', () => ({ ok: true }));
  app.get('/bare-sized/:name', (_request, reply) => { reply.type('application/json; charset=utf-8').send(sized()); });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
const seconds = (fromMs: number) => round((performance.now() - fromMs) / 1000, 1);

/** Up to `k` items of `n` drawn uniformly (reservoir), in a seeded order. */
function sample<T>(n: number, k: number, at: (i: number) => T, random: () => number): T[] {
  const out: T[] = [];
  for (let i = 0; i < n; i++) {
    if (out.length < k) out.push(at(i));
    else {
      const j = Math.floor(random() * (i + 1));
      if (j < k) out[j] = at(i);
    }
  }
  return out;
}

async function startControllerSubject(nodes: number, o: Options): Promise<Subject> {
  const { startControllerWithApi } = await import('../src/manager/run-controller.js');
  const { createInspectionView } = await import('../src/manager/inspection.js');
  const { buildServer, listenServer } = await import('../src/http/server.js');
  const dir = mkdtempSync(join(tmpdir(), 'fa-http-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const expected = nodes * PODS_PER_NODE;
  let sim: Child | undefined;
  let running: Awaited<ReturnType<typeof startControllerWithApi>> | undefined;
  let bare: FastifyInstance | undefined;
  const stop = async () => {
    await bare?.close();
    await running?.stop();
    await sim?.stop(10_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const tSim = performance.now();
    sim = forkTs(new URL('./lib/sim-child.ts', import.meta.url).pathname, [`--max-old-space-size=${nodes >= 50_000 ? 8192 : 4096}`, SEMI_SPACE_FLAG], {
      FA_SIM_CHILD: JSON.stringify({ nodes, podsPerNode: PODS_PER_NODE, seed: 1, kubeconfigOut: kubeconfig }),
      LOG_LEVEL: 'warn',
    });
    const fleetBar = phaseBar('fleet', nodes, 'nodes');
    sim.process.on('message', (m: SimChildMessage) => m.type === 'progress' && fleetBar.update(m.done));
    await nextMessage<SimChildMessage>(sim, (m) => m.type === 'ready', o.timeout * 1000);
    const simS = seconds(tSim);
    fleetBar.done(`${simS} s`);

    const tCtl = performance.now();
    running = await startControllerWithApi({
      kubeconfig: { path: kubeconfig }, listen: '127.0.0.1:0', leaderElect: false, kubeApiQps: o.qps, kubeApiBurst: o.qps, kubeApiMaxInFlight: SIMULATOR_CLIENT_SIZING.kubeApiMaxInFlight, kubeApiHttp2: !HTTP1, workers: 1,
    });
    const { ctl } = running;
    const bar = phaseBar('converge', expected, 'pairs');
    for (;;) {
      const c = ctl.state.counts();
      bar.update(Math.min(c.attached, c.reportedAttached), `desired ${c.desiredPairs}  attached ${c.attached}  reported ${c.reportedAttached}  pending ${c.pendingOperations}`);
      if (c.desiredPairs === expected && c.attached === expected && c.reportedAttached === expected) break;
      if (performance.now() - tCtl > o.timeout * 1000) throw new Error(`not converged within ${o.timeout} s: ${JSON.stringify(c)}`);
      if (sim.process.exitCode !== null) throw new Error(`simulator exited (${sim.process.exitCode})`);
      // Other work shares this machine: give up before the kernel's OOM killer picks a victim.
      if (freemem() < o.minFreeMb * 2 ** 20) throw new Error(`not converged: free memory below ${o.minFreeMb} MB after ${seconds(tCtl)} s: ${JSON.stringify(c)}`);
      await sleep(500);
    }
    const convergeS = seconds(tCtl);
    bar.done(`${convergeS} s`);

    // Names from the controller's own state: every node, a sample of the volumes.
    const random = rng(nodes);
    const nodeNames = ctl.state.nodeIds(-1, Number.MAX_SAFE_INTEGER).map((n) => ctl.state.nodeName(n));
    const volumes = () => {
      const ids = ctl.state.volumeIds(-1, Number.MAX_SAFE_INTEGER);
      return sample(ids.length, VOLUME_SAMPLE, (i) => ctl.state.volumeName(ids[i]), random);
    };

    const { DEFAULT_CONTROLLER_OPTIONS } = await import('../src/manager/controller-options.js');
    const view = createInspectionView(ctl, DEFAULT_CONTROLLER_OPTIONS);
    bare = buildServer({ state: ctl.state, view, metrics: ctl.metrics, listenHost: '127.0.0.1' });
    let sized = '';
    addBareRoutes(bare, () => sized);
    const bareUrl = await listenServer(bare, '127.0.0.1:0');
    sized = await (await fetch(`${running.url}/api/v1/nodes/${nodeNames[Math.floor(nodeNames.length / 2)]}`)).text();

    let churnIndexMs: number | null = null;
    if (o.churn > 0) {
      sim.process.send({ type: 'churn', rate: o.churn });
      const m = await nextMessage<SimChildMessage>(sim, (x) => x.type === 'churn-started', 10 * 60_000);
      churnIndexMs = m.type === 'churn-started' ? Math.round(m.indexMs) : null;
      await sleep(o.settle * 1000); // past the cold start's garbage and the first changes
    }

    // Tee every pass: the window itself keeps only its last samples, for /api/v1/summary.
    const window = ctl.reconciler.passTime;
    const record = window.record.bind(window);
    let sink: number[] | undefined;
    window.record = (ms) => {
      record(ms);
      sink?.push(ms);
    };
    const simChild = sim;
    return {
      apiUrl: running.url,
      bareUrl,
      names: () => ({ nodes: nodeNames, volumes: volumes() }),
      nodeBodyBytes: Buffer.byteLength(sized),
      setPassSink: (s) => { sink = s; },
      async figures() {
        simChild.process.send({ type: 'stats' });
        const stats = await nextMessage<SimChildMessage>(simChild, (m) => m.type === 'stats', 60_000);
        const churn = stats.type === 'stats' ? stats.stats.churn ?? {} : {};
        return {
          sim_generate_s: simS,
          converge_s: convergeS,
          churn_per_s: o.churn,
          churn_index_ms: churnIndexMs,
          churn_stats: churn,
          counts_at_end: ctl.state.counts(),
          controller_process_peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
          sim_peak_rss_mb: Math.round(readProc(simChild.pid)?.peakRssMb ?? 0),
        };
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function startStandInSubject(nodes: number): Promise<Subject> {
  const { startStandInController, standInView, nodeName, volumeName, PLUGIN, VOLUMES_PER_NODE } = await import('../test/http/stand-in-controller.js');
  const { createControllerMetrics } = await import('../src/metrics/controller-metrics.js');
  const { buildServer, listenServer } = await import('../src/http/server.js');
  const loop = startStandInController(nodes);
  const { state } = loop;
  const view = standInView(loop, nodes);
  const metrics = createControllerMetrics();
  metrics.setSources({
    totalVolumes: () => [{ plugin: PLUGIN, desired: state.counts().desiredPairs, actual: state.counts().attached + state.counts().uncertain }],
    operations: () => ({ pending: state.counts().pendingOperations, backoff: state.counts().backoffOperations }),
    conflicts: () => state.counts().conflicts,
  });
  const app = buildServer({ state, view, metrics, listenHost: '127.0.0.1' });
  let sized = '';
  addBareRoutes(app, () => sized);
  const url = await listenServer(app, '127.0.0.1:0');
  sized = (await app.inject({ url: `/api/v1/nodes/${nodeName(Math.floor(nodes / 2))}` })).body;
  const names: Names = {
    nodes: Array.from({ length: nodes }, (_, i) => nodeName(i)),
    volumes: sample(nodes * VOLUMES_PER_NODE, VOLUME_SAMPLE, (j) => volumeName(Math.floor(j / VOLUMES_PER_NODE), j % VOLUMES_PER_NODE), rng(nodes)),
  };
  return {
    apiUrl: url,
    bareUrl: url,
    names: () => names,
    nodeBodyBytes: Buffer.byteLength(sized),
    setPassSink: (s) => { loop.samples = s; },
    figures: async () => ({ fill_s: round(loop.fillSeconds) }),
    async stop() {
      await app.close();
      await loop.stop();
    },
  };
}

// ---- driver ----------------------------------------------------------------------------------

/**
 * Event loop lag of this process: a 5 ms timer chain, each firing's lateness (ms) pushed to
 * `sink` while it is set.
 */
function startLagSampler(): { sink: number[] | undefined; stop(): void } {
  const PERIOD_MS = 5;
  let last = performance.now();
  let timer: NodeJS.Timeout;
  const sampler = {
    sink: undefined as number[] | undefined,
    stop: () => clearTimeout(timer),
  };
  const tick = () => {
    const now = performance.now();
    sampler.sink?.push(Math.max(0, now - last - PERIOD_MS));
    last = now;
    timer = setTimeout(tick, PERIOD_MS);
  };
  timer = setTimeout(tick, PERIOD_MS);
  return sampler;
}


interface Options {
  duration: number; reps: number; window: number; rounds: number; paced: number; rate: number; connections: number; churn: number; timeout: number; settle: number;
  minFreeMb: number; qps: number; profile: string;
}
interface EndpointResult { name: string; nodes: number; req_per_s: number; p50_ms: number; p99_ms: number; p99_ms_worst: number; server_cpu_us_per_req?: number; server_elu?: number; non2xx?: number }
type SizeRun = Record<string, unknown> & { nodes: number };

/**
 * Two load clients: `capacity` at normal priority, and `background`, niced, for the loop-impact
 * phase: in production the API's clients run elsewhere; on this 2-core box the paced load
 * generator must not take CPU from the controller's threads, only the requests it sends should.
 */
interface Clients { capacity: Child; background: Child }
const BACKGROUND_NICE = 10;

function startClients(): Clients {
  const start = () => forkTs(new URL(import.meta.url).pathname, [], { BENCH_HTTP_ROLE: 'client' });
  const background = start();
  setPriority(background.pid, BACKGROUND_NICE);
  return { capacity: start(), background };
}

async function runLoad(client: Child, req: RunRequest): Promise<RunResult> {
  const reply = nextMessage<RunResult>(client, () => true, (req.duration + 60) * 1000);
  client.process.send({ type: 'run', ...req } satisfies ClientMessage);
  return reply;
}

const TARGETS = ['bare', 'bare-sized', 'healthz', 'summary', 'node', 'volume', 'metrics'] as const;
const LABEL: Record<(typeof TARGETS)[number], string> = {
  bare: 'bare fastify route', 'bare-sized': 'bare route, node-sized body', healthz: '/healthz', summary: '/api/v1/summary',
  node: '/api/v1/nodes/{name}', volume: '/api/v1/volumes/{uniqueName}', metrics: '/metrics',
};

async function benchSize(nodes: number, clients: Clients, o: Options): Promise<{ endpoints: EndpointResult[]; run: SizeRun }> {
  const loadStart = loadavg().map((l) => round(l, 2));
  const t0 = performance.now();
  const subject = STAND_IN ? await startStandInSubject(nodes) : await startControllerSubject(nodes, o);
  try {
    const setupS = seconds(t0);
    const sendNames = () => {
      const names = subject.names();
      for (const c of [clients.capacity, clients.background]) c.process.send({ type: 'names', ...names } satisfies ClientMessage);
    };
    sendNames();
    const urlOf = (t: Target) => (t === 'bare' || t === 'bare-sized' ? subject.bareUrl : subject.apiUrl);
    console.log(`\n${nodes} nodes: ready in ${setupS} s; API ${subject.apiUrl}, bare ${subject.bareUrl}; node answer ${subject.nodeBodyBytes} bytes; load average ${loadStart.join(' ')}`);
    let seed = nodes;
    const load = (client: Child, target: Target, duration: number, rate?: number) =>
      runLoad(client, { url: urlOf(target), target, duration, connections: o.connections, seed: seed++, ...(rate ? { rate } : {}) });

    const gcRec = createGcRecorder();
    for (const target of TARGETS) await load(clients.capacity, target, 1); // JIT warm-up
    // Sweeps alternately forwards and backwards, so drift in the machine's background load is
    // shared.
    const sweeps = new Map<Target, RunResult[]>();
    for (let rep = 0; rep < o.reps; rep++) {
      if (rep > 0) sendNames();
      for (const target of rep % 2 === 0 ? TARGETS : [...TARGETS].reverse()) {
        // This process's CPU (controller, API and plan worker together) and its event loop's
        // utilisation over the sweep: the server's cost per request beside the rate it reached.
        const profiler = o.profile && rep === 0 ? await startCpuProfile(500) : undefined;
        const cpu0 = process.cpuUsage();
        const elu0 = performance.eventLoopUtilization();
        const r = await load(clients.capacity, target, o.duration);
        const elu = performance.eventLoopUtilization(elu0);
        const cpu = process.cpuUsage(cpu0);
        if (profiler) await profiler.stop(join(o.profile, `http-${nodes}-capacity-${target}.cpuprofile`));
        const requests = r.req_per_s * o.duration;
        const server = { cpu_us_per_req: requests > 0 ? round((cpu.user + cpu.system) / requests, 1) : 0, elu: round(elu.utilization, 3) };
        sweeps.set(target, [...(sweeps.get(target) ?? []), { ...r, ...server }]);
      }
    }
    // Medians over the sweeps: a sweep that a multi-second synchronous task of the controller
    // falls into is kept in `p99_ms_worst` but does not move the typical figures.
    const summarise = (name: string, rs: RunResult[]): EndpointResult => {
      const non2xx = rs.reduce((a, r) => a + r.non2xx + r.errors, 0);
      const med = (f: (r: RunResult) => number) => percentile(rs.map(f), 0.5) ?? 0;
      return {
        name, nodes,
        req_per_s: Math.round(med((r) => r.req_per_s)),
        p50_ms: med((r) => r.p50_ms),
        p99_ms: med((r) => r.p99_ms),
        p99_ms_worst: Math.max(...rs.map((r) => r.p99_ms)),
        ...(rs.some((r) => r.cpu_us_per_req !== undefined) ? { server_cpu_us_per_req: med((r) => r.cpu_us_per_req ?? 0), server_elu: med((r) => r.elu ?? 0) } : {}),
        ...(non2xx ? { non2xx } : {}),
      };
    };
    const endpoints = TARGETS.map((t) => summarise(LABEL[t], sweeps.get(t) ?? []));
    sendNames();
    // This process's event loop delay while the paced lookups run: a paced p99 well above it is
    // time the requests spent outside this thread (the kernel, the load client's own scheduling).
    const lag = startLagSampler();
    const lagPaced: number[] = [];
    lag.sink = lagPaced;
    const pacedProfiler = o.profile ? await startCpuProfile(500) : undefined;
    const pacedWindow: [number, number] = [performance.now(), 0];
    const paced = summarise(`/api/v1/nodes/{name} paced at ${o.rate}/s`, [await load(clients.capacity, 'node', o.paced, o.rate)]);
    pacedWindow[1] = performance.now();
    if (pacedProfiler) await pacedProfiler.stop(join(o.profile, `http-${nodes}-paced.cpuprofile`));
    lag.sink = undefined;
    endpoints.push(paced);
    for (const e of endpoints) console.log(`  ${e.name.padEnd(38)} ${String(e.req_per_s).padStart(7)} req/s  p50 ${e.p50_ms} ms  p99 ${e.p99_ms} ms${e.server_cpu_us_per_req !== undefined ? `  server ${e.server_cpu_us_per_req} µs CPU/req, loop ${e.server_elu}` : ''}${e.non2xx ? `  (non-2xx/errors ${e.non2xx})` : ''}`);

    // Loop impact: idle and loaded windows interleaved; percentiles over every pass of each kind.
    // The event loop delay of this process (controller and API share it) in the same windows
    // bounds what any request waits behind the controller's synchronous work.
    const idle: number[] = [];
    const loaded: number[] = [];
    const mixed: RunResult[] = [];
    // One monitor per kind, enabled only during its windows (it keeps its samples across them).
    const lagIdle: number[] = [];
    const lagLoaded: number[] = [];
    const idleWindows: Array<[number, number]> = [];
    const loadedWindows: Array<[number, number]> = [];
    const profiler = o.profile ? await startCpuProfile(500) : undefined;
    for (let r = 0; r < o.rounds; r++) {
      await sleep(1000);
      subject.setPassSink(idle);
      lag.sink = lagIdle;
      const i0 = performance.now();
      await sleep(o.window * 1000);
      idleWindows.push([i0, performance.now()]);
      subject.setPassSink(undefined);
      lag.sink = undefined;
      const run = load(clients.background, 'mixed', o.window + 1, o.rate);
      await sleep(1000);
      subject.setPassSink(loaded);
      lag.sink = lagLoaded;
      const l0 = performance.now();
      mixed.push(await run);
      loadedWindows.push([l0, performance.now()]);
      subject.setPassSink(undefined);
      lag.sink = undefined;
    }
    if (profiler) console.log(`  CPU profile: ${await profiler.stop(join(o.profile, `http-${nodes}.cpuprofile`))}`);
    lag.stop();
    const lagStats = (xs: number[]) => ({ p50_ms: round(percentile(xs, 0.5) ?? 0, 1), p99_ms: round(percentile(xs, 0.99) ?? 0, 1), max_ms: round(Math.max(0, ...xs), 1) });
    const stats = (xs: number[]) => ({
      p50: percentile(xs, 0.5) ?? 0, p90: percentile(xs, 0.9) ?? 0, p99: percentile(xs, 0.99) ?? 0, mean: xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length), n: xs.length,
    });
    const li = stats(idle);
    const ll = stats(loaded);
    const mixedRate = Math.round(mixed.reduce((a, r) => a + r.req_per_s, 0) / mixed.length);
    const mixedP99 = Math.max(...mixed.map((r) => r.p99_ms));
    console.log(`  loop pass idle   p50 ${li.p50.toFixed(2)} ms  p90 ${li.p90.toFixed(2)} ms  p99 ${li.p99.toFixed(2)} ms  (${li.n} passes)`);
    console.log(`  loop pass loaded p50 ${ll.p50.toFixed(2)} ms  p90 ${ll.p90.toFixed(2)} ms  p99 ${ll.p99.toFixed(2)} ms  (${ll.n} passes; mixed load ${mixedRate} req/s, p99 ${mixedP99} ms)`);
    const delay = { paced: lagStats(lagPaced), idle: lagStats(lagIdle), loaded: lagStats(lagLoaded) };
    // GC pauses of this process (controller and API) in the same windows: the collector's share of the tails.
    const gcPauses = { paced: gcRec.stats([pacedWindow]), loop_idle: gcRec.stats(idleWindows), loop_loaded: gcRec.stats(loadedWindows) };
    gcRec.close();
    const gcLine = (name: string, g: (typeof gcPauses)['paced']) => `${name}: major ${g.major.count} (max ${g.major.max_ms} ms, ${g.major.total_ms} ms), minor ${g.minor.count} (max ${g.minor.max_ms} ms, ${g.minor.total_ms} ms), >=50 ms ${g.over_50ms} in ${g.seconds} s`;
    console.log(`  GC pauses ${gcLine('paced', gcPauses.paced)}; ${gcLine('loop idle', gcPauses.loop_idle)}; ${gcLine('loaded', gcPauses.loop_loaded)}`);
    console.log(`  event loop delay paced p99 ${delay.paced.p99_ms} ms (max ${delay.paced.max_ms}), idle p99 ${delay.idle.p99_ms} ms (max ${delay.idle.max_ms}), loaded p99 ${delay.loaded.p99_ms} ms (max ${delay.loaded.max_ms})`);

    const ceiling = endpoints[0].req_per_s;
    const node = endpoints[TARGETS.indexOf('node')];
    const loopRatio = li.p99 > 0 ? ll.p99 / li.p99 : 0;
    const run: SizeRun = {
      nodes,
      subject: STAND_IN ? 'stand-in' : 'controller',
      command: cli.command,
      date: new Date().toISOString(),
      setup_s: setupS,
      ...(await subject.figures()),
      ceiling_req_per_s: ceiling,
      node_vs_ceiling: round(node.req_per_s / ceiling),
      node_vs_same_size_body: round(node.req_per_s / endpoints[1].req_per_s),
      node_body_bytes: subject.nodeBodyBytes,
      node_p99_ms_saturated: node.p99_ms,
      node_p99_ms_paced: paced.p99_ms,
      loop_p50_ms_idle: round(li.p50), loop_p50_ms_loaded: round(ll.p50),
      loop_p90_ms_idle: round(li.p90), loop_p90_ms_loaded: round(ll.p90),
      loop_p99_ms_idle: round(li.p99), loop_p99_ms_loaded: round(ll.p99),
      loop_p99_loaded_vs_idle: round(loopRatio),
      loop_mean_ms_idle: round(li.mean), loop_mean_ms_loaded: round(ll.mean),
      loop_passes_idle: li.n, loop_passes_loaded: ll.n,
      event_loop_delay: delay,
      gc_pauses: gcPauses,
      loaded_rate_req_per_s: mixedRate,
      loaded_p99_ms: mixedP99,
      targets: {
        node_vs_ceiling_min_0_5: node.req_per_s / ceiling >= 0.5,
        node_p99_max_5ms_paced: paced.p99_ms <= 5,
        node_p99_max_5ms_saturated: node.p99_ms <= 5,
        loop_p99_loaded_max_1_2x_idle: loopRatio <= 1.2,
      },
      loadavg_start: loadStart,
      loadavg_end: loadavg().map((l) => round(l, 2)),
    };
    return { endpoints, run };
  } finally {
    await subject.stop();
  }
}

async function driverMain(): Promise<void> {
  if (process.channel) {
    // The launcher went away: stop like on SIGTERM (children.ts kills the children).
    process.channel.unref();
    process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  }
  const o: Options = {
    duration: cli.values.duration === undefined ? 5 : num('duration'), reps: cli.int('reps'), window: num('window'), rounds: cli.int('rounds'), paced: num('paced'), rate: num('rate'),
    connections: cli.int('connections'), churn: num('churn'), timeout: num('timeout'), settle: num('settle'), minFreeMb: num('min-free-mb'), qps: num('qps'), profile: arg('profile'),
  };
  const outArg = arg('out');
  const outFile = outArg ? new URL(outArg, `file://${process.cwd()}/`) : STAND_IN ? undefined : new URL('./results/http.json', import.meta.url);
  const subjectText = STAND_IN
    ? 'stand-in loop over a directly filled WorldState (real planner, worker pool); test/http/stand-in-controller.ts'
    : `startControllerWithApi (leader election off, qps/burst ${o.qps}, ${SIMULATOR_CLIENT_SIZING.kubeApiMaxInFlight} requests in flight, 1 plan worker) in the bench process against the simulator (bench/lib/sim-child.ts, child process): nodes x ${PODS_PER_NODE} pods, attacher and kubelets on, converged, then ${o.churn} pod changes/s`;
  const clients = startClients();
  const endpoints: EndpointResult[] = [];
  const runs: SizeRun[] = [];
  try {
    for (const nodes of SIZES) {
      console.log(`\n== ${nodes} nodes (${STAND_IN ? 'stand-in' : 'controller + simulator'}) ==`);
      try {
        const r = await benchSize(nodes, clients, o);
        endpoints.push(...r.endpoints);
        runs.push(r.run);
      } catch (err) {
        console.error(`run at ${nodes} nodes failed: ${err instanceof Error ? err.stack : String(err)}`);
        runs.push({ nodes, subject: STAND_IN ? 'stand-in' : 'controller', failed: err instanceof Error ? err.message.slice(0, 2000) : String(err), loadavg_end: loadavg().map((l) => round(l, 2)) });
      }
      if (outFile) save(outFile, subjectText, o, endpoints, runs);
    }
  } finally {
    await Promise.all([clients.capacity.stop(5000), clients.background.stop(5000)]);
  }
  if (runs.some((r) => r.failed)) process.exitCode = 1;
}

/** Writes the results, keeping the previous file's runs of other sizes with the same subject. */
function save(file: URL, subject: string, o: Options, endpoints: EndpointResult[], runs: SizeRun[]): void {
  let prev: { subject?: string; endpoints?: EndpointResult[]; runs?: SizeRun[] } = {};
  try {
    if (existsSync(file)) prev = JSON.parse(readFileSync(file, 'utf8')) as typeof prev;
  } catch { /* unreadable: start afresh */ }
  const mine = new Set(runs.map((r) => r.nodes));
  const keep = prev.subject === subject ? (prev.runs ?? []).filter((r) => !mine.has(r.nodes) && !r.failed) : [];
  const kept = new Set(keep.map((r) => r.nodes));
  const allRuns = [...keep, ...runs].sort((a, b) => a.nodes - b.nodes);
  const allEndpoints = [...(prev.subject === subject ? (prev.endpoints ?? []).filter((e) => kept.has(e.nodes)) : []), ...endpoints].sort((a, b) => a.nodes - b.nodes);
  const top = [...allRuns].reverse().find((r) => !r.failed);
  const out = {
    ceiling_req_per_s: top?.ceiling_req_per_s ?? null,
    loop_p99_ms_idle: top?.loop_p99_ms_idle ?? null,
    loop_p99_ms_loaded: top?.loop_p99_ms_loaded ?? null,
    endpoints: allEndpoints,
    subject,
    command: cli.command,
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version, loadavg_end: loadavg().map((l) => round(l, 2)) },
    options: { ...o, background_client_nice: BACKGROUND_NICE, volume_sample: VOLUME_SAMPLE, kube_api_http2: !HTTP1 },
    targets: { node_vs_ceiling_min: 0.5, node_p99_max_ms: 5, loop_p99_loaded_vs_idle_max: 1.2 },
    runs: allRuns,
  };
  mkdirSync(new URL('.', file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`wrote ${file.pathname}`);
}

/**
 * Re-executes this file as the driver with a heap sized for the largest fleet (the controller
 * lives in the driver) and quiet logs; forwards signals and exits with the driver's code.
 */
function launch(): void {
  const heap = Math.max(...SIZES.map(heapMb));
  const driver = spawn(process.execPath, [...process.execArgv, `--max-old-space-size=${heap}`, SEMI_SPACE_FLAG, new URL(import.meta.url).pathname, ...args], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_HTTP_ROLE: 'driver', LOG_LEVEL: process.env.LOG_LEVEL ?? 'error' },
  });
  // The driver handles signals on its event loop, which the controller can hold for seconds.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      driver.kill(sig);
      setTimeout(() => driver.kill('SIGKILL'), 15_000).unref();
    });
  }
  driver.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

/** `--alloc`: the allocation per request, in this process (bench/lib/http-alloc.ts). */
async function allocMain(): Promise<void> {
  const given = givenFlags();
  const applies = new Set(['alloc', 'nodes', 'duration', 'routes', 'out']);
  for (const f of given) if (!applies.has(f)) cli.fail(`--${f} does not apply with --alloc (it takes --nodes N --duration S --routes R,R… --out FILE)`);
  if (SIZES.length !== 1 && given.has('nodes')) cli.fail('--alloc: one size in --nodes');
  const routes = (cli.values.routes ?? ALLOC_ROUTES.join(',')).split(',').map((r) => {
    if (!(ALLOC_ROUTES as readonly string[]).includes(r)) cli.fail(`--routes: unknown route ${r} (known: ${ALLOC_ROUTES.join(', ')})`);
    return r as AllocRoute;
  });
  const { runHttpAlloc } = await import('./lib/http-alloc.js');
  await runHttpAlloc({
    nodes: given.has('nodes') ? SIZES[0]! : 10_000,
    seconds: cli.values.duration === undefined ? 4 : cli.int('duration'),
    routes,
    out: cli.values.out ?? new URL('./results/http-alloc.json', import.meta.url),
    command: cli.command,
  });
}

if (ROLE === 'client') clientMain();
else if (cli.values.alloc) runMain(allocMain);
else if (ROLE === 'driver') {
  await driverMain();
  // Everything is written. Seen once at 10k and 50k: an active timer kept the driver open
  // after the controller stopped (no handle or request left); name it and leave.
  setTimeout(() => {
    console.error(`driver: still open after the results were written (${process.getActiveResourcesInfo().join(', ')}); exiting`);
    process.exit();
  }, 10_000).unref();
}
else launch();
