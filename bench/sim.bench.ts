/**
 * `npm run bench:sim`: the simulator at fleet scale. For 10k and 100k nodes with 10 pods
 * (each with a PVC and a PV) per node, it measures
 *   - population rate and heap bytes per stored object (and stored JSON bytes per object),
 *   - a paged list of every pod over HTTPS in pages of 500 (objects/s, client in a worker),
 *   - watch fan-out: 4 watchers on pods while the store commits pod updates (events/s delivered).
 * Writes bench/results/sim.json. Re-runs itself with a larger heap (--max-old-space-size)
 * because 3 million objects do not fit V8's default 4 GiB limit with room to spare.
 * `SIM_BENCH_NODES=10000` limits the scales.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { populateFleet } from '../src/sim/actors/index.js';
import { startSimulator } from '../src/sim/server/index.js';
import { createSimStore } from '../src/sim/store/index.js';
import { CLIENT_SOURCE } from './sim-bench-client.js';

const HEAP_MB = 16_384;
const PODS_PER_NODE = 10;
const WATCHERS = 4;
const WATCH_UPDATES = 50_000;
const PAGE = 500;

if (getHeapStatistics().heap_size_limit < 8 * 2 ** 30 && !process.env.SIM_BENCH_CHILD) {
  const args = [`--max-old-space-size=${HEAP_MB}`, '--expose-gc', '--import', 'tsx', new URL(import.meta.url).pathname];
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

function rpc(worker: Worker, msg: Record<string, unknown>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const on = (m: WorkerReply) => {
      worker.off('message', on);
      if (m.op === 'error') reject(new Error(m.error));
      else resolve(m.result);
    };
    worker.on('message', on);
    worker.postMessage(msg);
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

const scales = (process.env.SIM_BENCH_NODES ?? '10000,100000').split(',').map(Number);
const results = [];
for (const n of scales) results.push(await runScale(n));
// The machine is shared: the load average says how much of it the bench had.
const out = { bench: 'sim', date: new Date().toISOString(), node: process.version, cpus: cpus().length, loadAverage: loadavg().map((l) => Math.round(l * 100) / 100), podsPerNode: PODS_PER_NODE, pageSize: PAGE, results };
mkdirSync(new URL('results/', import.meta.url), { recursive: true });
writeFileSync(new URL('results/sim.json', import.meta.url), `${JSON.stringify(out, null, 2)}\n`);
console.log('wrote bench/results/sim.json');
