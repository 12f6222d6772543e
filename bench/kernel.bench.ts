// Plan kernel benchmark: `npm run bench:kernel` [-- --sizes 1000,10000 --quick].
// The quick tier of `npm run bench` runs `--sizes 1000,10000,100000 --quick`; `bench:full` the
// default sizes.
// `--mutations-only` runs the mutation mixes alone (no plans, no reference) and prints them
// without writing results: a cheap before/after comparison of WorldState changes, e.g. the
// same command in a worktree of the old commit.
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
// plus the bytes of packed state per pair and the mutation throughput of WorldState in two mixes:
//   churn     by id on every steady pair in a random order (each pair cold): remove + add its pod,
//             mark uncertain + attached, start + complete an attach: 6 mutations per pair
//   events    what the controller calls per event (populator, reconciler, executor, status
//             writer), one pod lifecycle per node per round, each event on a cold pair, names,
//             UIDs and volumesInUse lists just parsed from JSON as an informer delivers them
//             (see eventMix)
// Names and pod UIDs are flat strings parsed from JSON, as the informers deliver them (the
// cons strings template literals build cost more to compare), and UIDs have the Kubernetes
// 36-character form.
// Results: bench/results/kernel.json.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createWorldState, type WorldState } from '../src/cache/world-state.js';
import { defaultWorkerCount } from '../src/kernel/kernel-pool.js';
import { instantiateKernel, loadKernelModule } from '../src/kernel/kernel-module.js';
import { createPlanner, type PlanOptions } from '../src/kernel/planner.js';
import { referencePlan } from '../src/kernel/reference/reference-plan.js';
import { ReferenceWorld } from '../src/kernel/reference/reference-world.js';
import { commandLine } from './lib/args.js';

const cli = commandLine('bench:kernel', {
  sizes: { type: 'string', default: '1000,10000,50000,100000', arg: 'N,N…', help: 'fleet sizes in nodes (10 volumes each)' },
  quick: { type: 'boolean', help: 'fewer plans, windows and reference runs' },
  'mutations-only': { type: 'boolean', help: 'the mutation mixes alone, printed, no results written' },
});
const SIZES = cli.ints('sizes');
const QUICK = cli.values.quick;
const MUTATIONS_ONLY = cli.values['mutations-only'];
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
const hex = (x: number, width: number) => (x >>> 0).toString(16).padStart(width, '0').slice(-width);
/** A pod UID in the Kubernetes form (a 36-character UUID), one per (node, volume, generation). */
const podUid = (node: number, volume: number, gen = 0) =>
  `${hex(Math.imul(node + gen * 7_919_993, 2654435761), 8)}-${hex(gen, 4)}-4${hex(node, 3)}-8${hex(volume >>> 12, 3)}-${hex(volume, 12)}`;
/** Strings as the informers deliver them: flat, parsed from JSON, new objects every time. */
const fromJson = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

interface BuiltState { state: WorldState; inUse: string[][] }

function buildState(nodes: number, pairs: FleetPair[]): BuiltState {
  const volumes = nodes * (VOLUMES_PER_NODE - 1) + Math.ceil(nodes / 10);
  const state = createWorldState({ capacity: { nodes, volumes, pairs: pairs.length } });
  const inUse: string[][] = Array.from({ length: nodes }, () => []);
  const nodeNames = fromJson(Array.from({ length: nodes }, (_, n) => nodeName(n)));
  for (let n = 0; n < nodes; n++) {
    const id = state.internNode(nodeNames[n]);
    state.setNodeManaged(id);
    state.setNodeHealthy(id, true);
  }
  const names = fromJson(pairs.map((p) => volumeName(p.volume)));
  const uids = fromJson(pairs.map((p) => podUid(p.node, p.volume)));
  pairs.forEach((p, i) => {
    const v = state.internVolume(names[i]);
    const n = state.findNode(nodeNames[p.node]) as number;
    state.setMultiAttachForbidden(v, !p.rwx);
    if (p.kind !== 'detach' && p.kind !== 'mounted') state.addDesiredPod(v, n, uids[i]);
    if (p.kind !== 'attach') state.markAttached(v, n);
    if (p.kind === 'steady' || p.kind === 'mounted') inUse[p.node].push(names[i]);
  });
  for (let n = 0; n < nodes; n++) {
    const id = state.findNode(nodeNames[n]) as number;
    inUse[n].sort(); // the kubelet reports volumesInUse sorted
    state.setVolumesInUse(id, fromJson(inUse[n]));
    state.clearStatusUpdateNeeded(id);
  }
  return { state, inUse };
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

const schedstat = `/proc/self/task/${process.pid}/schedstat`;
/** CPU time of the main thread in ns (Linux schedstat; the process's CPU time elsewhere). */
function threadCpuNs(): number {
  if (existsSync(schedstat)) return Number(readFileSync(schedstat, 'utf8').split(' ')[0]);
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
}

interface Throughput { wall: number; best: number; cpu: number }

/**
 * The churn mix: every steady pair once per pass, in a random order (each pair cold: not
 * touched for a whole pass) or in table order (the cache-friendly case), with 6 mutations by
 * id per pair: removeDesiredPod + addDesiredPod, markUncertain + markAttached,
 * tryStartOperation + completeOperation. The UID argument is a new string object (equal
 * content), as an event would carry. Figures: the median and the best 100 ms wall-clock window
 * (the box may be shared), and mutations per second of main-thread CPU time.
 */
function churnMix(state: WorldState, pairs: FleetPair[], order: 'random' | 'table'): Throughput {
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
  const pods = fromJson(picks.map((p) => podUid(p.node, p.volume)));
  const windows: number[] = [];
  let ops = 0;
  let at = 0;
  const cpu0 = threadCpuNs();
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
  return { wall: percentile(windows, 50), best: Math.max(...windows), cpu: ops / ((threadCpuNs() - cpu0) / 1e9) };
}

/** The controller's events in one pod lifecycle, in order, with the mutations each counts. */
const EVENTS = [
  ['pod_deleted', 1], ['node_unmounted', 5], ['detach_action', 2], ['status_write_detach', 1], ['detach_done', 2],
  ['pod_added', 4], ['attach_action', 1], ['attach_done', 2], ['status_write_attach', 1], ['node_mounted', 5], ['pod_updated', 4],
] as const;
type EventName = (typeof EVENTS)[number][0];

/**
 * The events mix: one steady pair per node goes through a whole pod lifecycle per round, with
 * the WorldState calls the controller makes for each event (src/populator, src/reconciler,
 * src/operations): pod deleted (findNode, findVolume, removeDesiredPod); node update, volume
 * unmounted (internNode, setNodeManaged, setNodeHealthy, setNodeOutOfService, setVolumesInUse);
 * detach action (isSafeToRetry, removeFromReportSet, tryStartOperation); status write
 * (volumesToReport, clearStatusUpdateNeeded); detach done (markDetached, completeOperation: the
 * pair, and an RWO volume's id, go); new pod (findNode, node().managed, internVolume,
 * setVolumeInfo, setMultiAttachForbidden, addDesiredPod); attach action (tryStartOperation);
 * attach done (markAttached, completeOperation); status write; node update, volume mounted;
 * pod update (as new pod, the pod already there). Reads are timed but not counted: 28
 * mutations per lifecycle. Each event visits every chosen pair (random order) before the next
 * event starts, so each lands on a cold pair. The reconciler and executor use ids; the
 * populator gets names, UIDs and volumesInUse lists as an informer does: just parsed from JSON
 * (in chunks of CHUNK events, parsing untimed). Figures: the median round (wall clock of the
 * timed parts), mutations per second of process CPU (all threads), and the microseconds of
 * each event (fastest round).
 */
function eventMix(state: WorldState, pairs: FleetPair[], inUse: string[][], nodes: number): Throughput & { eventUs: Record<EventName, number> } {
  const CHUNK = 256;
  const random = rng(11);
  const chosen: FleetPair[] = [];
  for (let n = 0; n < nodes; n++) {
    const mine = pairs.slice(n * VOLUMES_PER_NODE, (n + 1) * VOLUMES_PER_NODE).filter((p) => p.kind === 'steady');
    if (mine.length > 0) chosen.push(mine[Math.floor(random() * mine.length)]);
  }
  for (let i = chosen.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [chosen[i], chosen[j]] = [chosen[j], chosen[i]];
  }
  const m = chosen.length;
  const volumeNames = chosen.map((p) => volumeName(p.volume));
  const nodeNames = chosen.map((p) => nodeName(p.node));
  const mountedLists = chosen.map((p) => inUse[p.node]);
  const unmountedLists = chosen.map((p) => inUse[p.node].filter((x) => x !== volumeName(p.volume)));
  const info = chosen.map((p) => ({ plugin: 'kubernetes.io/csi', pv: `pv-${p.volume}` }));
  const vs = Int32Array.from(chosen, (p) => state.findVolume(volumeName(p.volume)) as number);
  const ns = Int32Array.from(chosen, (p) => state.findNode(nodeName(p.node)) as number);
  const eventMs = new Map<EventName, number[]>(EVENTS.map(([e]) => [e, []]));
  let wallMs = 0;
  let cpuUs = 0;
  /** Runs `apply` for every chosen pair, chunk by chunk, timing only `apply`. */
  const run = <T>(e: EventName, input: (from: number, to: number) => T, apply: (i: number, data: T, k: number) => void) => {
    let ms = 0;
    for (let from = 0; from < m; from += CHUNK) {
      const to = Math.min(m, from + CHUNK);
      const data = input(from, to);
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = from; i < to; i++) apply(i, data, i - from);
      ms += performance.now() - t0;
      const c = process.cpuUsage(c0);
      cpuUs += c.user + c.system;
    }
    (eventMs.get(e) as number[]).push(ms);
    wallMs += ms;
  };
  const none = () => null;
  const named = (from: number, to: number, uids: (p: FleetPair) => string) =>
    fromJson({ n: nodeNames.slice(from, to), v: volumeNames.slice(from, to), u: chosen.slice(from, to).map(uids) });
  const nodeUpdate = (name: string, list: string[]) => {
    const n = state.internNode(name);
    state.setNodeManaged(n);
    state.setNodeHealthy(n, true);
    state.setNodeOutOfService(n, false);
    state.setVolumesInUse(n, list);
  };
  const podEvent = (i: number, node: string, volume: string, uid: string) => {
    const n = state.findNode(node);
    if (n === undefined || !state.node(n)?.managed) return;
    const v = state.internVolume(volume);
    state.setVolumeInfo(v, info[i]);
    state.setMultiAttachForbidden(v, !chosen[i].rwx);
    state.addDesiredPod(v, n, uid);
    vs[i] = v;
  };
  const round = (gen: number): void => {
    run('pod_deleted', (a, b) => named(a, b, (p) => podUid(p.node, p.volume, gen - 1)), (_i, d, k) => {
      const n = state.findNode(d.n[k]);
      const v = state.findVolume(d.v[k]);
      if (n !== undefined && v !== undefined) state.removeDesiredPod(v, n, d.u[k]);
    });
    run('node_unmounted', (a, b) => fromJson({ n: nodeNames.slice(a, b), l: unmountedLists.slice(a, b) }), (_i, d, k) => nodeUpdate(d.n[k], d.l[k]));
    run('detach_action', none, (i) => {
      if (!state.isSafeToRetry(vs[i], ns[i], 'detach', 0)) return;
      state.removeFromReportSet(vs[i], ns[i]);
      state.tryStartOperation(vs[i], ns[i], 'detach', 0);
    });
    run('status_write_detach', none, (i) => {
      state.volumesToReport(ns[i]);
      state.clearStatusUpdateNeeded(ns[i]);
    });
    run('detach_done', none, (i) => {
      state.markDetached(vs[i], ns[i]);
      state.completeOperation(vs[i], ns[i], 'detach', true, 0);
    });
    run('pod_added', (a, b) => named(a, b, (p) => podUid(p.node, p.volume, gen)), (i, d, k) => podEvent(i, d.n[k], d.v[k], d.u[k]));
    run('attach_action', none, (i) => state.tryStartOperation(vs[i], ns[i], 'attach', 0));
    run('attach_done', none, (i) => {
      state.markAttached(vs[i], ns[i]);
      state.completeOperation(vs[i], ns[i], 'attach', true, 0);
    });
    run('status_write_attach', none, (i) => {
      state.volumesToReport(ns[i]);
      state.clearStatusUpdateNeeded(ns[i]);
    });
    run('node_mounted', (a, b) => fromJson({ n: nodeNames.slice(a, b), l: mountedLists.slice(a, b) }), (_i, d, k) => nodeUpdate(d.n[k], d.l[k]));
    run('pod_updated', (a, b) => named(a, b, (p) => podUid(p.node, p.volume, gen)), (i, d, k) => podEvent(i, d.n[k], d.v[k], d.u[k]));
  };
  // The chosen pairs' pods got generation-0 UIDs in buildState; the first round warms up.
  const perRound = m * EVENTS.reduce((sum, [, k]) => sum + k, 0);
  const rates: number[] = [];
  let ops = 0;
  let cpu = 0;
  const t0 = performance.now();
  for (let gen = 1; gen <= 2 || rates.length < (QUICK ? 2 : 5) || performance.now() - t0 < (QUICK ? 300 : 1000); gen++) {
    wallMs = 0;
    cpuUs = 0;
    round(gen);
    if (gen === 1) {
      for (const times of eventMs.values()) times.length = 0;
      continue;
    }
    ops += perRound;
    cpu += cpuUs;
    rates.push(perRound / (wallMs / 1000));
  }
  const eventUs = Object.fromEntries([...eventMs].map(([e, times]) => [e, round3((Math.min(...times) * 1000) / m)])) as Record<EventName, number>;
  return { wall: percentile(rates, 50), best: Math.max(...rates), cpu: ops / (cpu / 1e6), eventUs };
}
const round3 = (x: number) => Number(x.toFixed(3));

async function main(): Promise<void> {
  const results = [];
  const poolWorkers = defaultWorkerCount();
  for (const nodes of SIZES) {
    const pairs = fleet(nodes);
    const runs = QUICK ? 10 : nodes >= 50_000 ? 60 : 200;
    process.stderr.write(`${nodes} nodes, ${pairs.length} pairs: building state... `);
    const { state, inUse } = buildState(nodes, pairs);
    if (MUTATIONS_ONLY) {
      const bytesPerPair = round(state.memoryUsage().sharedBytes / state.counts().pairs, 2);
      process.stderr.write('mutations... ');
      const mutations = churnMix(state, pairs, 'random');
      const mutationsInOrder = churnMix(state, pairs, 'table');
      const events = eventMix(state, pairs, inUse, nodes);
      process.stderr.write('done\n');
      results.push({
        nodes,
        pairs: pairs.length,
        bytes_per_pair: bytesPerPair,
        mutations_per_s: Math.round(mutations.wall),
        mutations_per_cpu_s: Math.round(mutations.cpu),
        mutations_per_s_best_window: Math.round(mutations.best),
        mutations_per_s_table_order: Math.round(mutationsInOrder.wall),
        events_mutations_per_s: Math.round(events.wall),
        events_mutations_per_cpu_s: Math.round(events.cpu),
        event_us: events.eventUs,
      });
      continue;
    }
    process.stderr.write('planning... ');
    const wasm = await timePlans(state, 0, 1, runs);
    const pool = await timePlans(state, poolWorkers, poolWorkers, runs);
    const pool2 = await timePlans(state, 2, 2, runs);
    const floor = timeFloor(state, runs);
    const flagsFloor = timeFloor(state, runs, ['pairFlags', 'nodeFlags']);
    const usage = state.memoryUsage();
    const counts = state.counts();
    process.stderr.write('mutations... ');
    const mutations = churnMix(state, pairs, 'random');
    const mutationsInOrder = churnMix(state, pairs, 'table');
    const events = eventMix(state, pairs, inUse, nodes);
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
      events_mutations_per_s: Math.round(events.wall),
      events_mutations_per_cpu_s: Math.round(events.cpu),
      event_us: events.eventUs,
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
    command: cli.command,
    date: new Date().toISOString(),
    machine: { cpus: availableParallelism(), model: cpus()[0]?.model ?? 'unknown', node: process.version, loadavg_at_end: loadavg() },
    mutations: 'mutations_per_s*: churn mix (6 mutations by id per cold pair); events_*: controller event mix (28 mutations per pod lifecycle, each event on a cold pair, names looked up); mutations_per_cpu_s: per second of main-thread CPU; events_mutations_per_cpu_s: per second of process CPU. See bench/kernel.bench.ts.',
    sizes: results,
  };
  if (MUTATIONS_ONLY) {
    console.table(results.map(({ event_us: _e, ...r }) => r));
    return;
  }
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/kernel.json', import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
  console.table(results.map(({ plan_actions: _a, event_us: _e, ...r }) => r));
  for (const r of results) console.log(r.nodes, 'nodes, us per event:', JSON.stringify(r.event_us));
}

await main();
