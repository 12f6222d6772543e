/**
 * Starts the whole simulator in-process: store, fleet (actors, then the generated
 * population), HTTPS API server, kubeconfig. Tests, benches and the demo command use this;
 * `fleet-attach sim` is a flag parser around it. Ready means: listening, and the kubeconfig
 * (if asked for) written. `stop()` ends actors, watches, connections and timers.
 *
 * With `faultInjection` the API server listens on a loopback port behind the fault front
 * (src/sim/faults), which owns the public address, the TLS and the admin endpoint
 * `/fleet-attach/faults`; the actors consult the same injector.
 */
import { logger } from '../../log/logger.js';
import { populateFleet, startFleetActors, type FleetActorOptions, type FleetActors, type FleetPopulation } from '../actors/index.js';
import { createFaultFront, createFaultInjector, type FaultFront, type FaultInjector } from '../faults/index.js';
import { createSimStore, type ServableStore } from '../store/index.js';
import { createApiServer, type ApiServer } from './api-server.js';
import { DEFAULT_USER, randomToken, type SimUser } from './auth.js';
import { createClientFaults, type ClientFaults } from './client-faults.js';
import { createWriteLog, type WriteLog } from './write-log.js';
import type { FaultHooks } from './faults.js';
import { buildKubeconfig, writeFileAtomic } from './kubeconfig.js';
import { generateTls, loadTls, type TlsMaterial } from './tls.js';

export interface SimulatorOptions {
  /** Host to listen on (default 127.0.0.1). */
  host?: string;
  /** Port (default 0: a free port). */
  port?: number;
  /** Bearer token (default random). */
  token?: string;
  /** Serving certificate and key files; default a generated CA and certificate. */
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** Plain HTTP, for debugging (kubectl then sends no token; client-node needs skipTLSVerify). */
  insecureHttp?: boolean;
  /** Write a kubeconfig here once listening. */
  kubeconfigOut?: string;
  /** Events kept for watches to resume from (default 100,000). */
  watchWindow?: number;
  /** An existing store to serve instead of a new one. */
  store?: ServableStore;
  /**
   * The simulated fleet: generator and actors (see FleetActorOptions). Undefined runs no
   * actors and generates nothing: an empty cluster.
   */
  fleet?: Partial<FleetActorOptions>;
  /** Called during population with nodes done so far. */
  onProgress?: (nodesDone: number, nodesTotal: number) => void;
  bookmarkIntervalMs?: number;
  maxWatchBacklogBytes?: number;
  faults?: FaultHooks;
  /**
   * Fault injection: a `--faults` spec (src/sim/faults/fault-spec.ts) or an injector the caller
   * keeps to change the spec and read the counters at run time. `'none'` still puts the front
   * in place, so that faults can be switched on later.
   */
  faultInjection?: string | FaultInjector;
  /** Seed of a spec-built injector (default: the fleet's seed, else 1). */
  faultSeed?: number;
  /**
   * Further users, each with its own bearer token: several clients (controller replicas) the
   * write log and the client faults tell apart. The simulator's own token and client
   * certificate act as `fleet-attach`.
   */
  users?: readonly SimUser[];
  /**
   * Keep a committed-write log (write-log.ts), readable as `Simulator.writeLog` and on
   * `/debug/write-log`. Off by default; `true` keeps the last 1,000,000 writes.
   */
  writeLog?: boolean | { capacity?: number; nameBytesPerRecord?: number };
}

export interface Simulator {
  /** `https://127.0.0.1:PORT` (or http with insecureHttp). */
  url: string;
  host: string;
  port: number;
  token: string;
  /** CA certificate (PEM) clients verify the server with; undefined for plain HTTP. */
  caPem: string | undefined;
  /** Kubeconfig YAML for this server (for KubeConfig.loadFromString). */
  kubeconfig: string;
  /** Where the kubeconfig was written, if asked. */
  kubeconfigPath: string | undefined;
  store: ServableStore;
  server: ApiServer;
  actors: FleetActors | undefined;
  population: FleetPopulation | undefined;
  /** The fault injector when `faultInjection` was given. */
  faults: FaultInjector | undefined;
  /** The committed-write log, when `writeLog` was asked for. */
  writeLog: WriteLog | undefined;
  /** Per-client faults (delay, deny, black hole by user or User-Agent), also on `/debug/faults`. */
  clientFaults: ClientFaults;
  /** A kubeconfig acting as one of `users` (by bearer token), or as `fleet-attach`. */
  kubeconfigFor(user: string): string;
  stop(): Promise<void>;
}

const log = logger('sim');

export async function startSimulator(opts: SimulatorOptions = {}): Promise<Simulator> {
  const host = opts.host ?? '127.0.0.1';
  const token = opts.token ?? randomToken();
  let tls: TlsMaterial | undefined;
  if (!opts.insecureHttp) {
    if (opts.tlsCertFile || opts.tlsKeyFile) {
      if (!opts.tlsCertFile || !opts.tlsKeyFile) throw new TypeError('tlsCertFile and tlsKeyFile must be given together');
      tls = await loadTls(opts.tlsCertFile, opts.tlsKeyFile);
    } else {
      tls = await generateTls(['127.0.0.1', 'localhost', ...(host === '127.0.0.1' || host === 'localhost' ? [] : [host])]);
    }
  }
  const store = opts.store ?? createSimStore({ watchWindow: opts.watchWindow });
  const faults = typeof opts.faultInjection === 'string'
    ? createFaultInjector({ spec: opts.faultInjection, seed: opts.faultSeed ?? opts.fleet?.seed ?? 1 })
    : opts.faultInjection;
  // Before the actors and the population: the log holds every commit from here on.
  const writeLog = opts.writeLog ? createWriteLog({ store, ...(typeof opts.writeLog === 'object' ? opts.writeLog : {}) }) : undefined;
  const clientFaults = createClientFaults();
  let actors: FleetActors | undefined;
  let population: FleetPopulation | undefined;
  if (opts.fleet) {
    // Actors first: they then follow the population as it is created instead of listing it.
    actors = startFleetActors(store, opts.fleet, faults);
    population = await populateFleet(store, opts.fleet, { onProgress: opts.onProgress });
  }
  // Behind the front, the API server speaks plain HTTP on loopback; the front owns TLS.
  const server = createApiServer({ store, token, tls: faults ? undefined : tls, bookmarkIntervalMs: opts.bookmarkIntervalMs, maxWatchBacklogBytes: opts.maxWatchBacklogBytes, faults: opts.faults, users: opts.users, writeLog, clientFaults });
  let front: FaultFront | undefined;
  let port: number;
  try {
    if (faults) {
      const backendPort = await server.listen('127.0.0.1', 0);
      front = createFaultFront({ backend: { host: '127.0.0.1', port: backendPort }, tls, token, injector: faults });
      port = await front.listen(host, opts.port ?? 0);
    } else {
      port = await server.listen(host, opts.port ?? 0);
    }
  } catch (err) {
    await actors?.stop();
    await front?.close();
    await server.close();
    writeLog?.close();
    throw err;
  }
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const url = `${tls ? 'https' : 'http'}://${urlHost}:${port}`;
  const kubeconfig = buildKubeconfig({ url, token, caPem: tls?.ca, ...(tls?.client ? { client: tls.client } : {}) });
  if (opts.kubeconfigOut) await writeFileAtomic(opts.kubeconfigOut, kubeconfig);
  log.info({ url, kubeconfig: opts.kubeconfigOut }, `listening on ${url}`);
  let stopped: Promise<void> | undefined;
  return {
    url,
    host,
    port,
    token,
    caPem: tls?.ca,
    kubeconfig,
    kubeconfigPath: opts.kubeconfigOut,
    store,
    server,
    actors,
    population,
    faults,
    writeLog,
    clientFaults,
    kubeconfigFor(user) {
      if (user === DEFAULT_USER) return kubeconfig;
      const u = opts.users?.find((x) => x.name === user);
      if (!u) throw new TypeError(`the simulator has no user "${user}" (SimulatorOptions.users)`);
      return buildKubeconfig({ url, token: u.token, caPem: tls?.ca, name: `fleet-attach-sim-${user}` });
    },
    stop() {
      stopped ??= (async () => {
        await actors?.stop();
        await front?.close();
        await server.close();
        writeLog?.close();
      })();
      return stopped;
    },
  };
}
