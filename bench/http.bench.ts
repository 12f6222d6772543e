// Inspection API benchmark (issue 5): `npm run bench:http` [-- --sizes 10000,100000 --duration 3
// --reps 2 --window 5 --rounds 4 --rate 2000 --connections 10].
//
// Stand-in controller: the real `startController` needs an API server holding the whole fleet,
// so this bench runs test/http/stand-in-controller.ts: a WorldState filled directly (nodes x 10
// volumes) and a 100 ms reconcile loop over the real planner (worker pool) with churn, so every
// pass has work. The server reads that state through the fake InspectionView.
//
// Load comes from autocannon in a child process (this file, forked with BENCH_HTTP_CLIENT=1), so
// it does not share the server's event loop. Per fleet size, in one run:
//   capacity: each endpoint alone, unthrottled, `--connections` connections, `--duration` s,
//             `--reps` sweeps over the endpoints:
//             a bare fastify route on the same app (the ceiling), a bare route sending a
//             constant body the size of a node answer, /healthz, /api/v1/summary,
//             /api/v1/nodes/{random}, /api/v1/volumes/{random}, /metrics.
//   loop:     reconcile pass p50/p99 idle vs under a mixed load (node and volume lookups,
//             summaries) capped with autocannon's overallRate `--rate` so it leaves the loop its
//             share of the 2 cores, sent by a niced client process; `--rounds` alternations of
//             `--window` s idle and loaded, so background noise falls on both alike.
// Results: bench/results/http.json (top-level figures from the largest size).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, setPriority } from 'node:os';
import { buildServer, listenServer } from '../src/http/server.js';
import { createControllerMetrics } from '../src/metrics/controller-metrics.js';
import { createFakeInspectionView } from '../test/http/fake-inspection-view.js';
import { PLUGIN, VOLUMES_PER_NODE, nodeName, rng, startStandInController, volumeName } from '../test/http/stand-in-controller.js';

type Target = 'bare' | 'bare-sized' | 'healthz' | 'summary' | 'node' | 'volume' | 'metrics' | 'mixed';

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
    case 'bare': return `/bare/${nodeName(i)}`;
    case 'bare-sized': return `/bare-sized/${nodeName(i)}`;
    case 'healthz': return '/healthz';
    case 'summary': return '/api/v1/summary';
    case 'metrics': return '/metrics';
    case 'node': return `/api/v1/nodes/${nodeName(i)}`;
    case 'volume': return `/api/v1/volumes/${encodeURIComponent(volumeName(i, Math.floor(random() * VOLUMES_PER_NODE)))}`;
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
  loop_p90_ms_idle: number;
  loop_p90_ms_loaded: number;
  loop_passes_idle: number;
  loop_passes_loaded: number;
  loaded_rate_req_per_s: number;
  loaded_p99_ms: number;
  node_vs_ceiling: number;
  node_vs_same_size_body: number;
  node_body_bytes: number;
}

/**
 * Two load clients: `capacity` at normal priority, and `background`, niced, for the loop-impact
 * phase. In production the API's clients run elsewhere; on this 2-core box the rate-limited load
 * generator must not take CPU from the controller's threads, only the requests it sends should.
 */
interface Clients { capacity: ChildProcess; background: ChildProcess }

const BACKGROUND_NICE = 10;

function startClients(): Clients {
  const start = () => fork(new URL(import.meta.url).pathname, [], { env: { ...process.env, BENCH_HTTP_CLIENT: '1' }, execArgv: ['--import', 'tsx'] });
  const background = start();
  if (background.pid !== undefined) setPriority(background.pid, BACKGROUND_NICE);
  return { capacity: start(), background };
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

async function benchSize(nodes: number, clients: Clients, o: { duration: number; reps: number; window: number; rounds: number; rate: number; connections: number }) {
  const loop = startStandInController(nodes);
  const { state, fillSeconds: fill } = loop;
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
  // Bare routes take the same random path parameter as a node lookup, so the load client does
  // the same work (autocannon rebuilds every request that setupRequest rewrites).
  app.get('/bare/:name', () => ({ ok: true }));
  // The same bytes as a node lookup, from a constant: separates the cost of moving the answer
  // (serialising it, writing it, the client parsing it) from the cost of reading the state.
  let sized = '';
  app.get('/bare-sized/:name', (_request, reply) => { reply.type('application/json; charset=utf-8').send(sized); });
  const url = await listenServer(app, '127.0.0.1:0');
  sized = (await app.inject({ url: `/api/v1/nodes/${nodeName(Math.floor(nodes / 2))}` })).body;
  console.log(`\n${nodes} nodes (${nodes * VOLUMES_PER_NODE} pairs): filled in ${fill.toFixed(1)} s; ${url}; node answer ${sized.length} bytes`);

  const targets = ['bare', 'bare-sized', 'healthz', 'summary', 'node', 'volume', 'metrics'] as const;
  const label: Record<(typeof targets)[number], string> = {
    bare: 'bare fastify route', 'bare-sized': 'bare route, node-sized body', healthz: '/healthz', summary: '/api/v1/summary', node: '/api/v1/nodes/{name}',
    volume: '/api/v1/volumes/{uniqueName}', metrics: '/metrics',
  };
  for (const target of targets) await runLoad(clients.capacity, { url, target, nodes, duration: 1, connections: o.connections }); // JIT warm-up
  // `--reps` sweeps over all endpoints, alternately forwards and backwards, so drift in the
  // machine's background load is shared: req/s is the mean over the sweeps, latencies the worst.
  const sweeps = new Map<string, RunResult[]>();
  for (let rep = 0; rep < o.reps; rep++) {
    for (const target of rep % 2 === 0 ? targets : [...targets].reverse()) {
      const r = await runLoad(clients.capacity, { url, target, nodes, duration: o.duration, connections: o.connections });
      if (r.non2xx || r.errors) console.log(`  ${label[target]}: non2xx ${r.non2xx} errors ${r.errors}`);
      sweeps.set(target, [...(sweeps.get(target) ?? []), r]);
    }
  }
  const endpoints: EndpointResult[] = targets.map((target) => {
    const rs = sweeps.get(target) ?? [];
    return {
      name: label[target],
      nodes,
      req_per_s: Math.round(rs.reduce((a, r) => a + r.req_per_s, 0) / rs.length),
      p50_ms: Math.max(...rs.map((r) => r.p50_ms)),
      p99_ms: Math.max(...rs.map((r) => r.p99_ms)),
    };
  });
  for (const e of endpoints) console.log(`  ${e.name.padEnd(30)} ${String(e.req_per_s).padStart(7)} req/s  p50 ${e.p50_ms} ms  p99 ${e.p99_ms} ms`);

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
    const run = runLoad(clients.background, { url, target: 'mixed', nodes, duration: o.window + 1, connections: o.connections, rate: o.rate });
    await sleep(1000);
    loop.samples = loadedSamples;
    const r = await run;
    loop.samples = undefined;
    loadedRate += r.req_per_s / o.rounds;
    loadedP99 = Math.max(loadedP99, r.p99_ms);
  }
  const stats = (xs: number[]) => ({ p50: percentile(xs, 0.5), p90: percentile(xs, 0.9), p99: percentile(xs, 0.99), n: xs.length });
  const idle = stats(idleSamples);
  const loaded = stats(loadedSamples);
  const loadedResult = { req_per_s: Math.round(loadedRate), p99_ms: loadedP99 };
  console.log(`  loop pass idle   p50 ${idle.p50.toFixed(2)} ms  p90 ${idle.p90.toFixed(2)} ms  p99 ${idle.p99.toFixed(2)} ms  (${idle.n} passes)`);
  console.log(`  loop pass loaded p50 ${loaded.p50.toFixed(2)} ms  p90 ${loaded.p90.toFixed(2)} ms  p99 ${loaded.p99.toFixed(2)} ms  (${loaded.n} passes, mixed load ${loadedResult.req_per_s} req/s, p99 ${loadedResult.p99_ms} ms)`);

  await app.close();
  await loop.stop();
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
    loop_p90_ms_idle: round(idle.p90),
    loop_p90_ms_loaded: round(loaded.p90),
    loop_passes_idle: idle.n,
    loop_passes_loaded: loaded.n,
    loaded_rate_req_per_s: loadedResult.req_per_s,
    loaded_p99_ms: loadedResult.p99_ms,
    node_vs_ceiling: round(node.req_per_s / ceiling),
    node_vs_same_size_body: round(node.req_per_s / endpoints[1].req_per_s),
    node_body_bytes: sized.length,
  };
  return { endpoints, size };
}

async function main(): Promise<void> {
  const sizes = arg('sizes', '10000,100000').split(',').map(Number);
  const o = { duration: Number(arg('duration', '3')), reps: Number(arg('reps', '2')), window: Number(arg('window', '5')), rounds: Number(arg('rounds', '4')), rate: Number(arg('rate', '2000')), connections: Number(arg('connections', '10')) };
  const loadStart = loadavg().map(round);
  const clients = startClients();
  const endpoints: EndpointResult[] = [];
  const runs: SizeResult[] = [];
  try {
    for (const nodes of sizes) {
      const r = await benchSize(nodes, clients, o);
      endpoints.push(...r.endpoints);
      runs.push(r.size);
    }
  } finally {
    clients.capacity.kill();
    clients.background.kill();
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
    options: { ...o, background_client_nice: BACKGROUND_NICE },
    runs,
  };
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/http.json', import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
  console.log('\nwrote bench/results/http.json');
}

if (process.env.BENCH_HTTP_CLIENT === '1') await clientMain();
else await main();
