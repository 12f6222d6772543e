/**
 * `fleet-attach sim`: the simulated fleet as a process. Generates the fleet, starts the actors
 * and serves the Kubernetes API on --listen until SIGINT/SIGTERM. With --kubeconfig-out the
 * kubeconfig appears (atomically) once the server is listening and the fleet generated, so a
 * script can wait for the file.
 *
 * `fleet-attach sim --actors-only --kubeconfig F`: no server; the actors and the generator run
 * over the API against the cluster of F (src/sim/remote), e.g. a kube-apiserver with no kubelets
 * and no CSI attacher. The fleet flags mean the same; the server's flags are refused.
 *
 * `--users a=TOKEN_A,b=TOKEN_B` adds users (controller replicas the write log and the client
 * faults tell apart: `/debug/faults`); `--write-log N` keeps the last N committed writes with
 * their users on `/debug/write-log`.
 */
import { fleetError } from '../errors/index.js';
import { flagHelp, parseFlags, type FlagSpecs, type ParsedFlags } from '../cli/flags.js';
import { logger } from '../log/logger.js';
import { DEFAULT_FLEET_ACTOR_OPTIONS as D, type FleetActorOptions } from './actors/index.js';
import { FAULTS_ADMIN_PATH, parseFaultSpec } from './faults/index.js';
import { DEFAULT_NODE_SELECTOR, startRemoteFleet } from './remote/index.js';
import { DEFAULT_USER, startSimulator, type SimUser } from './server/index.js';

const onOff = ['on', 'off'] as const;
/** Records --write-log may ask for (some 3.5 GB). */
const MAX_WRITE_LOG = 50_000_000;

export const SIM_FLAGS = {
  listen: { kind: 'string', default: '127.0.0.1:6443', help: 'host:port to serve on (":0" or port 0 picks a free port; an empty host means 127.0.0.1)' },
  token: { kind: 'string', default: '', help: 'bearer token clients may send instead of the kubeconfig\'s client certificate (default: random)' },
  'tls-cert-file': { kind: 'string', default: '', help: 'serving certificate (PEM); default: a CA and certificate generated at start' },
  'tls-private-key-file': { kind: 'string', default: '', help: 'serving key (PEM), with --tls-cert-file' },
  'insecure-http': { kind: 'bool', default: false, help: 'serve plain HTTP (debugging only)' },
  'kubeconfig-out': { kind: 'string', default: '', help: 'write a kubeconfig for this server here once it is listening' },
  'watch-window': { kind: 'int', default: 100_000, min: 1, max: 100_000_000, help: 'committed events kept per resource for watches to resume from; older resourceVersions get 410 Gone' },
  seed: { kind: 'int', default: D.seed, min: 0, max: 0xffffffff, help: 'seed of every random draw' },
  nodes: { kind: 'int', default: D.nodes, min: 0, max: 10_000_000, help: 'Ready nodes to generate (0: an empty cluster)' },
  'pods-per-node': { kind: 'int', default: D.podsPerNode, min: 0, max: 1000, help: 'pods per node, each with a bound PVC/PV' },
  'rwx-fraction': { kind: 'float', default: D.rwxFraction, min: 0, max: 1, help: 'fraction of volumes that are ReadWriteMany' },
  driver: { kind: 'string', default: D.driver, help: 'CSI driver name of the generated volumes and of the attacher' },
  attacher: { kind: 'enum', values: onOff, default: D.attacher ? 'on' : 'off', help: 'run the CSI external-attacher' },
  'attach-latency': { kind: 'duration', default: D.attachLatencyMs, min: 0, help: 'time from VolumeAttachment to status.attached' },
  'detach-latency': { kind: 'duration', default: D.detachLatencyMs, min: 0, help: 'time from VolumeAttachment deletion to finalizer removal' },
  'attach-failure-rate': { kind: 'float', default: D.attachFailureRate, min: 0, max: 1, help: 'probability that an attach attempt fails (status.attachError, retried)' },
  kubelet: { kind: 'enum', values: onOff, default: D.kubelet ? 'on' : 'off', help: 'run the kubelets (volumesInUse, pod termination, node leases)' },
  'mount-latency': { kind: 'duration', default: D.mountLatencyMs, min: 0, help: 'time from volumesAttached to volumesInUse' },
  'unmount-latency': { kind: 'duration', default: D.unmountLatencyMs, min: 0, help: 'time from pod termination to removal from volumesInUse' },
  churn: { kind: 'float', default: D.churn, min: 0, max: 1_000_000, help: 'pod changes per second (delete, create, reschedule)' },
  'node-failure-rate': { kind: 'float', default: D.nodeFailureRate, min: 0, max: 1_000_000, help: 'node failures per second across the fleet' },
  'node-recovery': { kind: 'duration', default: D.nodeRecoveryMs, min: 0, help: 'how long a failed node stays NotReady' },
  'out-of-service-fraction': { kind: 'float', default: D.outOfServiceFraction, min: 0, max: 1, help: 'fraction of failed nodes tainted node.kubernetes.io/out-of-service' },
  'lease-renew-interval': { kind: 'duration', default: D.leaseRenewMs, min: 100, help: 'period of each node Lease renewal' },
  faults: { kind: 'string', default: '', help: `fault injection spec, e.g. "drop-watch=30s,error500=0.02,error429=0.02:retry-after=1,latency=5ms..50ms,flap=0.5" (see src/sim/faults/fault-spec.ts); "none" starts with none but serves ${FAULTS_ADMIN_PATH} to switch them on` },
  users: { kind: 'string', default: '', help: `further users as NAME=TOKEN,NAME=TOKEN: a request with "Authorization: Bearer TOKEN" acts as NAME (replicas that /debug/write-log and /debug/faults tell apart; the kubeconfig and --token act as "${DEFAULT_USER}")` },
  'write-log': { kind: 'int', default: 0, min: 0, max: MAX_WRITE_LOG, help: 'keep the last N committed writes with their users, served on /debug/write-log (0: no write log; some 70 bytes per record)' },
  'fault-seed': { kind: 'int', default: -1, min: -1, max: 0xffffffff, help: 'seed of the fault draws (default: --seed)' },
  'actors-only': { kind: 'bool', default: false, help: 'serve nothing: create the fleet (--nodes 0: none) and run the actors over the API of the cluster of --kubeconfig (e.g. a kube-apiserver with no kubelets and no CSI attacher)' },
  kubeconfig: { kind: 'string', default: '', help: 'with --actors-only: kubeconfig of the cluster to drive' },
  'node-selector': { kind: 'string', default: DEFAULT_NODE_SELECTOR, help: 'with --actors-only: label selector of the nodes the kubelet actors play (\'\': every node)' },
  'kube-api-qps': { kind: 'float', default: 200, min: 0, max: 1_000_000, help: 'with --actors-only: API calls per second (0: unlimited)' },
  'kube-api-burst': { kind: 'int', default: 400, min: 1, max: 1_000_000, help: 'with --actors-only: API calls allowed at once above the rate' },
  'kube-api-max-in-flight': { kind: 'int', default: 32, min: 1, max: 4096, help: 'with --actors-only: objects written at once (one call each)' },
} as const satisfies FlagSpecs;

/** The flags of the API server, which `--actors-only` does not start. */
const SERVER_FLAGS = ['listen', 'token', 'tls-cert-file', 'tls-private-key-file', 'insecure-http', 'kubeconfig-out', 'watch-window', 'faults', 'fault-seed', 'users', 'write-log'] as const;

const USAGE = `usage: fleet-attach sim [flags]
       fleet-attach sim --actors-only --kubeconfig FILE [fleet flags]   (the actors over the API of an existing cluster)`;

/**
 * Parses `--users`: `NAME=TOKEN` items separated by commas. Names and tokens are unique, and no
 * user takes the simulator's own name or `--token`. Errors name the flag and the item's user,
 * never a token.
 */
export function parseUsers(raw: string, ownToken = ''): SimUser[] {
  if (raw.trim() === '') return [];
  const bad = (why: string) => fleetError('FA_ERR_FLAG_INVALID', `invalid value for flag --users: ${why}`);
  const users: SimUser[] = [];
  raw.split(',').forEach((item, i) => {
    const eq = item.indexOf('=');
    const name = eq < 0 ? item.trim() : item.slice(0, eq).trim();
    const token = eq < 0 ? '' : item.slice(eq + 1).trim();
    if (name === '' || token === '') throw bad(`item ${i + 1} must be NAME=TOKEN with both non-empty`);
    if (/\s/.test(token)) throw bad(`the token of user "${name}" contains white space`);
    if (name === DEFAULT_USER) throw bad(`"${DEFAULT_USER}" is the simulator's own user (the kubeconfig and --token)`);
    if (users.some((u) => u.name === name)) throw bad(`user "${name}" is given twice`);
    if (users.some((u) => u.token === token) || token === ownToken) throw bad(`the token of user "${name}" is another user's`);
    users.push({ name, token });
  });
  return users;
}

/** Splits `host:port`, `[v6]:port` or `:port`; an empty host is loopback. */
export function parseListen(raw: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(raw);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw fleetError('FA_ERR_FLAG_INVALID', `invalid value "${raw}" for flag --listen: must be host:port, e.g. 127.0.0.1:6443 or :0`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

export async function simCommand(argv: string[]): Promise<number> {
  const { flags: f, positional, help } = parseFlags(SIM_FLAGS, argv);
  if (help) {
    console.log(`${USAGE}\n\nflags:\n${flagHelp(SIM_FLAGS)}`);
    return 0;
  }
  if (positional.length > 0) throw fleetError('FA_ERR_FLAG_INVALID', `unexpected argument: ${positional[0]}`);
  if (f['actors-only'] && !f.kubeconfig) throw fleetError('FA_ERR_FLAG_INVALID', 'flag --actors-only needs --kubeconfig (the cluster the actors drive)');
  if (!f['actors-only'] && f.kubeconfig) throw fleetError('FA_ERR_FLAG_INVALID', 'flag --kubeconfig is for --actors-only (the simulator serves its own cluster; see --kubeconfig-out)');
  if (!f['actors-only'] && f['node-selector'] !== DEFAULT_NODE_SELECTOR) throw fleetError('FA_ERR_FLAG_INVALID', 'flag --node-selector is for --actors-only');
  if (f['actors-only']) {
    const server = SERVER_FLAGS.filter((n) => f[n] !== SIM_FLAGS[n].default);
    if (server.length > 0) throw fleetError('FA_ERR_FLAG_INVALID', `flag --${server[0]} is not used with --actors-only (no API server is started)`);
  }
  if (Boolean(f['tls-cert-file']) !== Boolean(f['tls-private-key-file'])) {
    throw fleetError('FA_ERR_FLAG_INVALID', 'flags --tls-cert-file and --tls-private-key-file must be given together');
  }
  const { host, port } = parseListen(f.listen);
  // Validated before the fleet is generated, so a typo exits at once (FA_ERR_FLAG_INVALID, exit 2).
  if (f.faults) parseFaultSpec(f.faults);
  const users = parseUsers(f.users, f.token);
  const fleet: Partial<FleetActorOptions> = {
    seed: f.seed,
    nodes: f.nodes,
    podsPerNode: f['pods-per-node'],
    rwxFraction: f['rwx-fraction'],
    driver: f.driver,
    attacher: f.attacher === 'on',
    attachLatencyMs: f['attach-latency'],
    detachLatencyMs: f['detach-latency'],
    attachFailureRate: f['attach-failure-rate'],
    kubelet: f.kubelet === 'on',
    mountLatencyMs: f['mount-latency'],
    unmountLatencyMs: f['unmount-latency'],
    churn: f.churn,
    nodeFailureRate: f['node-failure-rate'],
    nodeRecoveryMs: f['node-recovery'],
    outOfServiceFraction: f['out-of-service-fraction'],
    leaseRenewMs: f['lease-renew-interval'],
  };
  const log = logger('sim');
  let lastProgress = 0;
  const onProgress = (done: number, total: number) => {
    if (done < total && Date.now() - lastProgress < 2000) return;
    lastProgress = Date.now();
    log.info({ nodes: done, total }, 'generating fleet');
  };
  if (f['actors-only']) return actorsOnly(f, fleet, onProgress);
  const sim = await startSimulator({
    host,
    port,
    token: f.token || undefined,
    tlsCertFile: f['tls-cert-file'] || undefined,
    tlsKeyFile: f['tls-private-key-file'] || undefined,
    insecureHttp: f['insecure-http'],
    kubeconfigOut: f['kubeconfig-out'] || undefined,
    watchWindow: f['watch-window'],
    ...(users.length > 0 ? { users } : {}),
    ...(f['write-log'] > 0 ? { writeLog: { capacity: f['write-log'] } } : {}),
    fleet,
    ...(f.faults ? { faultInjection: f.faults, faultSeed: f['fault-seed'] >= 0 ? f['fault-seed'] : f.seed } : {}),
    onProgress,
  });
  if (sim.population) log.info({ ...sim.population }, 'fleet generated');
  if (users.length > 0 || sim.writeLog) log.info({ users: users.map((u) => u.name), writeLog: f['write-log'] }, 'debug paths: /debug/faults (per-client faults), /debug/write-log');
  if (sim.faults) log.info({ admin: `${sim.url}${FAULTS_ADMIN_PATH}` }, `fault injection on; read it with \`kubectl get --raw ${FAULTS_ADMIN_PATH}\`, change it with \`kubectl create --raw ${FAULTS_ADMIN_PATH} -f SPEC_FILE\` (the kubeconfig's client certificate or the --token)`);
  await untilSignal();
  log.info('stopping');
  await sim.stop();
  return 0;
}

/** Period of the actors-only progress line (actor and API counters). */
const STATS_EVERY_MS = 60_000;

/** `--actors-only`: the remote fleet until SIGINT/SIGTERM. */
async function actorsOnly(f: ParsedFlags<typeof SIM_FLAGS>, fleet: Partial<FleetActorOptions>, onProgress: (done: number, total: number) => void): Promise<number> {
  const log = logger('sim');
  const remote = await startRemoteFleet({
    kubeconfig: { path: f.kubeconfig },
    fleet,
    qps: f['kube-api-qps'],
    burst: f['kube-api-burst'],
    maxInFlight: f['kube-api-max-in-flight'],
    nodeSelector: f['node-selector'],
    onProgress,
  });
  log.info({ objects: remote.store.stats().objects, ...remote.population }, 'actors running against the cluster');
  const timer = setInterval(() => log.info(remote.stats(), 'actors'), STATS_EVERY_MS);
  timer.unref();
  await untilSignal();
  clearInterval(timer);
  log.info('stopping');
  await remote.stop();
  return 0;
}

function untilSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => resolve();
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
