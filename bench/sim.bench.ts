/**
 * `npm run bench:sim`: the simulator at fleet scale. For 10k and 100k nodes with 10 pods
 * (each with a PVC and a PV) per node, it measures
 *   - population rate and heap bytes per stored object (and stored JSON bytes per object),
 *   - a paged list of every pod over HTTPS in pages of 500 (objects/s, client in a worker),
 *   - watch fan-out: 4 watchers on pods while the store commits pod updates (events/s delivered).
 * Writes bench/results/sim.json. Re-runs itself with a larger heap (--max-old-space-size)
 * because 3 million objects do not fit V8's default 4 GiB limit with room to spare.
 * `--nodes 10000` limits the scales.
 *
 * `--writes` measures instead the write path a convergence needs, on a fleet with
 * the attacher and kubelets running and the controller's watches open (pods, nodes,
 * VolumeAttachments, PVs, PVCs, CSINodes, CSIDrivers): one VolumeAttachment create per
 * (volume, node) pair, then one node status merge patch per node listing its volumes, each
 * sent by `--concurrency` (default 16) concurrent keep-alive TLS requests. It reports
 * creates/s and patches/s (client side), the time until the attacher has attached every VA
 * and the kubelets have put every volume in use, the events the watchers received, and the
 * server thread's event-loop utilisation. Nodes: `--nodes` (default 10000). The
 * result goes to the `writes` entry of sim.json (the fleet results are kept).
 * `--profile out.cpuprofile` profiles the server thread over the write phases.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { DEFAULT_FLEET_ACTOR_OPTIONS, populateFleet, uniqueVolumeName, volumeAttachmentName } from '../src/sim/actors/index.js';
import { startSimulator, type Simulator } from '../src/sim/server/index.js';
import { createSimStore } from '../src/sim/store/index.js';
import { commandLine, givenFlags } from './lib/args.js';
import { CLIENT_SOURCE } from './sim-bench-client.js';
import { startCpuProfile } from './lib/cpu-profile.js';

const HEAP_MB = 16_384;
const PODS_PER_NODE = 10;
const WATCHERS = 4;
const WATCH_UPDATES = 50_000;
const PAGE = 500;

const cli = commandLine('bench:sim', {
  nodes: { type: 'string', arg: 'N,N…', help: 'fleet sizes (default 10000,100000; 10000 with --writes)' },
  writes: { type: 'boolean', help: "instead: the write path of a convergence (the results' `writes` entry)" },
  concurrency: { type: 'string', default: '16', help: 'with --writes: concurrent requests' },
  profile: { type: 'string', arg: 'FILE', help: "with --writes: CPU profile of the server thread" },
});
const MODE = cli.values.writes ? 'writes' : 'fleet';
const SIZES = cli.values.nodes === undefined ? (MODE === 'writes' ? [10_000] : [10_000, 100_000]) : cli.ints('nodes');
if (MODE === 'writes' && SIZES.length !== 1) cli.fail('--writes: one size in --nodes');
if (MODE === 'fleet' && (givenFlags().has('profile') || givenFlags().has('concurrency'))) cli.fail('--profile and --concurrency apply with --writes only');
const RESULTS = new URL('results/sim.json', import.meta.url);

if (MODE === 'fleet' && getHeapStatistics().heap_size_limit < 8 * 2 ** 30 && !process.env.SIM_BENCH_CHILD) {
  const args = [`--max-old-space-size=${HEAP_MB}`, '--expose-gc', '--import', 'tsx', new URL(import.meta.url).pathname, ...process.argv.slice(2)];
  const r = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, SIM_BENCH_CHILD: '1', LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' } });
  process.exit(r.status ?? 1);
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const heapUsed = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

interface WorkerReply { op: string; result?: unknown; error?: string }

/** The bench client: a worker thread, or a child process with an IPC channel. */
type Client = Worker | ChildProcess;

function rpc(client: Client, msg: Record<string, unknown>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const on = (m: WorkerReply) => {
      client.off('message', on);
      if (m.op === 'error') reject(new Error(m.error));
      else resolve(m.result);
    };
    client.on('message', on);
    if (client instanceof Worker) client.postMessage(msg);
    else client.send(msg);
  });
}

async function runScale(nodes: number) {
  const h0 = heapUsed();
  const store = createSimStore({ watchWindow: 100_000 });
  const pop = await populateFleet(store, { nodes, podsPerNode: PODS_PER_NODE, seed: 1 });
  const stats = store.stats();
  const h1 = heapUsed();
  const objects = stats.objects;
  const result: Record<string, number> = {
    nodes,
    pods: store.count('pods'),
    objects,
    populateObjectsPerSec: Math.round(objects / (pop.elapsedMs / 1000)),
    heapBytesPerObject: Math.round((h1 - h0) / objects),
    jsonBytesPerObject: Math.round(stats.jsonBytes / objects),
    heapMiB: Math.round(h1 / 2 ** 20),
  };
  console.log(`${nodes} nodes: ${objects} objects populated at ${result.populateObjectsPerSec}/s; ${result.heapBytesPerObject} heap bytes/object (${result.jsonBytesPerObject} of stored JSON)`);

  const sim = await startSimulator({ store });
  const worker = new Worker(CLIENT_SOURCE, { eval: true, workerData: { url: sim.url, token: sim.token, ca: sim.caPem } });
  try {
    await rpc(worker, { op: 'list', path: '/api/v1/nodes', limit: PAGE }); // warm-up
    const list = (await rpc(worker, { op: 'list', path: '/api/v1/pods', limit: PAGE })) as { items: number; pages: number; bytes: number; ms: number };
    if (list.items !== result.pods) throw new Error(`paged list returned ${list.items} pods, expected ${result.pods}`);
    result.listObjectsPerSec = Math.round(list.items / (list.ms / 1000));
    result.listMiBPerSec = Math.round(list.bytes / 2 ** 20 / (list.ms / 1000));
    console.log(`  paged list of ${list.items} pods (${list.pages} pages of ${PAGE}): ${result.listObjectsPerSec} objects/s, ${result.listMiBPerSec} MiB/s`);

    const rv = store.resourceVersion();
    await rpc(worker, { op: 'watch', count: WATCHERS, path: `/api/v1/pods?watch=1&resourceVersion=${rv}` });
    const pods = store.listPage('pods', { limit: WATCH_UPDATES }).items.map((j) => JSON.parse(j) as { metadata: { namespace: string; name: string } });
    const t0 = performance.timeOrigin + performance.now();
    for (let i = 0; i < pods.length; i++) {
      const { namespace, name } = pods[i].metadata;
      store.mutate('pods', namespace, name, (p) => { p.metadata.annotations = { 'bench/round': String(i) }; });
      if (i % 1000 === 999) await new Promise((r) => setImmediate(r));
    }
    const commitMs = performance.timeOrigin + performance.now() - t0;
    const deadline = Date.now() + 180_000;
    let counts: Array<{ events: number; lastAt: number }> = [];
    for (;;) {
      counts = (await rpc(worker, { op: 'counts' })) as typeof counts;
      if (counts.every((c) => c.events >= pods.length) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const delivered = counts.reduce((n, c) => n + c.events, 0);
    const lastAt = Math.max(...counts.map((c) => c.lastAt));
    result.watchers = WATCHERS;
    result.watchUpdates = pods.length;
    result.watchCommitsPerSec = Math.round(pods.length / (commitMs / 1000));
    result.watchEventsDeliveredPerSec = Math.round(delivered / ((lastAt - t0) / 1000));
    result.watchCutOffs = sim.server.watchCutOffs();
    console.log(`  watch fan-out: ${pods.length} updates committed at ${result.watchCommitsPerSec}/s; ${WATCHERS} watchers received ${delivered}/${pods.length * WATCHERS} events at ${result.watchEventsDeliveredPerSec} events/s (cut off: ${result.watchCutOffs})`);
    await rpc(worker, { op: 'stop' });
  } finally {
    await worker.terminate();
    await sim.stop();
  }
  return result;
}

interface Attachment { name: string; node: string; pv: string; unique: string }

/** One attachment per (PV, node) pair of the fleet's running pods, as the controller would create them. */
function fleetAttachments(store: Simulator['store'], driver: string): Attachment[] {
  const handles = new Map<string, string>();
  for (const pv of store.list('persistentvolumes')) handles.set(pv.metadata.name, String((pv.spec as { csi: { volumeHandle: string } }).csi.volumeHandle));
  const claimPv = new Map<string, string>();
  for (const c of store.list('persistentvolumeclaims')) claimPv.set(`${c.metadata.namespace}/${c.metadata.name}`, String((c.spec as { volumeName: string }).volumeName));
  const out = new Map<string, Attachment>();
  for (const p of store.list('pods')) {
    const spec = p.spec as { nodeName: string; volumes?: Array<{ persistentVolumeClaim?: { claimName: string } }> };
    for (const v of spec.volumes ?? []) {
      const pv = v.persistentVolumeClaim && claimPv.get(`${p.metadata.namespace}/${v.persistentVolumeClaim.claimName}`);
      const handle = pv && handles.get(pv);
      if (!pv || !handle) continue;
      const name = volumeAttachmentName(handle, driver, spec.nodeName);
      out.set(name, { name, node: spec.nodeName, pv, unique: uniqueVolumeName(driver, handle) });
    }
  }
  return [...out.values()];
}

async function until(what: string, done: () => boolean, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return performance.now();
}

async function runWrites(nodes: number, concurrency: number) {
  const driver = DEFAULT_FLEET_ACTOR_OPTIONS.driver;
  const sim = await startSimulator({ fleet: { nodes, podsPerNode: PODS_PER_NODE, seed: 1, attacher: true, kubelet: true } });
  // A separate process, so that this process's CPU time is the simulator's alone.
  const worker = spawn(process.execPath, ['-e', CLIENT_SOURCE], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, FA_SIM_BENCH_CLIENT: JSON.stringify({ url: sim.url, token: sim.token, ca: sim.caPem }) },
  });
  try {
    const items = fleetAttachments(sim.store, driver);
    const stat = (actor: string, counter: string) => sim.actors?.stats()[actor]?.[counter] ?? 0;
    const rv = sim.store.resourceVersion();
    const watched = ['/api/v1/pods', '/api/v1/nodes', '/apis/storage.k8s.io/v1/volumeattachments', '/api/v1/persistentvolumes', '/api/v1/persistentvolumeclaims', '/apis/storage.k8s.io/v1/csinodes', '/apis/storage.k8s.io/v1/csidrivers'];
    await rpc(worker, { op: 'watch', paths: watched.map((p) => `${p}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`) });
    // Warm the connections (TLS handshakes) with one patch per lane.
    await rpc(worker, { op: 'patches', concurrency, items: Array.from({ length: concurrency }, () => ({ node: items[0].node, volumes: [] })) });
    const attached0 = stat('attacher', 'attached');
    const mounted0 = stat('kubelet', 'mounted');
    const profileFile = cli.values.profile;
    const profiler = profileFile ? await startCpuProfile(200) : undefined;
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const c = (await rpc(worker, { op: 'creates', concurrency, driver, items: items.map(({ name, node, pv }) => ({ name, node, pv })) })) as SendResult;
    const tCreated = performance.now();
    const tAttached = await until('every VolumeAttachment attached', () => stat('attacher', 'attached') - attached0 >= items.length, 600_000);
    const byNode = new Map<string, string[]>();
    for (const a of items) (byNode.get(a.node) ?? byNode.set(a.node, []).get(a.node) as string[]).push(a.unique);
    const tp = performance.now();
    const p = (await rpc(worker, { op: 'patches', concurrency, items: [...byNode].map(([node, volumes]) => ({ node, volumes: volumes.sort() })) })) as SendResult;
    const tPatched = performance.now();
    const tMounted = await until('every volume in use', () => stat('kubelet', 'mounted') - mounted0 >= items.length, 600_000);
    const elu = performance.eventLoopUtilization(elu0);
    const cpu = process.cpuUsage(cpu0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    if (profiler && profileFile) console.log(`  wrote the server thread's CPU profile of the write phases to ${await profiler.stop(profileFile)}`);
    const counts = (await rpc(worker, { op: 'counts' })) as Array<{ events: number }>;
    const events = counts.reduce((n, x) => n + x.events, 0);
    const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));
    const result = {
      nodes, attachments: items.length, concurrency, watchers: watched.length,
      createsPerSec: rate(c.count, c.ms), createP50Ms: c.p50, createP99Ms: c.p99, createCodes: c.codes,
      attachedAllAfterMs: Math.round(tAttached - t0), attachPipelinePerSec: rate(items.length, tAttached - t0),
      patchesPerSec: rate(p.count, p.ms), patchP50Ms: p.p50, patchP99Ms: p.p99, patchCodes: p.codes,
      inUseAllAfterPatchesMs: Math.round(tMounted - tp), mountPipelinePerSec: rate(items.length, tMounted - tp),
      watchEvents: events, watchEventsPerSec: rate(events, tMounted - t0),
      serverEventLoopUtilization: Math.round(elu.utilization * 1000) / 1000,
      serverCpuMs: Math.round(cpuMs), serverCpuUsPerAttachment: Math.round((cpuMs * 1000) / items.length),
      totalMs: Math.round(tMounted - t0), createPhaseMs: Math.round(tCreated - t0), patchPhaseMs: Math.round(tPatched - tp),
      watchCutOffs: sim.server.watchCutOffs(),
    };
    console.log(`${nodes} nodes, ${items.length} attachments, ${concurrency} concurrent requests, ${watched.length} watchers:`);
    console.log(`  creates: ${result.createsPerSec}/s (p50 ${c.p50} ms, p99 ${c.p99} ms, codes ${JSON.stringify(c.codes)}); every VA attached after ${result.attachedAllAfterMs} ms (${result.attachPipelinePerSec}/s)`);
    console.log(`  node status patches: ${result.patchesPerSec}/s (p50 ${p.p50} ms, p99 ${p.p99} ms, codes ${JSON.stringify(p.codes)}); every volume in use ${result.inUseAllAfterPatchesMs} ms after the first patch`);
    console.log(`  watchers received ${events} events (${result.watchEventsPerSec}/s); server event loop ${Math.round(elu.utilization * 100)}% busy; cut off: ${result.watchCutOffs}`);
    console.log(`  server process CPU: ${result.serverCpuMs} ms, ${result.serverCpuUsPerAttachment} µs per attachment (create, attach, node patch, volume in use, their watch events)`);
    await rpc(worker, { op: 'stop' });
    return result;
  } finally {
    worker.kill();
    await sim.stop();
  }
}


interface SendResult { count: number; ms: number; codes: Record<string, number>; p50: number; p99: number }

// The machine is shared: the load average says how much of it the bench had.
const env = () => ({ date: new Date().toISOString(), node: process.version, cpus: cpus().length, loadAverage: loadavg().map((l) => Math.round(l * 100) / 100) });
const previous = existsSync(RESULTS) ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>) : {};
let out: Record<string, unknown>;
if (MODE === 'writes') {
  const writes = { ...env(), command: cli.command, podsPerNode: PODS_PER_NODE, ...(await runWrites(SIZES[0]!, cli.int('concurrency'))) };
  out = { ...previous, writes };
} else {
  const results = [];
  for (const n of SIZES) results.push(await runScale(n));
  out = { bench: 'sim', command: cli.command, ...env(), podsPerNode: PODS_PER_NODE, pageSize: PAGE, results, ...(previous.writes ? { writes: previous.writes } : {}) };
}
mkdirSync(new URL('results/', import.meta.url), { recursive: true });
writeFileSync(RESULTS, `${JSON.stringify(out, null, 2)}\n`);
console.log('wrote bench/results/sim.json');
