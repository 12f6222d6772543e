// Live heap per pod of the controller (GC work): `npm run bench:heap`
// [-- --nodes 1000,3000 --snapshot-dir DIR --out FILE]. In `npm run bench:full`.
//
// Subject: the real controller (startControllerWithApi, one plan worker) converged on a simulated
// fleet of N nodes × 10 pods (each pod with its own PVC, PV and VolumeAttachment; the simulator in
// a child process, as bench:http runs it). Once every pair is attached and reported, after two full
// GCs, a heap snapshot of the measuring process is taken and counted: live bytes and live objects
// by kind (strings, ropes, plain objects, arrays, other). Each size runs in a process of its own
// (this file, role `measure`), and the per-pod figures are the slope between the two sizes, so the
// process's constant part (code, modules, caches bounded by count) is not charged to pods.
// The simulator child is counted the same way at the same moment (after the controller's
// snapshot), and its figures per stored object (every object its store holds: pods, PVCs, PVs,
// VolumeAttachments, nodes, leases, events, …) are the slope of its live heap against the store's
// object count: what its store, watch windows and actors hold per object.
// Bytes, for both processes: `heap_bytes` is the JavaScript heap (what a major collection marks),
// `native_bytes` the ArrayBuffer and Buffer backing stores beside it (the byte arenas and typed
// arrays that hold the packed state), which a collection does not mark; their sum is what the
// process holds.
// Why objects: a major GC marks every live object, and the pauses that miss the latency
// targets at 50k–100k nodes are major GCs. Prints JSON; writes bench/results/heap.json unless --out.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandLine } from './lib/args.js';
import { forkTs, nextMessage, runChild, runMain, SEMI_SPACE_FLAG } from './lib/children.js';
import { countLiveHeap, type HeapKinds as Kinds } from './lib/heap-count.js';
import type { SimChildMessage } from './lib/sim-child.js';

const PODS_PER_NODE = 10;
/** The simulator process at the same moment: its live heap and the objects its store holds. */
interface SimMeasured { stored_objects: number; heap_bytes: number; native_bytes: number; objects: number; by_kind: Kinds }
interface Measured { nodes: number; pods: number; heap_bytes: number; native_bytes: number; objects: number; by_kind: Kinds; converge_s: number; sim: SimMeasured }

async function measure(nodes: number, snapshotDir: string | undefined): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'fa-heap-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const sim = forkTs(new URL('./lib/sim-child.ts', import.meta.url).pathname, ['--max-old-space-size=4096', '--expose-gc', SEMI_SPACE_FLAG], {
    FA_SIM_CHILD: JSON.stringify({ nodes, podsPerNode: PODS_PER_NODE, seed: 1, kubeconfigOut: kubeconfig }),
    LOG_LEVEL: 'error',
  });
  try {
    await nextMessage(sim, (m: { type: string }) => m.type === 'ready', 600_000);
    const { startControllerWithApi } = await import('../src/manager/run-controller.js');
    const t0 = performance.now();
    const running = await startControllerWithApi({ kubeconfig: { path: kubeconfig }, listen: '127.0.0.1:0', leaderElect: false, kubeApiQps: 20_000, kubeApiBurst: 20_000, workers: 1 });
    const pods = nodes * PODS_PER_NODE;
    for (;;) {
      const c = running.ctl.state.counts();
      if (c.desiredPairs === pods && c.attached === pods && c.reportedAttached === pods) break;
      if (performance.now() - t0 > 600_000) throw new Error(`not converged in 600 s: ${JSON.stringify(c)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const convergeS = (performance.now() - t0) / 1000;
    // Let in-flight event writes and status patches settle, then collect twice (weak cells, finalizers).
    await new Promise((r) => setTimeout(r, 3000));
    const counted = await countLiveHeap(snapshotDir ? join(snapshotDir, `controller-${nodes}.heapsnapshot`) : undefined);
    const simHeap = nextMessage<Extract<SimChildMessage, { type: 'heap' }>>(sim, (m) => m.type === 'heap', 600_000);
    sim.process.send({ type: 'heap', ...(snapshotDir ? { file: join(snapshotDir, `sim-${nodes}.heapsnapshot`) } : {}) });
    const s = await simHeap;
    await running.stop();
    const simMeasured: SimMeasured = { stored_objects: s.stored, heap_bytes: s.count.bytes - s.count.nativeBytes, native_bytes: s.count.nativeBytes, objects: s.count.objects, by_kind: s.count.byKind };
    return { nodes, pods, heap_bytes: counted.bytes - counted.nativeBytes, native_bytes: counted.nativeBytes, objects: counted.objects, by_kind: counted.byKind, converge_s: Math.round(convergeS * 10) / 10, sim: simMeasured };
  } finally {
    await sim.stop(10_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const cli = commandLine('bench:heap', {
    nodes: { type: 'string', default: '1000,3000', arg: 'N,N', help: 'the two fleet sizes of the slope' },
    'snapshot-dir': { type: 'string', arg: 'DIR', help: 'keep the heap snapshots here' },
    out: { type: 'string', arg: 'FILE', help: 'results file (default bench/results/heap.json)' },
  });
  const values = cli.values;
  const sizes = cli.ints('nodes');
  if (sizes.length !== 2 || sizes[0]! >= sizes[1]!) cli.fail('--nodes: two increasing positive integers, e.g. 1000,3000');
  const runs: Measured[] = [];
  for (const nodes of sizes) {
    const child = forkTs(fileURLToPath(import.meta.url), ['--expose-gc', '--max-old-space-size=8192', SEMI_SPACE_FLAG], {
      FA_HEAP_BENCH: JSON.stringify({ nodes, snapshotDir: values['snapshot-dir'] }),
      LOG_LEVEL: 'error',
    });
    const m = await nextMessage<{ type: 'result'; result: Measured }>(child, (x) => x.type === 'result', 1_200_000);
    await child.exited;
    runs.push(m.result);
    console.error(`${nodes} nodes: ${(m.result.heap_bytes / 2 ** 20).toFixed(1)} MB heap + ${(m.result.native_bytes / 2 ** 20).toFixed(1)} MB native, ${m.result.objects} objects (converged in ${m.result.converge_s} s); simulator ${(m.result.sim.heap_bytes / 2 ** 20).toFixed(1)} MB, ${m.result.sim.objects} objects for ${m.result.sim.stored_objects} stored`);
  }
  const [a, b] = runs as [Measured, Measured];
  const dp = b.pods - a.pods;
  const perPod = (k: keyof Kinds) => Math.round(((b.by_kind[k] - a.by_kind[k]) / dp) * 100) / 100;
  const ds = b.sim.stored_objects - a.sim.stored_objects;
  const perStored = (k: keyof Kinds) => Math.round(((b.sim.by_kind[k] - a.sim.by_kind[k]) / ds) * 100) / 100;
  const result = {
    bench: 'heap',
    command: cli.command,
    date: new Date().toISOString(),
    runs,
    per_pod: {
      heap_bytes: Math.round((b.heap_bytes - a.heap_bytes) / dp),
      native_bytes: Math.round((b.native_bytes - a.native_bytes) / dp),
      objects: Math.round(((b.objects - a.objects) / dp) * 100) / 100,
      strings: perPod('string'), ropes: perPod('rope'), objects_plain: perPod('object'), arrays: perPod('array'), other: perPod('other'),
    },
    sim_per_object: {
      heap_bytes: Math.round((b.sim.heap_bytes - a.sim.heap_bytes) / ds),
      native_bytes: Math.round((b.sim.native_bytes - a.sim.native_bytes) / ds),
      objects: Math.round(((b.sim.objects - a.sim.objects) / ds) * 100) / 100,
      strings: perStored('string'), ropes: perStored('rope'), objects_plain: perStored('object'), arrays: perStored('array'), other: perStored('other'),
    },
  };
  console.log(JSON.stringify(result, null, 2));
  writeFileSync(values.out ?? fileURLToPath(new URL('./results/heap.json', import.meta.url)), `${JSON.stringify(result, null, 2)}\n`);
}

const role = process.env.FA_HEAP_BENCH;
if (role) {
  const { nodes, snapshotDir } = JSON.parse(role) as { nodes: number; snapshotDir?: string };
  runChild(async () => {
    // client-node loads node-fetch (and its 0.5 MB IDNA table) on first use, at a moment that
    // differs between runs: loaded up front, it is part of both sizes' constant, not of the slope.
    await import('node-fetch');
    const result = await measure(nodes, snapshotDir);
    process.send?.({ type: 'result', result }, () => process.exit(0));
  });
} else runMain(main);
