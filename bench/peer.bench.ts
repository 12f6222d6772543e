// Peer benchmark: `npm run bench:peer` [-- --targets sim,real --sizes 10000,50000
// --real-nodes 1000 --pods-per-node 10 --qps 20000 --upstream-defaults on|off
// --only-controller fleet-attach|upstream --churn 100 --real-churn 20 --churn-seconds 60 --converge-timeout 1200
// --detach-timeout 900 --out FILE], or `-- --charts-only`.
//
// fleet-attach and upstream kube-controller-manager v1.37 (its attach/detach controller only),
// one after the other, each cold against a freshly generated fleet of the same seed:
//   sim   the embedded simulator at each of --sizes nodes × --pods-per-node pods (kube-controller-
//         manager with --kube-api-content-type=application/json: the simulator speaks JSON only);
//   real  etcd + kube-apiserver v1.37 on loopback at --real-nodes, the fleet created and played
//         over the API by the simulator's actors (startRemoteFleet, as `sim --actors-only`).
// Both controllers at the same client limit (--qps as qps and burst), and upstream also at its
// shipped 20 qps / 30 burst (qps recorded as 20), as most clusters run it.
// Per run (bench/lib/peer-run.ts): cold start to every volume attached and in its node's
// status.volumesAttached; the controller's CPU seconds to that point and its peak RSS over the
// run (/proc); new-pod-to-VolumeAttachment p50/p99 under --churn pod changes/s (--real-churn
// on the real cluster, whose API server shares the 2 cores with etcd and the fleet) for
// --churn-seconds; the time to detach everything after every pod is deleted at once; API
// requests by "verb resource[/subresource]" over the whole run (the simulator's request hook;
// on the real cluster, kube-apiserver's audit log of the controller's ServiceAccount only).
// A phase past its timeout leaves its figure null, with a note.
//
// Results: bench/results/peer.json ({"runs": [...]}: runs of another target, size, controller or
// qps already there are kept; a run measured again replaces its row) and bench/results/peer.svg
// (fleet-attach ÷ upstream at the same qps). `node scripts/bench-table.js` puts the ratios in the
// README.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandLine } from './lib/args.js';
import { apiTotal, PEER_FIGURES, peerRatios, writePeerChart } from './lib/peer-chart.js';
import type { ControllerName } from './lib/peer-controllers.js';
import { runPeer, type PeerRun } from './lib/peer-run.js';

const cli = commandLine('bench:peer', {
  targets: { type: 'string', default: 'sim,real', arg: 'sim,real', help: 'the simulator and/or a real kube-apiserver' },
  sizes: { type: 'string', default: '10000,50000', arg: 'N,N…', help: 'simulator fleet sizes (nodes)' },
  'real-nodes': { type: 'string', default: '1000', arg: 'N,N…', help: 'real kube-apiserver fleet sizes (nodes)' },
  'pods-per-node': { type: 'string', default: '10', arg: 'N', help: 'pods (each with its PVC and PV) per node' },
  qps: { type: 'string', default: '20000', arg: 'N', help: "both controllers' client qps and burst" },
  'upstream-defaults': { type: 'string', default: 'on', arg: 'on|off', help: "also upstream at its shipped 20 qps / 30 burst" },
  'only-controller': { type: 'string', arg: 'fleet-attach|upstream', help: 'run one controller only' },
  churn: { type: 'string', default: '100', arg: 'PER_S', help: 'simulator: pod changes/s while new-pod latency is timed' },
  'real-churn': { type: 'string', default: '20', arg: 'PER_S', help: 'real kube-apiserver: pod changes/s while new-pod latency is timed' },
  'churn-seconds': { type: 'string', default: '60', arg: 'S', help: 'seconds of churn (0: no churn phase)' },
  'converge-timeout': { type: 'string', default: '1200', arg: 'S', help: 'cold start cap: past it the run records null and a note' },
  'settle-timeout': { type: 'string', default: '180', arg: 'S', help: 'cap of the wait for a settled fleet after churn' },
  'detach-timeout': { type: 'string', default: '900', arg: 'S', help: 'cap of the detach-everything phase' },
  seed: { type: 'string', default: '1', arg: 'N', help: 'fleet seed (the same for every run)' },
  'fleet-qps': { type: 'string', default: '0', arg: 'N', help: "real: the fleet actors' own client qps (0: unlimited)" },
  'fleet-in-flight': { type: 'string', default: '64', arg: 'N', help: "real: the fleet actors' writes in flight" },
  'fleet-attach-args': { type: 'string', default: '', arg: '"ARGS"', help: 'more `fleet-attach run` flags' },
  'kcm-args': { type: 'string', default: '', arg: '"ARGS"', help: 'more kube-controller-manager flags (e.g. "--v=4")' },
  out: { type: 'string', arg: 'FILE', help: 'results file instead of bench/results/peer.json (no chart)' },
  'charts-only': { type: 'boolean', help: 'redraw the chart from bench/results/peer.json, measure nothing' },
});

const resultsDir = new URL('results/', import.meta.url);
const resultsFile = cli.values.out ? new URL(cli.values.out, `file://${process.cwd()}/`) : new URL('peer.json', resultsDir);
const subtitle = (date: string) => `2 cores shared by the fleet, the API server and the controller; churn ${cli.values.churn}/s (sim), ${cli.values['real-churn']}/s (real); ${date.slice(0, 10)}`;

function previous(): { runs: PeerRun[]; date?: string } {
  if (!existsSync(resultsFile)) return { runs: [] };
  try {
    const prev = JSON.parse(readFileSync(resultsFile, 'utf8')) as { runs?: PeerRun[]; date?: string };
    return { runs: Array.isArray(prev.runs) ? prev.runs : [], date: prev.date };
  } catch {
    return { runs: [] };
  }
}

if (cli.values['charts-only']) {
  const prev = previous();
  const chart = writePeerChart(resultsDir, prev.runs, subtitle(prev.date ?? new Date().toISOString()));
  console.log(chart ? `wrote bench/results/${chart}` : 'no pair of runs to compare');
  process.exit(0);
}

const targets = cli.values.targets.split(',').map((t) => {
  if (t !== 'sim' && t !== 'real') cli.fail(`--targets: sim or real, got ${JSON.stringify(t)}`);
  return t as 'sim' | 'real';
});
const only = cli.values['only-controller'];
if (only !== undefined && only !== 'fleet-attach' && only !== 'upstream') cli.fail(`--only-controller: fleet-attach or upstream, got ${JSON.stringify(only)}`);
const upstreamDefaults = cli.values['upstream-defaults'];
if (upstreamDefaults !== 'on' && upstreamDefaults !== 'off') cli.fail(`--upstream-defaults: on or off, got ${JSON.stringify(upstreamDefaults)}`);
const QPS = cli.int('qps');
const words = (s: string) => s.split(/\s+/).filter(Boolean);

/** The runs of one fleet: fleet-attach and upstream at --qps, then upstream at its defaults. */
type Planned = { controller: ControllerName; qps?: number };
const plan: Planned[] = ([
  { controller: 'fleet-attach', qps: QPS },
  { controller: 'upstream', qps: QPS },
  ...(upstreamDefaults === 'on' ? [{ controller: 'upstream' }] : []),
] as Planned[]).filter((p) => only === undefined || p.controller === only);

const fleets = targets.flatMap((target) => (target === 'sim' ? cli.ints('sizes') : cli.ints('real-nodes')).map((nodes) => ({ target, nodes })));
const logDir = join(tmpdir(), 'fa-peer-logs');
mkdirSync(logDir, { recursive: true });
mkdirSync(resultsDir, { recursive: true });

const sameRow = (a: PeerRun, b: PeerRun) => a.target === b.target && a.nodes === b.nodes && a.controller === b.controller && a.qps === b.qps;
const prev = previous();
let runs = prev.runs;

function save(): void {
  const order = (r: PeerRun) => [r.target === 'sim' ? 0 : 1, r.nodes, r.controller === 'fleet-attach' ? 0 : 1, -r.qps];
  runs.sort((a, b) => {
    const x = order(a);
    const y = order(b);
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return 0;
  });
  const date = new Date().toISOString();
  const out = {
    runs,
    // Everything below `runs` describes them; tools read `runs` only.
    bench: 'peer',
    command: cli.command,
    date,
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '', node: process.version, loadavg_at_end: loadavg().map((l) => Math.round(l * 100) / 100) },
    fields: {
      qps: 'client qps and burst of the controller; 20 means upstream at its shipped defaults, 20 qps / 30 burst',
      converge_s: 'cold start (process start) to every volume attached (VolumeAttachment status.attached) and listed in its node status.volumesAttached; null: timed out (see note)',
      cpu_s: 'user + system CPU seconds of the controller process from its start to convergence (/proc/PID/stat)',
      peak_rss_mb: 'VmHWM of the controller process over the whole run (cold start, churn, detach), MiB',
      pod_to_va_p50_ms: `new pod to its VolumeAttachment's creation, under churn (${cli.values.churn} pod changes/s on the simulator, ${cli.values['real-churn']}/s on the real cluster, for ${cli.values['churn-seconds']} s), timed on the fleet's store (the simulator's commits, or on a real cluster the fleet's watch mirror) from the moment the controller can act: the pod seen with its claims Bound and their volumes seen (on the simulator, the pod's commit); a new pod deleted before its VolumeAttachment is not timed, nor a pod rescheduled onto a claim an earlier pod used`,
      detach_all_s: 'every pod deleted at once (gracefully, the simulated kubelets finishing) to no VolumeAttachment left and no volume in any node status',
      api_requests: 'resource requests of the controller over the whole run, by "verb resource[/subresource]" (kube-apiserver verbs: list, watch, get, create, patch, update, delete); the simulator counts them in its request hook, the real kube-apiserver in its audit log (the controller\'s ServiceAccount only); non-resource requests (/healthz, discovery) are not counted',
    },
    ratios_fleet_attach_over_upstream: peerRatios(runs).map((r) => ({ fleet: r.fleet, qps: r.qps, ...Object.fromEntries(PEER_FIGURES.map((f, i) => [f.key, r.ratios[i]])) })),
  };
  writeFileSync(resultsFile, `${JSON.stringify(out, null, 2)}\n`);
  if (cli.values.out) return console.log(`wrote ${cli.values.out}`);
  const chart = writePeerChart(resultsDir, runs, subtitle(date));
  console.log(`wrote bench/results/peer.json${chart ? ` and bench/results/${chart}` : ''}`);
}

const fmt = (v: unknown) => (v === null || v === undefined ? '—' : String(v));
for (const { target, nodes } of fleets) {
  for (const p of plan) {
    const label = `${target} ${nodes} nodes × ${cli.values['pods-per-node']} pods: ${p.controller} at ${p.qps === undefined ? 'its default 20 qps / 30 burst' : `qps ${p.qps}`}`;
    console.log(`\n== ${label} ==`);
    const run = await runPeer({
      target, nodes, podsPerNode: cli.int('pods-per-node'), seed: cli.int('seed'), controller: p.controller, qps: p.qps, burst: p.qps,
      convergeTimeoutS: cli.num('converge-timeout'), churn: cli.num(target === 'sim' ? 'churn' : 'real-churn'), churnS: cli.num('churn-seconds'), settleTimeoutS: cli.num('settle-timeout'), detachTimeoutS: cli.num('detach-timeout'),
      fleetQps: cli.num('fleet-qps'), fleetInFlight: cli.int('fleet-in-flight'),
      extraArgs: words(p.controller === 'fleet-attach' ? cli.values['fleet-attach-args'] : cli.values['kcm-args']), logDir,
    });
    runs = [...runs.filter((r) => !sameRow(r, run)), run];
    save(); // after every run: a later failure keeps what was measured
    console.log(['converge_s', 'cpu_s', 'peak_rss_mb', 'pod_to_va_p50_ms', 'pod_to_va_p99_ms', 'detach_all_s'].map((k) => `${k}=${fmt(run[k as keyof PeerRun])}`).join('  ') + `  api_requests=${fmt(apiTotal(run))}`);
    console.log(`  note: ${run.note}`);
    console.log(`  logs: ${logDir}`);
  }
}
