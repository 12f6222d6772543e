/** Shared helpers of the API server tests: an in-process simulator, raw HTTPS requests, condition waits. */
import https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/sim/server/index.js';

/** Runs `fn` against a fresh simulator on a free loopback port, stopping it afterwards. */
export async function withSim<T>(opts: SimulatorOptions, fn: (sim: Simulator, kc: k8s.KubeConfig) => Promise<T>): Promise<T> {
  const sim = await startSimulator({ host: '127.0.0.1', port: 0, ...opts });
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(sim.kubeconfig);
    return await fn(sim, kc);
  } finally {
    await sim.stop();
  }
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): Record<string, unknown>;
}

/** One HTTPS request verifying the simulator's CA; `token: null` sends no Authorization header. */
export function raw(sim: Simulator, method: string, path: string, opts: { body?: string; contentType?: string; token?: string | null } = {}): Promise<RawResponse> {
  const url = new URL(path, sim.url);
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? sim.token : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (opts.body !== undefined) {
    headers['content-type'] = opts.contentType ?? 'application/json';
    headers['content-length'] = String(Buffer.byteLength(opts.body));
  }
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, ca: sim.caPem, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) as Record<string, unknown> });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Polls `cond` until it returns a truthy value; fails naming `what` after `timeoutMs`. */
export async function until<T>(what: string, cond: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface WatchedEvent {
  type: string;
  name: string;
  rv: number;
  obj: Record<string, unknown>;
}

/** A raw client-node watch collecting events; `stop()` aborts it. */
export async function collectWatch(kc: k8s.KubeConfig, path: string, query: Record<string, string | number | boolean | undefined>) {
  const events: WatchedEvent[] = [];
  let ended: unknown = undefined;
  let done = false;
  const ctl = await new k8s.Watch(kc).watch(
    path,
    query,
    (type: string, obj: { metadata?: { name?: string; resourceVersion?: string } }) => {
      events.push({ type, name: obj?.metadata?.name ?? '', rv: Number(obj?.metadata?.resourceVersion ?? 0), obj: obj as Record<string, unknown> });
    },
    (err: unknown) => {
      done = true;
      ended = err;
    },
  );
  return {
    events,
    isDone: () => done,
    endError: () => ended,
    stop: () => ctl.abort(),
  };
}

export const pod = (name: string, ns = 'default', extra: { labels?: Record<string, string>; nodeName?: string; phase?: string } = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns, ...(extra.labels ? { labels: extra.labels } : {}) },
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...(extra.nodeName ? { nodeName: extra.nodeName } : {}) },
  ...(extra.phase ? { status: { phase: extra.phase } } : {}),
});
