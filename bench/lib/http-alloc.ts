// Heap allocated per inspection request (GC pressure): `npm run bench:http -- --alloc`
// [--nodes 10000 --duration 4 --routes bare,bare-sized,node,volume,summary --out FILE]
// (bench/http.bench.ts).
//
// Why: at 100k nodes every scavenge stops the controller's loop for ~10 ms, and how often one
// comes is the young bytes allocated over the young generation's size; so the bytes a request
// allocates decide how many node lookups meet a scavenge, most likely what their saturated p99
// is made of. The profiler's samples are scaled to estimates of all bytes allocated.
// Subject: the stand-in controller (test/http/stand-in-controller.ts) with its loop stopped, so
// that only requests allocate, and its app with bench:http's two bare routes. Per route, in turn:
// autocannon (its command line, in a child process, 10 connections) for `--duration` s while V8's
// sampling heap profiler records this process's allocations, objects already freed included; the
// bytes sampled over the requests answered are the allocation per request, by allocating
// function. The profiler slows the server several times over: the rates printed are not
// bench:http's. Results: bench/results/http-alloc.json (or `--out FILE`).
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { Session } from 'node:inspector/promises';
import { createRequire } from 'node:module';

interface SampledProfile {
  head: ProfileNode;
  samples: Array<{ size: number; nodeId: number }>;
}
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children: ProfileNode[];
}
interface RouteAlloc { route: string; requests: number; bytes_per_request: number; top: Array<{ fn: string; bytes_per_request: number }> }

export const ALLOC_ROUTES = ['bare', 'bare-sized', 'node', 'volume', 'summary'] as const;
export type AllocRoute = (typeof ALLOC_ROUTES)[number];
type Route = AllocRoute;

export interface AllocConfig { nodes: number; seconds: number; routes: readonly Route[]; out: string | URL; command: string }

/** Bytes per request by allocating function, from a sampling heap profile. */
function attribute(profile: SampledProfile, requests: number): Omit<RouteAlloc, 'route' | 'requests'> {
  const names = new Map<number, string>();
  const walk = (n: ProfileNode) => {
    const f = n.callFrame;
    // fast-json-stringify compiles each schema into functions `anonymousN` with no script URL.
    const generated = f.url === '' && /^anonymous\d*$/.test(f.functionName);
    names.set(n.id, generated ? 'schema-serializer (fast-json-stringify, generated)' : `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber}`);
    n.children.forEach(walk);
  };
  walk(profile.head);
  let total = 0;
  const byFn = new Map<string, number>();
  for (const s of profile.samples) {
    total += s.size;
    const k = names.get(s.nodeId) ?? '?';
    byFn.set(k, (byFn.get(k) ?? 0) + s.size);
  }
  const top = [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([fn, b]) => ({ fn, bytes_per_request: Math.round(b / requests) }));
  return { bytes_per_request: Math.round(total / requests), top };
}

/** Runs autocannon's command line against `url` for `seconds`; resolves with the requests answered. */
async function load(url: string, seconds: number): Promise<number> {
  const cli = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  const child = spawn(process.execPath, [cli, '-c', '10', '-d', String(seconds), '-j', url], { stdio: ['ignore', 'pipe', 'inherit'] });
  const out: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => out.push(d));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`autocannon exited with ${code}`);
  const result = JSON.parse(Buffer.concat(out).toString('utf8')) as { requests: { total: number }; non2xx: number; errors: number };
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result.requests.total;
}

export async function runHttpAlloc({ nodes, seconds, routes, out, command }: AllocConfig): Promise<void> {
  const { startStandInController, standInView, nodeName, volumeName } = await import('../../test/http/stand-in-controller.js');
  const { createControllerMetrics } = await import('../../src/metrics/controller-metrics.js');
  const { buildServer, listenServer } = await import('../../src/http/server.js');

  const loop = startStandInController(nodes);
  await loop.stop(); // the fleet stays; nothing but requests allocates from here on
  const { state } = loop;
  const view = standInView(loop, nodes);
  const app = buildServer({ state, view, metrics: createControllerMetrics(), listenHost: '127.0.0.1' });
  let sized = '';
  // As bench:http's: the route alone, and the route sending a node answer it did not build.
  app.get('/bare/:name', () => ({ ok: true }));
  app.get('/bare-sized/:name', (_request, reply) => { reply.type('application/json; charset=utf-8').send(sized); });
  const url = await listenServer(app, '127.0.0.1:0');
  const node = nodeName(Math.floor(nodes / 2));
  sized = (await app.inject({ url: `/api/v1/nodes/${node}` })).body;
  const paths: Record<Route, string> = {
    bare: `/bare/${node}`,
    'bare-sized': `/bare-sized/${node}`,
    node: `/api/v1/nodes/${node}`,
    volume: `/api/v1/volumes/${encodeURIComponent(volumeName(Math.floor(nodes / 2), 3))}`,
    summary: '/api/v1/summary',
  };

  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  const results: RouteAlloc[] = [];
  console.log(`${nodes} nodes (stand-in), node answer ${Buffer.byteLength(sized)} bytes, ${seconds} s per route`);
  for (const route of routes) {
    await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    const requests = await load(url + paths[route], seconds);
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: SampledProfile };
    const r = { route, requests, ...attribute(profile, requests) };
    results.push(r);
    console.log(`\n  ${route.padEnd(11)} ${String(r.bytes_per_request).padStart(7)} B/request (${requests} requests)`);
    for (const t of r.top) console.log(`    ${String(t.bytes_per_request).padStart(7)} B  ${t.fn}`);
  }
  const of = (r: Route) => results.find((x) => x.route === r)?.bytes_per_request;
  const node_ = of('node');
  const sizedBytes = of('bare-sized');
  if (node_ !== undefined && sizedBytes !== undefined) console.log(`\nnode lookup ÷ node-sized bare route: ${(node_ / sizedBytes).toFixed(2)}×`);
  session.disconnect();
  await app.close();
  const record = {
    bench: 'http-alloc',
    command,
    date: new Date().toISOString(),
    machine: { cpus: availableParallelism(), node: process.version, loadavg_at_end: loadavg().map((l) => Math.round(l * 100) / 100) },
    nodes,
    duration_s: seconds,
    node_answer_bytes: Buffer.byteLength(sized),
    node_over_bare_sized: node_ !== undefined && sizedBytes !== undefined ? Math.round((node_ / sizedBytes) * 100) / 100 : undefined,
    routes: results,
  };
  writeFileSync(out, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`wrote ${out instanceof URL ? out.pathname : out}`);
}
