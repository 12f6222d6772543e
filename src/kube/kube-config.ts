/**
 * Kubeconfig loading and the one keep-alive agent per cluster.
 *
 * client-node 1.4 builds a fresh `https.Agent` for every request (kubernetes-client/javascript
 * issue 2893), which defeats keep-alive and leaks sockets on watch restarts. {@link FleetKubeConfig}
 * keeps client-node in charge of authentication and TLS material, and only swaps the agent in the
 * options client-node produces (`applyToHTTPSOptions`, and therefore `applyToFetchOptions` and the
 * `Watch` class) and in the generated API's request context (`applySecurityAuthentication`) for
 * a cached keep-alive agent. Agents are cached by TLS material, so rotated exec-plugin client
 * certificates get a new agent instead of a stale one.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { KubeConfig, bufferFromFileOrString, type RequestContext } from '@kubernetes/client-node';
import { fleetError, isFleetError } from '../errors/index.js';
import { createH2Connection, type H2Connection } from './h2-session.js';
import { createH1Pool } from './h1-transport.js';
import type { Dispatcher } from 'undici';

type HttpsOptions = Parameters<KubeConfig['applyToHTTPSOptions']>[0];
type Material = string | Buffer | Array<string | Buffer> | boolean | undefined;

const MATERIAL_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

interface Cached<T> {
  material: Material[];
  value: T;
}

/** Sockets kept per agent; watches hold one each for their whole life. */
const MAX_FREE_SOCKETS = 64;
/**
 * Sockets per cluster, watches included (7 long-lived), unless the controller's in-flight bound
 * needs more (see `sizeAgentFor`). Requests beyond it queue in the agent: without a cap, a cold
 * start of 20,000 attaches opens 20,000 TLS connections at once and the API server hangs up on
 * them (measured against the simulator).
 */
const MAX_SOCKETS = 128;
/** Sockets kept beyond the in-flight bound for the watches and the paged lists. */
const SOCKETS_BESIDE_WRITES = 32;
/** How long the hot calls reuse the request options client-node produced (see hotRequestOptions). */
const HOT_OPTIONS_TTL_MS = 1000;

export class FleetKubeConfig extends KubeConfig {
  /**
   * The raw hot calls (raw-write.ts) go over HTTP/2 when the server offers it, as client-go's
   * do (`--kube-api-http2`; client-go's DISABLE_HTTP2 is the same switch).
   */
  http2 = true;
  /** HTTP/2 sessions keep their streams in a StreamTable (h2-stream-table.ts); false only to measure what that saves. */
  h2StreamTable = true;
  /**
   * The agent's socket cap: {@link MAX_SOCKETS}, or more when `inFlight` (the controller's
   * `--kube-api-max-in-flight`) would not fit beside the watches and lists, so that over
   * HTTP/1.1 a request given a slot never waits in the agent with its timeout running.
   */
  sizeAgentFor(inFlight: number): void {
    this.socketCap = Math.max(MAX_SOCKETS, inFlight + SOCKETS_BESIDE_WRITES);
    this.h1Connections = inFlight;
  }
  private socketCap = MAX_SOCKETS;
  /**
   * Connections of the hot calls' HTTP/1.1 pool (h1-transport.ts): the in-flight bound, so that a
   * call given a slot never waits in the pool with its timeout running. undici opens them as
   * calls need them.
   */
  private h1Connections = MAX_SOCKETS - SOCKETS_BESIDE_WRITES;
  private agents: Array<Cached<http.Agent>> = [];
  private hotOptions: { at: number; opts: https.RequestOptions; h2?: H2Connection | null; h1?: Dispatcher | null } | undefined;
  private h2: Array<Cached<H2Connection>> = [];
  private h1: Array<Cached<Dispatcher>> = [];

  /** Same as client-node's, but `opts.agent` is the cached keep-alive agent for this TLS material. */
  override async applyToHTTPSOptions(opts: HttpsOptions): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    const o = opts as Record<string, unknown>;
    // client-node skips the cluster's TLS settings when the context has no user (anonymous access).
    const cluster = this.getCurrentCluster();
    if (cluster && !this.getCurrentUser()) {
      if (cluster.skipTLSVerify) o.rejectUnauthorized = false;
      if (cluster.tlsServerName) o.servername = cluster.tlsServerName;
      o.ca ??= bufferFromFileOrString(cluster.caFile, cluster.caData) ?? undefined;
    }
    o.agent = this.sharedAgent(o, o.agent as http.Agent | undefined);
  }

  /**
   * Replaces client-node's version (which creates an agent per call) by one built on the public
   * `applyToHTTPSOptions`: same headers (bearer token, impersonation, basic auth), same TLS material,
   * cached agent.
   */
  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    const opts: https.RequestOptions = {};
    await this.applyToHTTPSOptions(opts);
    for (const [k, v] of Object.entries(opts.headers ?? {})) {
      if (v !== undefined) context.setHeaderParam(k, Array.isArray(v) ? v.join(', ') : String(v));
    }
    if (typeof opts.auth === 'string') context.setHeaderParam('Authorization', `Basic ${Buffer.from(opts.auth).toString('base64')}`);
    if (opts.agent instanceof http.Agent) context.setAgent(opts.agent);
  }

  /** The server URL of the current cluster. */
  server(): string {
    const cluster = this.getCurrentCluster();
    if (!cluster) throw fleetError('FA_ERR_KUBECONFIG_INVALID', 'no current cluster');
    return cluster.server.replace(/\/+$/, '');
  }

  /**
   * `applyToHTTPSOptions` for the raw hot calls, reused for up to {@link HOT_OPTIONS_TTL_MS}: per
   * call, client-node builds an `https.Agent` (then replaced by the shared one) and walks the
   * kubeconfig, a measurable share of a small call. A rotated token or client certificate is
   * picked up within the TTL. Returns a copy the caller may change (headers included).
   */
  async hotRequestOptions(): Promise<https.RequestOptions> {
    const now = performance.now();
    let c = this.hotOptions;
    if (!c || now - c.at > HOT_OPTIONS_TTL_MS) {
      const opts: https.RequestOptions = {};
      await this.applyToHTTPSOptions(opts);
      this.hotOptions = c = { at: now, opts };
    }
    return { ...c.opts, headers: { ...c.opts.headers } };
  }

  /**
   * `h2Connection` for the options {@link hotRequestOptions} last produced, looked up once per
   * those options rather than per call (the lookup compares the TLS material).
   */
  hotH2Connection(): H2Connection | undefined {
    const c = this.hotOptions;
    if (!c || !this.http2) return undefined;
    if (c.h2 === undefined) c.h2 = this.h2Connection(c.opts) ?? null;
    return c.h2 ?? undefined;
  }

  /**
   * The HTTP/2 connection for the TLS material in `opts` (filled by `applyToHTTPSOptions`), or
   * undefined where HTTP/2 is off or not possible: a plain-HTTP server or a proxy.
   */
  h2Connection(opts: HttpsOptions): H2Connection | undefined {
    const cluster = this.getCurrentCluster();
    if (!this.http2 || !cluster || cluster.proxyUrl || !cluster.server.startsWith('https:')) return undefined;
    return cachedFor(this.h2, opts, (tls) => createH2Connection({ authority: this.server(), tls, streamTable: this.h2StreamTable }));
  }

  /**
   * The HTTP/1.1 pool of the hot calls for the options {@link hotRequestOptions} last produced
   * (one per TLS material), or undefined behind a proxy, where they take the shared agent.
   */
  hotH1Pool(): Dispatcher | undefined {
    const c = this.hotOptions;
    if (!c) return undefined;
    if (c.h1 === undefined) c.h1 = this.h1Pool(c.opts) ?? null;
    return c.h1 ?? undefined;
  }

  private h1Pool(opts: HttpsOptions): Dispatcher | undefined {
    const cluster = this.getCurrentCluster();
    if (!cluster || cluster.proxyUrl) return undefined;
    return cachedFor(this.h1, opts, (tls) => createH1Pool(new URL(this.server()).origin, tls, this.h1Connections));
  }

  /** Closes every cached agent's sockets, HTTP/2 connection and HTTP/1.1 pool (in-flight requests and watches are cut). Idempotent. */
  close(): void {
    this.hotOptions = undefined;
    for (const c of this.agents) c.value.destroy();
    for (const c of this.h2) c.value.close();
    for (const c of this.h1) void c.value.destroy().catch(() => undefined);
    this.agents = [];
    this.h2 = [];
    this.h1 = [];
  }

  private sharedAgent(o: Record<string, unknown>, produced: http.Agent | undefined): http.Agent | undefined {
    const material = MATERIAL_KEYS.map((k) => o[k] as Material);
    const hit = findCached(this.agents, material);
    if (hit) return hit;
    const cluster = this.getCurrentCluster();
    let agent: http.Agent | undefined;
    if (cluster?.proxyUrl) {
      // Proxy agents come from client-node's own choice of library; reuse the first one built.
      agent = produced;
    } else if (cluster?.server.startsWith('http:')) {
      agent = new http.Agent({ keepAlive: true, maxSockets: this.socketCap, maxFreeSockets: MAX_FREE_SOCKETS, scheduling: 'lifo' });
    } else {
      const tls: https.AgentOptions = { keepAlive: true, maxSockets: this.socketCap, maxFreeSockets: MAX_FREE_SOCKETS, scheduling: 'lifo' };
      for (const k of MATERIAL_KEYS) if (o[k] !== undefined) (tls as Record<string, unknown>)[k] = o[k];
      agent = new https.Agent(tls);
    }
    if (agent) this.agents.push({ material, value: agent });
    return agent;
  }
}

/** The entry of `cache` for the TLS material in `opts`; on a miss, `build` makes it from that material. */
function cachedFor<T>(cache: Array<Cached<T>>, opts: HttpsOptions, build: (tls: Record<string, unknown>) => T): T {
  const o = opts as Record<string, unknown>;
  const material = MATERIAL_KEYS.map((k) => o[k] as Material);
  const hit = findCached(cache, material);
  if (hit) return hit;
  const tls: Record<string, unknown> = {};
  for (const k of MATERIAL_KEYS) if (o[k] !== undefined) tls[k] = o[k];
  const value = build(tls);
  cache.push({ material, value });
  return value;
}

function findCached<T>(cache: ReadonlyArray<Cached<T>>, material: readonly Material[]): T | undefined {
  return cache.find((c) => c.material.every((m, i) => sameMaterial(m, material[i])))?.value;
}

function sameMaterial(a: Material, b: Material): boolean {
  if (a === b) return true;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameMaterial(x, b[i]));
  return false;
}

export interface LoadKubeConfigOptions {
  /** `--kubeconfig`: a file path. Takes precedence over everything else. */
  path?: string;
  /** A kubeconfig document (YAML or JSON), e.g. the simulator's. Used when `path` is unset. */
  yaml?: string;
  /** Environment to read `KUBECONFIG` and the in-cluster variables from (default process.env). */
  env?: NodeJS.ProcessEnv;
}

const SA_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * Loads a kubeconfig from, in order: `path`, `yaml`, `$KUBECONFIG` (colon-separated files merged
 * like kubectl), or the in-cluster service account. Never falls back to a guessed server.
 * Every failure is `FA_ERR_KUBECONFIG_INVALID` naming what is wrong (the CLI exits 2 on it).
 */
export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): FleetKubeConfig {
  const env = opts.env ?? process.env;
  const kc = new FleetKubeConfig();
  let source: string;
  try {
    if (opts.path !== undefined) {
      source = `kubeconfig ${opts.path}`;
      if (!fs.existsSync(opts.path)) throw new Error('file not found');
      kc.loadFromFile(opts.path);
    } else if (opts.yaml !== undefined) {
      source = 'kubeconfig document';
      kc.loadFromString(opts.yaml);
    } else if (env.KUBECONFIG) {
      source = `KUBECONFIG=${env.KUBECONFIG}`;
      const files = env.KUBECONFIG.split(':').filter((f) => f.length > 0);
      const missing = files.filter((f) => !fs.existsSync(f));
      if (missing.length === files.length) throw new Error(`no such file: ${missing.join(', ')}`);
      mergeKubeconfigFiles(kc, files.filter((f) => !missing.includes(f)));
    } else if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
      source = 'in-cluster service account';
      if (!fs.existsSync(SA_TOKEN)) throw new Error(`${SA_TOKEN} not found`);
      kc.loadFromCluster();
    } else {
      throw fleetError('FA_ERR_KUBECONFIG_INVALID', 'no kubeconfig: pass --kubeconfig, set KUBECONFIG, or run in a cluster');
    }
  } catch (err) {
    if (isFleetError(err)) throw err;
    throw fleetError('FA_ERR_KUBECONFIG_INVALID', `${sourceOf(opts, env)}: ${(err as Error).message}`, { cause: err });
  }
  validate(kc, source);
  return kc;
}

/**
 * kubectl's merge of `$KUBECONFIG` files: the first file to define a cluster, user or context
 * name wins, and the current-context is the first one set (client-node's mergeConfig refuses a
 * name defined twice, which kubectl accepts).
 */
function mergeKubeconfigFiles(kc: KubeConfig, files: readonly string[]): void {
  const clusters = new Map<string, KubeConfig['clusters'][number]>();
  const users = new Map<string, KubeConfig['users'][number]>();
  const contexts = new Map<string, KubeConfig['contexts'][number]>();
  let currentContext = '';
  for (const f of files) {
    const one = new KubeConfig();
    one.loadFromFile(f);
    for (const c of one.clusters) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of one.users) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of one.contexts) if (!contexts.has(c.name)) contexts.set(c.name, c);
    currentContext ||= one.currentContext ?? '';
  }
  kc.loadFromOptions({ clusters: [...clusters.values()], users: [...users.values()], contexts: [...contexts.values()], currentContext });
}

function sourceOf(opts: LoadKubeConfigOptions, env: NodeJS.ProcessEnv): string {
  if (opts.path !== undefined) return `kubeconfig ${opts.path}`;
  if (opts.yaml !== undefined) return 'kubeconfig document';
  if (env.KUBECONFIG) return `KUBECONFIG=${env.KUBECONFIG}`;
  return 'in-cluster service account';
}

function validate(kc: FleetKubeConfig, source: string): void {
  const bad = (what: string) => fleetError('FA_ERR_KUBECONFIG_INVALID', `${source}: ${what}`);
  const ctxName = kc.getCurrentContext();
  if (!ctxName) throw bad('no current-context');
  const ctx = kc.getContextObject(ctxName);
  if (!ctx) throw bad(`current-context "${ctxName}" is not defined`);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw bad(`context "${ctxName}" names cluster "${ctx.cluster}", which is not defined`);
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    throw bad(`cluster "${cluster.name}" has an invalid server URL "${cluster.server}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw bad(`cluster "${cluster.name}" server must be http(s), got ${url.protocol}`);
  if (url.protocol === 'http:' && !cluster.skipTLSVerify && !cluster.proxyUrl) {
    throw bad(`cluster "${cluster.name}" uses http:// without insecure-skip-tls-verify (client-node refuses it)`);
  }
  if (ctx.user && !kc.getCurrentUser()) throw bad(`context "${ctxName}" names user "${ctx.user}", which is not defined`);
}
