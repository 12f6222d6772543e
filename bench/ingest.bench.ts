/**
 * The reflector's paged list of pods in isolation, against JSON.parse of the same page bodies.
 *
 * The simulator runs as a child process (this file again, with FA_INGEST_SIM set: no attacher,
 * kubelets or churn, so it only serves the list), as the controller meets the API server in
 * production. In the same run the bench then
 *   1. fetches every page of /api/v1/pods once as text (the baseline's input, untimed),
 *   2. times JSON.parse of those bodies (one warm-up pass, median of 3),
 *   3. runs the reflector's first list `--runs` times (a new reflector each time, stopped once
 *      synced), timing wall clock and this process's CPU (user + system) over each.
 * Ratios: reflector objects/s ÷ JSON.parse objects/s, by wall clock (wall time of both) and by
 * CPU (this process's user + system time of both; the simulator's CPU over the list is reported
 * beside it). On a loaded machine the wall ratio mostly measures the scheduler; the CPU ratio is
 * the stable one. `--ab` alternates runs with the next-page prefetch on and off; `--readers`
 * cycles runs through the ways to read a page on the main thread (`sieve`: the JSON sieve, the
 * controller's default; `inline`: JSON.parse of the whole page). Not looped, not part of
 * `npm run bench`; results print as one JSON object.
 *
 *   node --import tsx bench/ingest.bench.ts [--nodes 10000] [--pods-per-node 10] [--page-size 500] [--runs 3] [--ab] [--readers sieve,inline]
 */
import fetch from 'node-fetch';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { startSimulator } from '../src/sim/server/index.js';
import { loadKubeConfig, type FleetKubeConfig } from '../src/kube/kube-config.js';
import { createReflector } from '../src/kube/reflector.js';
import { POD_KIND } from '../src/kube/projections/pod.js';
import { createJsonSieve, type JsonSieve } from '../src/kube/sieve/json-sieve.js';
import { forkTs, nextMessage } from './lib/children.js';
import { readProc } from './lib/proc-stats.js';
import { median } from './lib/stats.js';

type SimMessage = { type: 'ready'; kubeconfig: string; pods: number };

async function simChild(): Promise<void> {
  const cfg = JSON.parse(process.env.FA_INGEST_SIM ?? '{}') as { nodes: number; podsPerNode: number };
  const sim = await startSimulator({
    fleet: { seed: 1, nodes: cfg.nodes, podsPerNode: cfg.podsPerNode, attacher: false, kubelet: false, churn: 0, nodeFailureRate: 0 },
  });
  const stop = async () => {
    await sim.stop();
    process.exit(0);
  };
  process.once('disconnect', () => void stop());
  process.once('SIGTERM', () => void stop());
  process.send?.({ type: 'ready', kubeconfig: sim.kubeconfig, pods: sim.store.list('pods').length } satisfies SimMessage);
}

/** Every page of `path` as text, following continue tokens (read from the parsed page). */
async function pageBodies(kc: FleetKubeConfig, path: string, pageSize: number): Promise<string[]> {
  const out: string[] = [];
  let cont: string | undefined;
  do {
    const url = new URL(kc.server() + path);
    url.searchParams.set('limit', String(pageSize));
    if (cont) url.searchParams.set('continue', cont);
    const init = await kc.applyToFetchOptions({});
    const res = await fetch(url.toString(), init);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${url.pathname}: HTTP ${res.status}`);
    out.push(text);
    const c = (JSON.parse(text) as { metadata?: { continue?: string } }).metadata?.continue;
    cont = c ? c : undefined;
  } while (cont);
  return out;
}

/** One JSON.parse pass over every body: wall ms and this process's CPU ms. */
function parsePass(bodies: readonly string[]): { ms: number; cpuMs: number; items: number } {
  let items = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const b of bodies) items += (JSON.parse(b) as { items: unknown[] }).items.length;
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000, items };
}

type Reader = 'sieve' | 'inline';

async function reflectorRun(kc: FleetKubeConfig, pageSize: number, simPid: number, prefetch: boolean | undefined, sieve: JsonSieve | undefined) {
  const r = createReflector({ kc, kind: POD_KIND, pageSize, ...(prefetch === undefined ? {} : { prefetch }), ...(sieve ? { sieve } : {}) });
  const sim0 = readProc(simPid)?.cpuS ?? NaN;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const synced = new Promise<void>((resolve) => r.onSynced(resolve));
  void r.start();
  await synced;
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  const simCpuMs = ((readProc(simPid)?.cpuS ?? NaN) - sim0) * 1000;
  const s = r.stats();
  await r.stop();
  return { items: s.objects, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, simCpuMs, lastList: s.lastList };
}

interface RunFigures {
  reader: Reader;
  prefetch?: boolean;
  wall_ms: number;
  cpu_ms: number;
  /** The simulator's CPU over the same window (10 ms ticks). */
  sim_cpu_ms: number;
  objects_per_s_wall: number;
  objects_per_s_cpu: number;
  ratio_wall: number;
  ratio_cpu: number;
  list?: Record<string, number>;
}
const runFigures = (f: RunFigures): RunFigures => f;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string', default: '10000' },
      'pods-per-node': { type: 'string', default: '10' },
      'page-size': { type: 'string', default: '500' },
      runs: { type: 'string', default: '3' },
      /** Alternate runs with the next-page prefetch on and off (A/B in one process). */
      ab: { type: 'boolean', default: false },
      readers: { type: 'string', default: 'sieve' },
    },
  });
  const readers = values.readers.split(',') as Reader[];
  if (readers.length === 0 || readers.some((r) => r !== 'sieve' && r !== 'inline')) throw new Error('--readers: a comma-separated list of sieve and inline');
  const sieve = createJsonSieve();
  const nodes = Number(values.nodes), podsPerNode = Number(values['pods-per-node']);
  const pageSize = Number(values['page-size']), runs = Number(values.runs);
  if (nodes > 10_000) throw new Error('keep the shared machine usable: --nodes ≤ 10000');
  const sim = forkTs(new URL(import.meta.url).pathname, [], { FA_INGEST_SIM: JSON.stringify({ nodes, podsPerNode }), LOG_LEVEL: 'warn' });
  try {
    const ready = await nextMessage<SimMessage>(sim, (m) => m.type === 'ready', 600_000);
    const kc = loadKubeConfig({ yaml: ready.kubeconfig, env: {} });
    const bodies = await pageBodies(kc, POD_KIND.path, pageSize);
    parsePass(bodies);
    const passes = [parsePass(bodies), parsePass(bodies), parsePass(bodies)];
    const parseMs = median(passes.map((p) => p.ms)) ?? NaN;
    const parseCpuMs = median(passes.map((p) => p.cpuMs)) ?? NaN;
    const items = passes[0].items;
    const parseRate = items / (parseMs / 1000);
    const results: RunFigures[] = [];
    for (let i = 0; i < runs; i++) {
      const prefetch = values.ab ? i % 2 === 0 : undefined;
      const reader = readers[i % readers.length]!;
      const run = await reflectorRun(kc, pageSize, sim.pid, prefetch, reader === 'sieve' ? sieve : undefined);
      if (run.items !== items) throw new Error(`reflector listed ${run.items} pods, the pages hold ${items}`);
      const l = run.lastList;
      results.push(runFigures({
        reader,
        ...(prefetch === undefined ? {} : { prefetch }),
        wall_ms: Math.round(run.wallMs),
        cpu_ms: Math.round(run.cpuMs),
        sim_cpu_ms: Math.round(run.simCpuMs),
        objects_per_s_wall: Math.round(items / (run.wallMs / 1000)),
        objects_per_s_cpu: Math.round(items / (run.cpuMs / 1000)),
        ratio_wall: +(parseMs / run.wallMs).toFixed(3),
        ratio_cpu: +(parseCpuMs / run.cpuMs).toFixed(3),
        ...(l ? { list: { pages: l.pages, fetch_ms: Math.round(l.fetchMs), parse_ms: Math.round(l.parseMs), project_ms: Math.round(l.projectMs), total_ms: Math.round(l.totalMs) } } : {}),
      }));
    }
    kc.close();
    const med = (k: 'ratio_wall' | 'ratio_cpu', rs = results) => median(rs.map((r) => r[k]));
    const byMode = values.ab
      ? Object.fromEntries([true, false].map((on) => {
        const rs = results.filter((r) => r.prefetch === on);
        return [on ? 'prefetch_on' : 'prefetch_off', { median_ratio_wall: med('ratio_wall', rs), median_ratio_cpu: med('ratio_cpu', rs), median_wall_ms: median(rs.map((r) => r.wall_ms)) }];
      }))
      : {};
    const byReader = readers.length > 1
      ? Object.fromEntries(readers.map((reader) => {
        const rs = results.filter((r) => r.reader === reader);
        return [reader, { median_ratio_wall: med('ratio_wall', rs), median_ratio_cpu: med('ratio_cpu', rs), median_wall_ms: median(rs.map((r) => r.wall_ms)), median_cpu_ms: median(rs.map((r) => r.cpu_ms)) }];
      }))
      : {};
    console.log(JSON.stringify({
      bench: 'ingest',
      nodes, pods_per_node: podsPerNode, page_size: pageSize, pods: items, pages: bodies.length,
      mb: +(bodies.reduce((n, b) => n + b.length, 0) / 2 ** 20).toFixed(1),
      loadavg: os.loadavg().map((x) => +x.toFixed(1)),
      json_parse: { ms: Math.round(parseMs), cpu_ms: Math.round(parseCpuMs), objects_per_s: Math.round(parseRate) },
      runs: results,
      median_ratio_wall: med('ratio_wall'),
      median_ratio_cpu: med('ratio_cpu'),
      ...byMode,
      ...byReader,
    }, null, 2));
  } finally {
    await sim.stop();
  }
}

if (process.env.FA_INGEST_SIM) await simChild();
else await main();
