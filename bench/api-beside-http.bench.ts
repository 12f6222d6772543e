// The controller's API calls beside the inspection API, HTTP/1.1 vs HTTP/2:
// `npm run bench:api-beside-http` = `node --import tsx bench/api-beside-http.bench.ts [--rate 2000
// --seconds 8 --reps 3 --connections 16 --out FILE]`.
//
// Question: how much of the main thread does one paced API call take from an HTTP server in the
// same process (the inspection API beside the controller's hot calls), on each transport?
// bench/api-writes.bench.ts answers it for calls sent back to back; here the calls are paced, as
// in a controller's steady state. This process sends the four hot calls (VolumeAttachment create,
// Node status patch, Node GET, VolumeAttachment delete) at `--rate` calls/s to the simulator in a
// child (api-writes.bench.ts's simulator role), while autocannon in another child loads a bare
// fastify route of this process with `--connections` connections for `--seconds`. Modes: no API
// calls, HTTP/1.1 calls, HTTP/2 calls, in alternating order per rep. Per mode (medians over the
// reps): the bare route's req/s and p99, the API calls/s made, and this thread's event-loop
// utilisation (ELU). Derived: main-thread µs per API call = (ELU − bare req/s × the ELU cost of
// one bare request without API calls) ÷ calls/s. Prints JSON and writes it to
// bench/results/api-beside-http.json (or --out).
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { createKubeApiClient, type KubeApiClient } from '../src/kube/api-client.js';
import { loadKubeConfig } from '../src/kube/kube-config.js';
import { forkTs, nextMessage } from './lib/children.js';
import { median, round } from './lib/stats.js';

const ROLE_ENV = 'FA_API_BESIDE_ROLE';
const DRIVER = 'bench.csi.fleet-attach.io';
const NODES = 100;
const volume = (node: string, i: number) => `kubernetes.io/csi/${DRIVER}^${node}-v${i}`;

type Mode = 'none' | 'h1' | 'h2';
interface Load { rps: number; p50: number; p99: number }
interface ModeRun { bare_req_per_s: number; bare_p99_ms: number; api_calls_per_s: number; elu: number }

/** Child: autocannon against `url`, reporting its averages over IPC. */
async function clientChild(): Promise<void> {
  const autocannon = createRequire(import.meta.url)('autocannon') as (opts: Record<string, unknown>) => Promise<{ requests: { average: number }; latency: { p50: number; p99: number } }>;
  // The parent's window opens here, not at the fork (module loading takes a second or more).
  await new Promise<void>((resolve) => process.send?.({ start: true }, () => resolve()));
  const r = await autocannon({ url: process.env.FA_API_BESIDE_URL!, connections: Number(process.env.FA_API_BESIDE_CONNECTIONS), duration: Number(process.env.FA_API_BESIDE_SECONDS) });
  process.send?.({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 } satisfies Load, () => process.exit(0));
}

/** One quad as the controller's attach then detach sends them; names unique per `tag`. */
async function quad(api: KubeApiClient, tag: string, i: number): Promise<void> {
  const nodeName = `node-${i % NODES}`;
  const name = `beside-${tag}-${i}`;
  await api.createVolumeAttachment({ metadata: { name }, spec: { attacher: DRIVER, nodeName, source: { persistentVolumeName: `pv-${tag}-${i}` } } });
  await api.patchNodeStatus(nodeName, Array.from({ length: 10 }, (_, v) => ({ name: volume(nodeName, v), devicePath: '' })));
  await api.getNode(nodeName);
  await api.deleteVolumeAttachment(name);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rate: { type: 'string', default: '2000' },
      seconds: { type: 'string', default: '8' },
      reps: { type: 'string', default: '3' },
      connections: { type: 'string', default: '16' },
      out: { type: 'string', default: fileURLToPath(new URL('./results/api-beside-http.json', import.meta.url)) },
    },
  });
  const [rate, seconds, reps, connections] = [values.rate, values.seconds, values.reps, values.connections].map(Number) as [number, number, number, number];
  const sim = forkTs(fileURLToPath(new URL('./api-writes.bench.ts', import.meta.url)), [], { FA_API_WRITES_ROLE: 'sim', FA_API_WRITES_NODES: String(NODES) });
  const app = Fastify();
  app.get('/bare', async () => ({ ok: true }));
  try {
    const { kubeconfig } = await nextMessage<{ type: string; kubeconfig: string }>(sim, (m) => m.type === 'ready', 60_000);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/bare`;

    const runMode = async (mode: Mode, tag: string): Promise<ModeRun> => {
      const kc = loadKubeConfig({ yaml: kubeconfig });
      kc.http2 = mode === 'h2';
      const api = mode === 'none' ? undefined : createKubeApiClient({ kc, rawWrites: true, qps: 0, maxInFlight: 64 });
      let calls = 0;
      let next = 0;
      let credit = 0;
      let failures = 0;
      // Quads started every 10 ms at rate / 4 per second (fractional credit carried over).
      const pacer = api && setInterval(() => {
        for (credit += rate / 400; credit >= 1; credit--) {
          void quad(api, tag, next++).then(() => (calls += 4), () => failures++);
        }
      }, 10);
      try {
        await new Promise((r) => setTimeout(r, 1000)); // the pace settles first
        let calls0 = 0;
        let t0 = 0;
        let elu0 = performance.eventLoopUtilization();
        const child = fork(fileURLToPath(import.meta.url), [], {
          env: { ...process.env, [ROLE_ENV]: 'client', FA_API_BESIDE_URL: url, FA_API_BESIDE_CONNECTIONS: String(connections), FA_API_BESIDE_SECONDS: String(seconds) },
          execArgv: ['--import', 'tsx'],
        });
        const load = await new Promise<Load>((resolve, reject) => {
          child.on('message', (m: Load | { start: true }) => {
            if (!('start' in m)) return resolve(m);
            calls0 = calls;
            t0 = performance.now();
            elu0 = performance.eventLoopUtilization();
          });
          child.once('exit', (code) => reject(new Error(`autocannon child exited with ${code}`)));
        });
        const elu = performance.eventLoopUtilization(elu0).utilization;
        return { bare_req_per_s: load.rps, bare_p99_ms: load.p99, api_calls_per_s: ((calls - calls0) * 1000) / (performance.now() - t0), elu };
      } finally {
        if (pacer) clearInterval(pacer);
        await new Promise((r) => setTimeout(r, 1000)); // quads in flight finish
        kc.close();
        if (failures > 0) console.error(`${mode}: ${failures} quads failed`);
      }
    };

    const modes: Mode[] = ['none', 'h1', 'h2'];
    const runs: Record<Mode, ModeRun[]> = { none: [], h1: [], h2: [] };
    for (let r = 0; r < reps; r++) {
      for (const m of r % 2 === 0 ? modes : [...modes].reverse()) {
        const run = await runMode(m, `${m}-${r}`);
        runs[m].push(run);
        console.error(`rep ${r + 1} ${m}: bare ${run.bare_req_per_s.toFixed(0)} req/s p99 ${run.bare_p99_ms} ms, API ${run.api_calls_per_s.toFixed(0)} calls/s, ELU ${run.elu.toFixed(2)}`);
      }
    }
    const med = (m: Mode, k: keyof ModeRun) => median(runs[m].map((x) => x[k])) ?? NaN;
    // Loop µs of one bare request, from the runs without API calls.
    const usPerBare = (med('none', 'elu') * 1e6) / med('none', 'bare_req_per_s');
    const usPerCall = (m: Mode) => (med(m, 'elu') * 1e6 - med(m, 'bare_req_per_s') * usPerBare) / med(m, 'api_calls_per_s');
    const summary = (m: Mode) => ({
      bare_req_per_s: round(med(m, 'bare_req_per_s'), 0),
      bare_p99_ms: med(m, 'bare_p99_ms'),
      api_calls_per_s: round(med(m, 'api_calls_per_s'), 0),
      elu: round(med(m, 'elu'), 3),
      ...(m === 'none' ? { loop_us_per_bare_request: round(usPerBare, 1) } : { loop_us_per_api_call: round(usPerCall(m), 0) }),
      runs: runs[m].map((x) => ({ ...x, bare_req_per_s: round(x.bare_req_per_s, 0), api_calls_per_s: round(x.api_calls_per_s, 0), elu: round(x.elu, 3) })),
    });
    const out = {
      bench: 'api-beside-http',
      command: 'npm run bench:api-beside-http',
      date: new Date().toISOString(),
      machine: { cpus: availableParallelism(), node: process.version, loadavg_at_end: loadavg().map((x) => round(x, 2)) },
      config: { rate_calls_per_s: rate, seconds, reps, connections },
      none: summary('none'),
      h1: summary('h1'),
      h2: summary('h2'),
      bare_req_per_s_h1_over_h2: round(med('h1', 'bare_req_per_s') / med('h2', 'bare_req_per_s'), 2),
      loop_us_per_call_h2_over_h1: round(usPerCall('h2') / usPerCall('h1'), 2),
    };
    console.log(JSON.stringify(out, null, 2));
    writeFileSync(values.out!, `${JSON.stringify(out, null, 2)}\n`);
  } finally {
    await app.close();
    await sim.stop();
  }
}

if (process.env[ROLE_ENV] === 'client') await clientChild();
else await main();
