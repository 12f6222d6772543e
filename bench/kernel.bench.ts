// Plan kernel benchmark (issue 3): `npm run bench:kernel` [-- --sizes 1000,10000 --quick].
//
// For each fleet size (nodes x 10 volumes per node: 9 RWO volumes of its own and 1 RWX volume
// shared by a group of 10 nodes) in steady state, with 1% of pairs differing (half want an
// attach, half an unmounted detach) and 0.1% attached, undesired and still mounted, it
// measures side by side in one run:
//   wasm      plan() on the main thread (release build, 1 shard)
//   pool      plan() in the Piscina pool (default workers = cores - 1), and with 2 workers
//   reference the Map-based reference plan (src/kernel/reference) on the same fleet
//   floor     a bare sequential SIMD read of every byte of the packed tables (and of the
//             pair/node flag bytes only, which is what the kernel scans)
// plus the bytes of packed state per pair and the mutation throughput of WorldState.
// Results: bench/results/kernel.json.
import { writeFileSync, mkdirSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createWorldState, type WorldState } from '../src/cache/world-state.js';
import { defaultWorkerCount } from '../src/kernel/kernel-pool.js';
import { instantiateKernel, loadKernelModule } from '../src/kernel/kernel-module.js';
import { createPlanner, type PlanOptions } from '../src/kernel/planner.js';
import { referencePlan } from '../src/kernel/reference/reference-plan.js';
import { ReferenceWorld } from '../src/kernel/reference/reference-world.js';

const args = process.argv.slice(2);
const arg = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const SIZES = (arg('sizes') ?? '1000,10000,50000,100000').split(',').map(Number);
const QUICK = args.includes('--quick');
const VOLUMES_PER_NODE = 10;
const OPTIONS: PlanOptions = { maxWaitForUnmountMs: 360_000, disableForceDetachOnTimeout: false };

/** Deterministic PRNG (mulberry32), so every run benchmarks the same fleet. */
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

type Kind = 'steady' | 'attach' | 'detach' | 'mounted';
interface FleetPair { node: number; volume: number; rwx: boolean; kind: Kind }

/** The fleet as a list of pairs, shared by the WASM state and the reference. */
function fleet(nodes: number): FleetPair[] {
  const random = rng(nodes);
  const pairs: FleetPair[] = [];
  const rwo = VOLUMES_PER_NODE - 1;
  for (let n = 0; n < nodes; n++) {
    for (let k = 0; k < VOLUMES_PER_NODE; k++) {
      const rwx = k === rwo;
      const volume = rwx ? nodes * rwo + Math.floor(n / 10) : n * rwo + k;
      const r = random();
      const kind: Kind = r < 0.005 ? 'attach' : r < 0.01 ? 'detach' : r < 0.011 ? 'mounted' : 'steady';
      pairs.push({ node: n, volume, rwx, kind });
    }
  }
  return pairs;
}

const nodeName = (n: number) => `node-${n}`;
const volumeName = (v: number) => `kubernetes.io/csi/bench.csi.k8s.io^pv-${v}`;

function buildState(nodes: number, pairs: FleetPair[]): WorldState {
  const volumes = nodes * (VOLUMES_PER_NODE - 1) + Math.ceil(nodes / 10);
  const state = createWorldState({ capacity: { nodes, volumes, pairs: pairs.length } });
  const inUse: string[][] = Array.from({ length: nodes }, () => []);
  for (let n = 0; n < nodes; n++) {
    const id = state.internNode(nodeName(n));
    state.setNodeManaged(id);
    state.setNodeHealthy(id, true);
  }
  for (const p of pairs) {
    const v = state.internVolume(volumeName(p.volume));
    const n = state.findNode(nodeName(p.node)) as number;
    state.setMultiAttachForbidden(v, !p.rwx);
    if (p.kind !== 'detach' && p.kind !== 'mounted') state.addDesiredPod(v, n, `pod-${p.node}-${p.volume}`);
    if (p.kind !== 'attach') state.markAttached(v, n);
    if (p.kind === 'steady' || p.kind === 'mounted') inUse[p.node].push(volumeName(p.volume));
  }
  for (let n = 0; n < nodes; n++) {
    const id = state.findNode(nodeName(n)) as number;
    state.setVolumesInUse(id, inUse[n]);
    state.clearStatusUpdateNeeded(id);
  }
  return state;
}

function buildReference(nodes: number, pairs: FleetPair[]): ReferenceWorld {
  const ref = new ReferenceWorld();
  const inUse: string[][] = Array.from({ length: nodes }, () => []);
  for (let n = 0; n < nodes; n++) {
    ref.setNodeManaged(nodeName(n));
    ref.setNodeHealthy(nodeName(n), true);
  }
  for (const p of pairs) {
    const v = volumeName(p.volume);
    ref.setMultiAttachForbidden(v, !p.rwx);
    if (p.kind !== 'detach' && p.kind !== 'mounted') ref.addDesiredPod(v, nodeName(p.node), `pod-${p.node}-${p.volume}`);
    if (p.kind !== 'attach') ref.markAttached(v, nodeName(p.node));
    if (p.kind === 'steady' || p.kind === 'mounted') inUse[p.node].push(v);
  }
  for (let n = 0; n < nodes; n++) {
    ref.setVolumesInUse(nodeName(n), inUse[n]);
    ref.clearStatusUpdateNeeded(nodeName(n));
  }
  return ref;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const round = (x: number, d = 3) => Number(x.toFixed(d));

async function timePlans(state: WorldState, workers: number, shards: number, runs: number): Promise<{ times: number[]; actions: number[] }> {
  const planner = createPlanner({ state, workers, shards, build: 'release' });
  const times: number[] = [];
  let actions: number[] = [];
  try {
    let now = 1_000_000;
    for (let i = 0; i < runs + 5; i++) {
      now += 100;
      const t0 = performance.now();
      const plan = await planner.plan(now, OPTIONS);
      const dt = performance.now() - t0;
      if (i >= 5) times.push(dt);
      actions = [plan.detaches.length, plan.attaches.length, plan.conflicts.length, plan.statusNodes.length];
    }
  } finally {
    await planner.close();
  }
  return { times, actions };
}

function timeFloor(state: WorldState, runs: number, only?: string[]): { times: number[]; bytes: number } {
  const kernel = instantiateKernel(loadKernelModule('release'), state.kernelAccess().memory);
  const ranges = state.kernelAccess().tableRanges().filter((r) => !only || only.includes(r.name));
  const bytes = ranges.reduce((s, r) => s + r.bytes, 0);
  const times: number[] = [];
  let sink = 0;
  for (let i = 0; i < runs + 5; i++) {
    const t0 = performance.now();
    for (const r of ranges) sink ^= kernel.readFloor(r.addr, Math.ceil(r.bytes / 16) * 16);
    if (i >= 5) times.push(performance.now() - t0);
  }
  if (sink === 0.5) console.log(sink);
  return { times, bytes };
}

/**
 * WorldState mutation throughput on steady pairs: per pair, pod churn (removeDesiredPod +
 * addDesiredPod), attach-state churn (markUncertain + markAttached) and an operation
 * (tryStartOperation + completeOperation). Reported: the median of 100 ms wall-clock windows, the best window, and
 * ops per CPU-second of this process (the box may be shared). Also in table order (the order
 * a plan lists pairs in), the cache-friendly case.
 */
function mutationsPerSecond(state: WorldState, pairs: FleetPair[], order: 'random' | 'table'): { wall: number; best: number; cpu: number } {
  // Every steady pair once, in a random order (each call lands on a pair not touched for a
  // whole pass, so it is cold in the caches) or in table order.
  const random = rng(7);
  const picks = pairs.filter((p) => p.kind === 'steady');
  if (order === 'random') {
    for (let i = picks.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [picks[i], picks[j]] = [picks[j], picks[i]];
    }
  }
  const vs = Int32Array.from(picks, (p) => state.findVolume(volumeName(p.volume)) as number);
  const ns = Int32Array.from(picks, (p) => state.findNode(nodeName(p.node)) as number);
  const pods = picks.map((p) => `pod-${p.node}-${p.volume}`);
  // Windows of ~100 ms; the median window is the figure (robust to a busy neighbour).
  const windows: number[] = [];
  let ops = 0;
  let at = 0;
  const cpu0 = process.cpuUsage();
  for (let w = 0; w < (QUICK ? 4 : 15); w++) {
    const t0 = performance.now();
    let done = 0;
    while (performance.now() - t0 < 100) {
      for (let k = 0; k < 1024; k++, at = at + 1 === picks.length ? 0 : at + 1) {
        const v = vs[at];
        const n = ns[at];
        state.removeDesiredPod(v, n, pods[at]);
        state.addDesiredPod(v, n, pods[at]);
        state.markUncertain(v, n);
        state.markAttached(v, n);
        state.tryStartOperation(v, n, 'attach', 0);
        state.completeOperation(v, n, 'attach', true, 0);
      }
      done += 1024 * 6;
    }
    windows.push(done / ((performance.now() - t0) / 1000));
    ops += done;
  }
  const cpu = process.cpuUsage(cpu0);
  return { wall: percentile(windows, 50), best: Math.max(...windows), cpu: ops / ((cpu.user + cpu.system) / 1e6) };
}

async function main(): Promise<void> {
  const results = [];
  const poolWorkers = defaultWorkerCount();
  for (const nodes of SIZES) {
    const pairs = fleet(nodes);
    const runs = QUICK ? 10 : nodes >= 50_000 ? 60 : 200;
    process.stderr.write(`${nodes} nodes, ${pairs.length} pairs: building state... `);
    const state = buildState(nodes, pairs);
    process.stderr.write('planning... ');
    const wasm = await timePlans(state, 0, 1, runs);
    const pool = await timePlans(state, poolWorkers, poolWorkers, runs);
    const pool2 = await timePlans(state, 2, 2, runs);
    const floor = timeFloor(state, runs);
    const flagsFloor = timeFloor(state, runs, ['pairFlags', 'nodeFlags']);
    const usage = state.memoryUsage();
    const counts = state.counts();
    process.stderr.write('mutations... ');
    const mutations = mutationsPerSecond(state, pairs, 'random');
    const mutationsInOrder = mutationsPerSecond(state, pairs, 'table');
    process.stderr.write('reference... ');
    const ref = buildReference(nodes, pairs);
    const refTimes: number[] = [];
    for (let i = 0; i < (QUICK ? 3 : nodes >= 50_000 ? 7 : 20); i++) {
      const t0 = performance.now();
      referencePlan(ref, 1_000_000 + i * 100, OPTIONS);
      refTimes.push(performance.now() - t0);
    }
    process.stderr.write('done\n');
    const wasmP50 = percentile(wasm.times, 50);
    results.push({
      nodes,
      pairs: pairs.length,
      wasm_p50_ms: round(wasmP50),
      wasm_p99_ms: round(percentile(wasm.times, 99)),
      pool_p50_ms: round(percentile(pool.times, 50)),
      reference_p50_ms: round(percentile(refTimes, 50), 1),
      floor_p50_ms: round(percentile(floor.times, 50)),
      bytes_per_pair: round(usage.sharedBytes / counts.pairs, 2),
      mutations_per_s: Math.round(mutations.wall),
      mutations_per_cpu_s: Math.round(mutations.cpu),
      mutations_per_s_best_window: Math.round(mutations.best),
      mutations_per_s_table_order: Math.round(mutationsInOrder.wall),
      pool_workers: poolWorkers,
      pool_p99_ms: round(percentile(pool.times, 99)),
      pool2_p50_ms: round(percentile(pool2.times, 50)),
      flags_floor_p50_ms: round(percentile(flagsFloor.times, 50)),
      floor_bytes: floor.bytes,
      flags_floor_bytes: flagsFloor.bytes,
      wasm_vs_floor: round(wasmP50 / percentile(floor.times, 50), 2),
      wasm_vs_flags_floor: round(wasmP50 / percentile(flagsFloor.times, 50), 2),
      speedup_vs_reference: Math.round(percentile(refTimes, 50) / wasmP50),
      host_bytes_per_pair: round(usage.hostBytes / counts.pairs, 2),
      plan_actions: { detaches: wasm.actions[0], attaches: wasm.actions[1], conflicts: wasm.actions[2], status_nodes: wasm.actions[3] },
      volumes: counts.volumes,
      runs,
    });
  }
  const out = {
    command: `npm run bench:kernel${args.length ? ` -- ${args.join(' ')}` : ''}`,
    date: new Date().toISOString(),
    machine: { cpus: availableParallelism(), model: cpus()[0]?.model ?? 'unknown', node: process.version, loadavg_at_end: loadavg() },
    sizes: results,
  };
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/kernel.json', import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
  console.table(results.map(({ plan_actions: _a, ...r }) => r));
}

await main();
