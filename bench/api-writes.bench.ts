// Hot single-object calls, generated client vs raw requests, and raw over HTTP/1.1 vs HTTP/2:
// `npm run bench:api` = `node --import tsx bench/api-writes.bench.ts [--quads 700 --reps 3 --warmup 300
// --concurrency 64 --nodes 100 --out FILE]`.
// Two more measurements of the transport, as options (each writes its own results file):
//   --h2-request    client CPU of one HTTP/2 request on Node's own client, with and without the
//                   Node 20 workarounds raw-write.ts applies (bench/lib/h2-request.ts)
//   --h2-retention  what a finished call leaves for the collector, HTTP/2 with and without the
//                   StreamTable against HTTP/1.1 (bench/lib/h2-retention.ts)
// both with [--requests N --rounds 4 --concurrency 64 --out FILE].
//
// Subject: KubeApiClient's four hot calls (createVolumeAttachment, patchNodeStatus, getNode,
// deleteVolumeAttachment), the same client code with `rawWrites: false` (client-node's
// generated API, HTTP/1.1 keep-alive), with the raw path (src/kube/raw-write.ts) over HTTP/1.1
// keep-alive (`raw_h1`, `--kube-api-http2=false`) and over one HTTP/2 connection (`raw`, the
// default), in this process, against
// the simulator's HTTPS API server in a child process (this file with FA_API_WRITES_ROLE=sim:
// an empty cluster plus `--nodes` Nodes shaped like the fleet generator's, 10 volumes in use),
// so that this process's CPU is the client's alone.
// One "quad" = the four calls in sequence on one VA and its node, as one attach then detach of
// the controller does them (status patch with 10 attached volumes, then the F9 live read);
// `--concurrency` quads run at once, with no client-side rate limit. Each rep measures both
// paths over `--quads` quads each, alternating which goes first; a `--warmup` of each path comes
// before. Reported per path: this process's CPU (process.cpuUsage, user + system) µs per call,
// the simulator's CPU µs per call (the server's side of the same calls), calls/s, and the ratios
// (medians over the reps). Prints JSON and writes it to bench/results/api-writes.json (or --out).
import { writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createKubeApiClient, type KubeApiClient } from '../src/kube/api-client.js';
import { loadKubeConfig } from '../src/kube/kube-config.js';
import { nodeObject } from '../src/sim/actors/objects.js';
import { startSimulator } from '../src/sim/server/index.js';
import { commandLine, givenFlags } from './lib/args.js';
import { forkTs, nextMessage, runChild, runMain } from './lib/children.js';
import { median, round } from './lib/stats.js';

const ROLE_ENV = 'FA_API_WRITES_ROLE';
const DRIVER = 'bench.csi.fleet-attach.io';
const volume = (node: string, i: number) => `kubernetes.io/csi/${DRIVER}^${node}-v${i}`;

type Ready = { type: 'ready'; kubeconfig: string };
type Cpu = { type: 'cpu'; us: number };

/** Child: the simulator with `nodes` Nodes, each with 10 volumes in use. */
async function simChild(nodes: number): Promise<void> {
  const sim = await startSimulator({});
  const now = new Date().toISOString();
  for (let n = 0; n < nodes; n++) {
    const node = nodeObject(`node-${n}`, now);
    (node.status as Record<string, unknown>).volumesInUse = Array.from({ length: 10 }, (_, i) => volume(`node-${n}`, i));
    sim.store.create('nodes', node);
  }
  process.on('disconnect', () => void sim.stop().then(() => process.exit(0)));
  process.on('message', (m: { type?: string }) => {
    if (m.type !== 'cpu') return;
    const u = process.cpuUsage();
    process.send?.({ type: 'cpu', us: u.user + u.system } satisfies Cpu);
  });
  process.send?.({ type: 'ready', kubeconfig: sim.kubeconfig } satisfies Ready);
}

interface PathRun {
  calls: number;
  cpuUsPerCall: number;
  serverCpuUsPerCall: number;
  callsPerSec: number;
}

/** `quads` quads, `concurrency` at once; `tag` keeps VA names unique across runs. */
async function runQuads(api: KubeApiClient, tag: string, quads: number, concurrency: number, nodes: number, serverCpuUs: () => Promise<number>): Promise<PathRun> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < quads; i = next++) {
      const nodeName = `node-${i % nodes}`;
      const name = `bench-${tag}-${i}`;
      const created = await api.createVolumeAttachment({
        metadata: { name },
        spec: { attacher: DRIVER, nodeName, source: { persistentVolumeName: `pv-${tag}-${i}` } },
      });
      if (created !== 'created') throw new Error(`${name}: ${created}`);
      const attached = Array.from({ length: 10 }, (_, v) => ({ name: volume(nodeName, v), devicePath: '' }));
      if ((await api.patchNodeStatus(nodeName, attached)) !== 'patched') throw new Error(`${nodeName}: patch not-found`);
      const node = await api.getNode(nodeName);
      if (node?.volumesInUse?.length !== 10) throw new Error(`${nodeName}: unexpected volumesInUse`);
      if ((await api.deleteVolumeAttachment(name)) !== 'deleted') throw new Error(`${name}: delete not-found`);
    }
  };
  const server0 = await serverCpuUs();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const server = (await serverCpuUs()) - server0;
  const calls = quads * 4;
  return { calls, cpuUsPerCall: (cpu.user + cpu.system) / calls, serverCpuUsPerCall: server / calls, callsPerSec: (calls / wallMs) * 1000 };
}

const FLAGS = {
  quads: { type: 'string', help: 'quads (4 calls) per path per rep (default 700)' },
  reps: { type: 'string', help: 'measured reps of every path (default 3)' },
  warmup: { type: 'string', help: 'warm-up quads per path (default 300)' },
  concurrency: { type: 'string', default: '64', help: 'calls (quads, requests) at once' },
  nodes: { type: 'string', help: 'Nodes in the simulator (default 100)' },
  'h2-request': { type: 'boolean', help: "instead: one HTTP/2 request's client CPU, with and without the Node 20 workarounds" },
  'h2-retention': { type: 'boolean', help: 'instead: what a finished call leaves for the collector, per transport' },
  requests: { type: 'string', help: 'with --h2-request / --h2-retention: requests per block (default 20000 / 30000)' },
  rounds: { type: 'string', help: 'with --h2-request / --h2-retention: rounds of every variant (default 4)' },
  out: { type: 'string', arg: 'FILE', help: 'results file (default bench/results/api-writes.json, h2-request.json, h2-retention.json)' },
} as const;

async function main(): Promise<void> {
  const cli = commandLine('bench:api', FLAGS);
  const values = cli.values;
  const given = givenFlags();
  const variant = values['h2-request'] ? 'h2-request' : values['h2-retention'] ? 'h2-retention' : undefined;
  const results = (name: string) => values.out ?? fileURLToPath(new URL(`./results/${name}`, import.meta.url));
  if (values['h2-request'] && values['h2-retention']) cli.fail('--h2-request and --h2-retention: one at a time');
  if (variant) {
    for (const f of ['quads', 'reps', 'warmup', 'nodes']) if (given.has(f)) cli.fail(`--${f} does not apply with --${variant}`);
    const config = {
      requests: given.has('requests') ? cli.int('requests') : variant === 'h2-request' ? 20_000 : 30_000,
      rounds: given.has('rounds') ? cli.int('rounds') : 4,
      concurrency: cli.int('concurrency'),
      out: results(`${variant}.json`),
      command: cli.command,
    };
    if (variant === 'h2-request') await (await import('./lib/h2-request.js')).runH2Request(config);
    else await (await import('./lib/h2-retention.js')).runH2Retention(config);
    return;
  }
  for (const f of ['requests', 'rounds']) if (given.has(f)) cli.fail(`--${f} applies with --h2-request or --h2-retention only`);
  const int = (name: 'quads' | 'reps' | 'warmup' | 'nodes', dflt: number) => (given.has(name) ? cli.int(name) : dflt);
  const [quads, reps, warmup, concurrency, nodes] = [int('quads', 700), int('reps', 3), int('warmup', 300), cli.int('concurrency'), int('nodes', 100)];
  const out = results('api-writes.json');
  const total = 4 * (warmup * 2 + quads * 2 * reps);
  if (total > 20_000) console.error(`note: ${total} calls (the shared box's budget is 20k)`);

  const sim = forkTs(fileURLToPath(import.meta.url), [], { [ROLE_ENV]: 'sim', FA_API_WRITES_NODES: String(nodes) });
  try {
    const { kubeconfig } = await nextMessage<Ready>(sim, (m) => m.type === 'ready', 60_000);
    const kc = loadKubeConfig({ yaml: kubeconfig });
    const kcH1 = loadKubeConfig({ yaml: kubeconfig });
    kcH1.http2 = false;
    const serverCpuUs = async () => {
      const reply = nextMessage<Cpu>(sim, (m) => m.type === 'cpu', 10_000);
      sim.process.send({ type: 'cpu' });
      return (await reply).us;
    };
    const clients = {
      generated: createKubeApiClient({ kc: kcH1, rawWrites: false, qps: 0, maxInFlight: concurrency }),
      raw_h1: createKubeApiClient({ kc: kcH1, rawWrites: true, qps: 0, maxInFlight: concurrency }),
      raw: createKubeApiClient({ kc, rawWrites: true, qps: 0, maxInFlight: concurrency }),
    };
    const paths = ['generated', 'raw_h1', 'raw'] as const;
    type Path = (typeof paths)[number];
    for (const p of paths) await runQuads(clients[p], `warm-${p.replace('_', '-')}`, warmup, concurrency, nodes, serverCpuUs);
    const runs: Record<Path, PathRun[]> = { generated: [], raw_h1: [], raw: [] };
    for (let r = 0; r < reps; r++) {
      for (const p of r % 2 === 0 ? paths : [...paths].reverse()) {
        global.gc?.();
        runs[p].push(await runQuads(clients[p], `${p.replace('_', '-')}-${r}`, quads, concurrency, nodes, serverCpuUs));
      }
    }
    kc.close();
    kcH1.close();
    const summary = (p: Path) => ({
      cpu_us_per_call: round(median(runs[p].map((x) => x.cpuUsPerCall))),
      server_cpu_us_per_call: round(median(runs[p].map((x) => x.serverCpuUsPerCall))),
      calls_per_s: round(median(runs[p].map((x) => x.callsPerSec)), 0),
      runs: runs[p].map((x) => ({ cpu_us_per_call: round(x.cpuUsPerCall), server_cpu_us_per_call: round(x.serverCpuUsPerCall), calls_per_s: round(x.callsPerSec, 0) })),
    });
    const g = summary('generated');
    const h1 = summary('raw_h1');
    const w = summary('raw');
    const ratio = (a: number | null | undefined, b: number | null | undefined) => round((a ?? NaN) / (b ?? NaN), 2);
    const text = JSON.stringify(
        {
          bench: 'api-writes',
          command: cli.command,
          date: new Date().toISOString(),
          machine: { cpus: availableParallelism(), node: process.version, loadavg_at_end: loadavg().map((l) => round(l, 2)) },
          config: { quads, reps, warmup, concurrency, nodes, calls_measured_per_path: quads * 4 * reps },
          generated: g,
          raw_h1: h1,
          raw: w,
          cpu_per_call_generated_over_raw_h1: ratio(g.cpu_us_per_call, h1.cpu_us_per_call),
          cpu_per_call_raw_h1_over_raw_h2: ratio(h1.cpu_us_per_call, w.cpu_us_per_call),
          server_cpu_per_call_raw_h1_over_raw_h2: ratio(h1.server_cpu_us_per_call, w.server_cpu_us_per_call),
          calls_per_s_raw_h2_over_raw_h1: ratio(w.calls_per_s, h1.calls_per_s),
        },
        null,
        2,
      );
    console.log(text);
    writeFileSync(out, `${text}\n`);
  } finally {
    await sim.stop();
  }
}

if (process.env[ROLE_ENV] === 'sim') runChild(() => simChild(Number(process.env.FA_API_WRITES_NODES ?? '100')));
else runMain(main);
