/**
 * `node --import tsx bench/sim-list.bench.ts`: the simulator's paged LIST, as the controller's
 * initial sync reads it. Builds a fleet in this process (by default no actors: the store alone), serves it
 * over HTTPS, and has a client child process (bench/sim-list-client.ts) list every pod in pages
 * of `SIM_LIST_PAGE` (default 500), the next page requested as soon as the current page's
 * continue token shows (one page ahead, as src/kube/list-pages.ts does), each page parsed.
 * Reports per round the client's objects/s and MB/s, the server process's CPU time per page,
 * and how long each page request waited for its first byte.
 *
 * Environment: SIM_LIST_NODES (default 10000, 10 pods each), SIM_LIST_ROUNDS (default 3),
 * SIM_LIST_PREFETCH=0 (one page at a time), SIM_LIST_ACTORS=1 (attacher and kubelets running, as in
 * the end-to-end bench), SIM_LIST_PROFILE=out.cpuprofile (profile the server
 * thread over the rounds). Prints results; writes nothing.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { populateFleet } from '../src/sim/actors/index.js';
import { startSimulator, type Simulator } from '../src/sim/server/index.js';
import { createSimStore } from '../src/sim/store/index.js';
import { LIST_CLIENT_SOURCE } from './sim-list-client.js';
import { startCpuProfile } from './lib/cpu-profile.js';

const NODES = Number(process.env.SIM_LIST_NODES ?? 10_000);
const PAGE = Number(process.env.SIM_LIST_PAGE ?? 500);
const ROUNDS = Number(process.env.SIM_LIST_ROUNDS ?? 3);
const PREFETCH = process.env.SIM_LIST_PREFETCH !== '0';

interface PageStat { waitMs: number; recvMs: number; bytes: number }
interface ListResult { items: number; bytes: number; ms: number; parseMs: number; pages: PageStat[] }

const ACTORS = process.env.SIM_LIST_ACTORS === '1';

let sim: Simulator;
if (ACTORS) {
  // As the end-to-end bench's simulator runs (bench/lib/sim-child.ts), churn off.
  sim = await startSimulator({ fleet: { nodes: NODES, podsPerNode: 10, seed: 1, attacher: true, kubelet: true, churn: 0, nodeFailureRate: 0 } });
} else {
  const s = createSimStore({ watchWindow: 100_000 });
  await populateFleet(s, { nodes: NODES, podsPerNode: 10, seed: 1 });
  sim = await startSimulator({ store: s });
}
const { store } = sim;
console.log(`${NODES} nodes: ${store.stats().objects} objects${ACTORS ? ', fleet actors running (attacher, kubelets)' : ', no actors'}`);
const client = spawn(process.execPath, ['-e', LIST_CLIENT_SOURCE], {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  env: { ...process.env, FA_SIM_LIST_CLIENT: JSON.stringify({ url: sim.url, token: sim.token, ca: sim.caPem }) },
});

function rpc(msg: Record<string, unknown>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const on = (m: { op: string; result?: unknown; error?: string }) => {
      client.off('message', on);
      if (m.op === 'error') reject(new Error(m.error));
      else resolve(m.result);
    };
    client.on('message', on);
    client.send(msg);
  });
}

const quantile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))] * 100) / 100;
};

try {
  await rpc({ op: 'list', path: '/api/v1/nodes', limit: PAGE, prefetch: PREFETCH }); // warm-up: TLS, JIT
  const profileFile = process.env.SIM_LIST_PROFILE;
  const profiler = profileFile ? await startCpuProfile(100) : undefined;
  for (let round = 1; round <= ROUNDS; round++) {
    const cpu0 = process.cpuUsage();
    const elu0 = performance.eventLoopUtilization();
    const r = (await rpc({ op: 'list', path: '/api/v1/pods', limit: PAGE, prefetch: PREFETCH })) as ListResult;
    const cpu = process.cpuUsage(cpu0);
    const elu = performance.eventLoopUtilization(elu0);
    if (r.items !== store.count('pods')) throw new Error(`listed ${r.items} pods, expected ${store.count('pods')}`);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    const waits = r.pages.map((p) => p.waitMs);
    console.log(
      `round ${round}: ${r.items} pods, ${r.pages.length} pages, ${(r.bytes / 1e6).toFixed(1)} MB in ${Math.round(r.ms)} ms: ` +
        `${Math.round(r.items / (r.ms / 1000))} objects/s, ${(r.bytes / 1e6 / (r.ms / 1000)).toFixed(1)} MB/s (client parse ${Math.round(r.parseMs)} ms); ` +
        `server CPU ${Math.round(cpuMs)} ms (user ${Math.round(cpu.user / 1000)}, system ${Math.round(cpu.system / 1000)}; ${(cpuMs / r.pages.length).toFixed(2)} ms/page, ${((r.bytes / 1e6) / (cpuMs / 1000)).toFixed(0)} MB per CPU s), ` +
        `event loop ${Math.round(elu.utilization * 100)}% busy; first byte after p50 ${quantile(waits, 0.5)} / p99 ${quantile(waits, 0.99)} ms`,
    );
  }
  if (profiler && profileFile) console.log(`wrote the server thread's CPU profile to ${await profiler.stop(profileFile)}`);
  console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await rpc({ op: 'stop' });
} finally {
  client.kill();
  await sim.stop();
}

