/**
 * The phases of an end-to-end run before the steady state, and the readings they share: the
 * controller's URL, its summary (tolerating a stuck or dead controller), convergence, the
 * initial-sync ingest figures, the cluster-side check, and API request counts from /metrics.
 */
import type { Child } from './children.js';
import { listeningUrl, type ControllerProbe, type ControllerSummary, type ListedLine } from './controller-probe.js';
import type { NodeStatusCounter } from './node-status-counter.js';
import { phaseBar } from './progress.js';
import { histogramDelta, histogramQuantile, sumOf, type PromSample } from './prom-text.js';
import type { RawKube } from './raw-kube.js';
import { round } from './stats.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const seconds = (fromMs: number, toMs = performance.now()) => (toMs - fromMs) / 1000;

export async function waitForUrl(ctl: Child, timeoutMs: number): Promise<string> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const url = listeningUrl(ctl.output());
    if (url) return url;
    if (ctl.process.exitCode !== null) throw new Error(`controller exited (${ctl.process.exitCode}):\n${ctl.output().slice(-3000)}`);
    if (performance.now() > end) throw new Error(`controller did not listen within ${timeoutMs} ms:\n${ctl.output().slice(-3000)}`);
    await sleep(100);
  }
}

/**
 * The summary. A failed or timed-out request (a controller whose event loop is stuck answers
 * nothing) is retried until `deadline`; a controller that exited, or no answer by the deadline,
 * throws with the controller's log tail.
 */
export async function summaryOf(probe: ControllerProbe, ctl: Child, deadline: number): Promise<ControllerSummary> {
  for (;;) {
    try {
      return await probe.summary();
    } catch (err) {
      const { exitCode, signalCode } = ctl.process;
      if (exitCode !== null || signalCode !== null || performance.now() > deadline) {
        const why = exitCode !== null || signalCode !== null ? `controller exited (code ${exitCode}, signal ${signalCode})` : 'controller not answering its summary by the deadline';
        throw new Error(`${why}: ${err instanceof Error ? err.message : String(err)}\n${ctl.output().slice(-4000)}`);
      }
      await sleep(1000);
    }
  }
}

/**
 * Polls until every desired pair is attached and reported: the controller's summary says so and
 * the Nodes on the API server list every volume in status.volumesAttached. Or the deadline.
 */
export async function converge(probe: ControllerProbe, ctl: Child, nodes: NodeStatusCounter, expected: number, deadline: number): Promise<{ convergedAt?: number; summaryAt?: number; last: ControllerSummary }> {
  const bar = phaseBar('converge', expected, 'pairs');
  let summaryAt: number | undefined;
  let last: ControllerSummary | undefined;
  for (;;) {
    let s: ControllerSummary;
    try {
      s = await summaryOf(probe, ctl, deadline);
    } catch (err) {
      const p = last?.pairs;
      const seen = p ? `last summary: desired ${p.desired}, attached ${p.attached}, reported ${p.reportedAsAttached}, pending ${last!.operations.pending}; in node status ${nodes.total()}` : 'no summary yet';
      throw new Error(`${err instanceof Error ? err.message.split('\n')[0] : String(err)} (${seen})\n${err instanceof Error ? err.message.split('\n').slice(1).join('\n') : ''}`);
    }
    last = s;
    const now = performance.now();
    const synced = s.watches.filter((w) => w.synced).length;
    const p = s.pairs;
    const inStatus = nodes.total();
    bar.update(Math.min(p.attached, inStatus), `watches synced ${synced}/${s.watches.length}  desired ${p.desired}  attached ${p.attached}  in node status ${inStatus}  pending ${s.operations.pending}`);
    if (summaryAt === undefined && p.desired === expected && p.attached === expected && p.reportedAsAttached === expected) summaryAt = now;
    if (summaryAt !== undefined && inStatus === expected) {
      bar.done('converged');
      return { convergedAt: now, summaryAt, last: s };
    }
    if (now > deadline) {
      bar.done('TIMED OUT');
      return { ...(summaryAt !== undefined ? { summaryAt } : {}), last: s };
    }
    if (ctl.process.exitCode !== null) throw new Error(`controller exited (${ctl.process.exitCode}):\n${ctl.output().slice(-3000)}`);
    await sleep(200);
  }
}

/**
 * Initial-sync figures from the reflectors' `listed` lines (first list of each resource):
 * objects per second end to end (over the window in which the seven lists ran concurrently:
 * server, transfer, parse, projection); the controller's own reading rate of pods (pods per
 * second of its main thread's time on the pod pages, comparable to JSON.parse alone on the same
 * pod objects); and the pods list in detail. (The run's "ingest" is the watch burst's,
 * e2e-watch-ingest.ts.)
 */
export function syncFigures(listed: readonly ListedLine[], t0Epoch: number): Record<string, unknown> {
  const first = new Map<string, ListedLine>();
  for (const l of listed) if (!first.has(l.resource)) first.set(l.resource, l);
  const all = [...first.values()];
  if (all.length === 0) return { sync_objects_per_s: null };
  const start = Math.min(...all.map((l) => l.time - l.totalMs));
  const end = Math.max(...all.map((l) => l.time));
  const items = all.reduce((n, l) => n + l.items, 0);
  const pods = first.get('pods');
  return {
    sync_s: round((end - t0Epoch) / 1000),
    sync_objects: items,
    sync_objects_per_s: Math.round(items / ((end - start) / 1000)),
    sync_pod_read_per_s: pods ? Math.round(pods.items / ((pods.parseMs + pods.projectMs) / 1000)) : null,
    pods_list: pods ? {
      items: pods.items, mb: round(pods.bytes / 2 ** 20), total_ms: Math.round(pods.totalMs), fetch_ms: Math.round(pods.fetchMs),
      parse_ms: Math.round(pods.parseMs), project_ms: Math.round(pods.projectMs), off_thread_ms: Math.round(pods.offThreadMs),
      items_per_s: Math.round(pods.items / (pods.totalMs / 1000)),
    } : null,
  };
}

/** Cluster-side check: attached VolumeAttachments and node status entries. */
export async function verifyCluster(kube: RawKube, expected: number): Promise<Record<string, unknown>> {
  const bar = phaseBar('verify', expected * 2, 'objects');
  let attached = 0;
  let vas = 0;
  await kube.listAll('/apis/storage.k8s.io/v1/volumeattachments', (o) => {
    vas++;
    if ((o as { status?: { attached?: boolean } }).status?.attached === true) attached++;
    if (vas % 5000 === 0) bar.update(vas);
  });
  let listedInStatus = 0;
  await kube.listAll('/api/v1/nodes', (o) => {
    listedInStatus += (o as { status?: { volumesAttached?: unknown[] } }).status?.volumesAttached?.length ?? 0;
  });
  const ok = attached === expected && listedInStatus === expected;
  bar.update(expected * 2, ok ? 'ok' : 'MISMATCH');
  bar.done();
  return { ok, volume_attachments: vas, attached, in_node_status: listedInStatus };
}

/** API requests by `verb resource code` (the client's counter). */
export function requestCounts(m: readonly PromSample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of m) {
    if (x.name !== 'fleet_attach_api_requests_total' || x.value === 0) continue;
    const key = `${x.labels.verb} ${x.labels.resource} ${x.labels.code}`;
    out[key] = (out[key] ?? 0) + x.value;
  }
  return out;
}

/** Watch events by `resource type` (the reflectors' counter). */
export function watchEventCounts(m: readonly PromSample[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of m) {
    if (x.name !== 'fleet_attach_watch_events_total' || x.value === 0) continue;
    const key = `${x.labels.resource} ${x.labels.type}`;
    out[key] = (out[key] ?? 0) + x.value;
  }
  return out;
}

/** One verb and resource between two scrapes: calls/s, mean time on the wire, and the wait for a slot before it (mean, p99). */
export interface ApiCallStats {
  per_s: number;
  mean_ms: number | null;
  queue_mean_ms?: number | null;
  queue_p99_ms?: number | null;
}

/** Per verb and resource between two scrapes (see {@link ApiCallStats}). */
export function apiCalls(a: readonly PromSample[], b: readonly PromSample[], span: number): Record<string, ApiCallStats> {
  const name = 'fleet_attach_api_request_duration_seconds';
  const queueName = 'fleet_attach_api_request_queue_seconds';
  const out: Record<string, ApiCallStats> = {};
  const keys = new Set(b.filter((x) => x.name === `${name}_count`).map((x) => `${x.labels.verb} ${x.labels.resource}`));
  for (const key of keys) {
    const [verb, resource] = key.split(' ');
    const d = (suffix: string) => sumOf(b, `${name}_${suffix}`, { verb, resource }) - sumOf(a, `${name}_${suffix}`, { verb, resource });
    const n = d('count');
    if (n <= 0) continue;
    const stats: ApiCallStats = { per_s: round(n / span, 0) ?? 0, mean_ms: round((d('sum') / n) * 1000, 1) };
    const queue = histogramDelta(a, b, queueName, { verb, resource });
    if (queue.count > 0) {
      stats.queue_mean_ms = round((queue.sum / queue.count) * 1000, 1);
      const p99 = histogramQuantile(queue, 0.99);
      stats.queue_p99_ms = p99 ? round(p99.value * 1000, 0) : null;
    }
    out[key] = stats;
  }
  return out;
}
