/**
 * The fleet process of the peer bench (bench/peer.bench.ts): the same generated fleet (seed,
 * nodes × pods, attacher and kubelets, no churn) either
 *   - `sim`:    served by the embedded simulator (startSimulator), every resource request an
 *               outside client makes counted by verb and resource through the API server's
 *               request hook (FaultHooks.beforeRequest, which injects nothing here); or
 *   - `remote`: created and played over the API of a real kube-apiserver (startRemoteFleet,
 *               what `fleet-attach sim --actors-only` runs).
 * Either way the state the bench waits on is read from this process's store (the simulator's
 * own, or the remote store's list+watch mirror), so the bench itself sends the API server
 * nothing a controller's count would include: every desired volume attached and reported
 * (Σ node status.volumesAttached), VolumeAttachments left, pods left. New-pod-to-VolumeAttachment
 * latency is timed on the same store's changes (PodVaLatency).
 *
 * Run by fork() with an IPC channel; config in FA_PEER_FLEET (JSON). Messages:
 *   parent → child  { type: 'state' } | { type: 'counts', reset } | { type: 'churn', rate }
 *                   | { type: 'churn-stop' } | { type: 'delete-pods' } | { type: 'pod-va', op }
 *   child → parent  { type: 'progress', done, total } | { type: 'ready', … } | the answer of the
 *                   same type to each command.
 * The child exits when the parent goes away (IPC disconnect), on SIGTERM/SIGINT, or on error.
 */
import { startSimulator } from '../../src/sim/server/index.js';
import { startRemoteFleet } from '../../src/sim/remote/index.js';
import type { FleetActors } from '../../src/sim/actors/index.js';
import type { SimStore, StoreEvent } from '../../src/sim/store/sim-store.js';
import type { RequestFacts } from '../../src/sim/server/faults.js';
import { PodVaLatency, podFacts, pvFacts, type PodVaResult } from './pod-va-latency.js';

export interface PeerFleetConfig {
  mode: 'sim' | 'remote';
  nodes: number;
  podsPerNode: number;
  seed: number;
  /** sim: where to write the simulator's kubeconfig. */
  kubeconfigOut?: string;
  /** remote: the cluster's (admin) kubeconfig. */
  kubeconfig?: string;
  /** remote: the fleet's own client limits (0: unlimited). */
  qps?: number;
  maxInFlight?: number;
}

export interface PeerFleetState {
  /** Σ over nodes of status.volumesAttached entries. */
  nodeStatus: number;
  volumeAttachments: number;
  attached: number;
  pods: number;
  /** Pods marked for deletion and not yet gone. */
  terminating: number;
}

export type PeerFleetMessage =
  | { type: 'progress'; done: number; total: number }
  | { type: 'ready'; url?: string; token?: string; ca?: string; population: Record<string, number> }
  | { type: 'state'; state: PeerFleetState }
  | { type: 'counts'; counts: Record<string, number> }
  | { type: 'churn'; started: boolean }
  | { type: 'churn-stop'; stopped: boolean }
  | { type: 'delete-pods'; deleted: number; ms: number }
  | { type: 'pod-va'; op: 'start' | 'begin' | 'end' | 'stop' }
  | { type: 'pod-va'; op: 'result'; result: PodVaResult }
  | { type: 'stats'; stats: Record<string, Record<string, number>> };

export type PeerFleetCommand =
  | { type: 'state' }
  | { type: 'counts'; reset: boolean }
  | { type: 'churn'; rate: number }
  | { type: 'churn-stop' }
  | { type: 'delete-pods' }
  | { type: 'pod-va'; op: 'start' | 'begin' | 'end' | 'stop' | 'result' }
  | { type: 'stats' };

const send = (m: PeerFleetMessage) => process.send?.(m);

/** Σ node status.volumesAttached, VolumeAttachments (and attached ones), pods, from the store's changes. */
function trackState(store: SimStore): { state(): PeerFleetState; stop(): void } {
  const perNode = new Map<string, number>();
  const vas = new Map<string, boolean>();
  const terminating = new Set<string>();
  let nodeStatus = 0;
  let attached = 0;
  const setNode = (name: string, n: number) => {
    nodeStatus += n - (perNode.get(name) ?? 0);
    if (n === 0) perNode.delete(name);
    else perNode.set(name, n);
  };
  const setVa = (name: string, a: boolean | undefined) => {
    const was = vas.get(name);
    if (was === true) attached--;
    if (a === undefined) vas.delete(name);
    else {
      vas.set(name, a);
      if (a) attached++;
    }
  };
  const nodeCount = (o: { status?: { volumesAttached?: unknown[] } }) => o.status?.volumesAttached?.length ?? 0;
  const vaAttached = (o: { status?: { attached?: boolean } }) => o.status?.attached === true;
  for (const n of store.list('nodes')) setNode(n.metadata.name, nodeCount(n as never));
  for (const v of store.list('volumeattachments')) setVa(v.metadata.name, vaAttached(v as never));
  for (const p of store.list('pods')) if (p.metadata.deletionTimestamp) terminating.add(`${p.metadata.namespace}/${p.metadata.name}`);
  const unsubscribe = store.subscribe((ev: StoreEvent) => {
    if (ev.resource === 'nodes') setNode(ev.name, ev.type === 'DELETED' ? 0 : nodeCount(ev.view() as never));
    else if (ev.resource === 'volumeattachments') setVa(ev.name, ev.type === 'DELETED' ? undefined : vaAttached(ev.view() as never));
    else if (ev.resource === 'pods') {
      const key = `${ev.namespace}/${ev.name}`;
      if (ev.type === 'DELETED') terminating.delete(key);
      else if (ev.view().metadata.deletionTimestamp) terminating.add(key);
    }
  });
  return {
    state: () => ({ nodeStatus, volumeAttachments: vas.size, attached, pods: store.count('pods'), terminating: terminating.size }),
    stop: unsubscribe,
  };
}

/**
 * New-pod-to-VolumeAttachment latency on the store's changes (as pod-va-commit-tracker.ts, for
 * any SimStore), timed from the moment a controller can act on the pod: the pod seen with every
 * claim it uses Bound and that claim's PersistentVolume seen. On the simulator the churn commits
 * the claim, its volume and the pod together, so this is the pod's commit (as bench:e2e times
 * it); over a real API server the fleet's writes (claim status, volume, pod) land one by one,
 * and a pod waiting for them is not yet the controller's to attach.
 */
function trackPodVa(store: SimStore): { latency: PodVaLatency; stop(): void } {
  const latency = new PodVaLatency();
  const bound = new Set<string>();
  const withPv = new Set<string>();
  /** Pods seen whose claims are not all ready: pod uid → facts; claim → pod uids. */
  const parked = new Map<string, ReturnType<typeof podFacts>>();
  const parkedByClaim = new Map<string, Set<string>>();
  const claimKeys = (pod: ReturnType<typeof podFacts>) => pod.claims.map((c) => `${pod.namespace}/${c}`);
  const ready = (pod: ReturnType<typeof podFacts>) => claimKeys(pod).every((k) => bound.has(k) && withPv.has(k));
  const unpark = (uid: string) => {
    const pod = parked.get(uid);
    if (!pod) return;
    parked.delete(uid);
    for (const k of claimKeys(pod)) parkedByClaim.get(k)?.delete(uid);
  };
  const wake = (claim: string, now: number) => {
    const uids = parkedByClaim.get(claim);
    if (!uids) return;
    for (const uid of [...uids]) {
      const pod = parked.get(uid);
      if (pod && ready(pod)) {
        unpark(uid);
        latency.podAdded(pod, now);
      }
    }
  };
  for (const c of store.list('persistentvolumeclaims')) if ((c as { status?: { phase?: string } }).status?.phase === 'Bound') bound.add(`${c.metadata.namespace}/${c.metadata.name}`);
  for (const v of store.list('persistentvolumes')) {
    const pv = pvFacts(v as Parameters<typeof pvFacts>[0]);
    if (pv) withPv.add(pv.claim);
  }
  const stop = store.subscribe((ev: StoreEvent) => {
    const now = performance.now();
    if (ev.resource === 'pods') {
      latency.podEvents++;
      if (ev.type === 'MODIFIED') return;
      const pod = podFacts(ev.view() as unknown as Parameters<typeof podFacts>[0]);
      if (ev.type === 'DELETED') {
        unpark(pod.uid);
        latency.podDeleted(pod);
      } else if (!pod.node || ready(pod)) {
        latency.podAdded(pod, now);
      } else {
        parked.set(pod.uid, pod);
        for (const k of claimKeys(pod)) {
          const set = parkedByClaim.get(k) ?? new Set<string>();
          set.add(pod.uid);
          parkedByClaim.set(k, set);
        }
      }
    } else if (ev.resource === 'volumeattachments') {
      latency.vaEvents++;
      if (ev.type === 'DELETED') return;
      const attached = latency.awaitsAttach(ev.name) && (ev.view() as { status?: { attached?: boolean } }).status?.attached === true;
      latency.vaChanged(ev.name, attached, now);
    } else if (ev.resource === 'persistentvolumes' && ev.type === 'ADDED') {
      const pv = pvFacts(ev.view() as Parameters<typeof pvFacts>[0]);
      if (pv) {
        withPv.add(pv.claim);
        latency.pvAdded(pv.claim, pv.source);
        wake(pv.claim, now);
      }
    } else if (ev.resource === 'persistentvolumeclaims') {
      const key = `${ev.namespace}/${ev.name}`;
      if (ev.type !== 'DELETED' && (ev.view() as { status?: { phase?: string } }).status?.phase === 'Bound') {
        bound.add(key);
        wake(key, now);
      }
    }
  });
  return { latency, stop };
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.env.FA_PEER_FLEET ?? 'null') as PeerFleetConfig | null;
  if (!cfg) throw new Error('FA_PEER_FLEET (JSON config) is required');
  const fleet = { seed: cfg.seed, nodes: cfg.nodes, podsPerNode: cfg.podsPerNode, attacher: true, kubelet: true, churn: 0, nodeFailureRate: 0 };
  const onProgress = (done: number, total: number) => send({ type: 'progress', done, total });
  let counts: Record<string, number> = {};
  let store: SimStore;
  let actors: FleetActors | undefined;
  let stopFleet: () => Promise<void>;
  let stats: () => Record<string, Record<string, number>> = () => actors?.stats() ?? {};
  let ready: Extract<PeerFleetMessage, { type: 'ready' }>;
  if (cfg.mode === 'sim') {
    const count = (f: RequestFacts) => {
      const key = `${f.verb} ${f.resource}${f.subresource ? `/${f.subresource}` : ''}`;
      counts[key] = (counts[key] ?? 0) + 1;
      return undefined;
    };
    const sim = await startSimulator({ kubeconfigOut: cfg.kubeconfigOut, fleet, onProgress, faults: { beforeRequest: count } });
    store = sim.store;
    actors = sim.actors;
    stopFleet = () => sim.stop();
    ready = { type: 'ready', url: sim.url, token: sim.token, ca: sim.caPem, population: { ...(sim.population ?? {}) } as Record<string, number> };
  } else {
    if (!cfg.kubeconfig) throw new Error('remote mode needs kubeconfig');
    const remote = await startRemoteFleet({ kubeconfig: { path: cfg.kubeconfig }, fleet, onProgress, qps: cfg.qps ?? 0, maxInFlight: cfg.maxInFlight ?? 64, syncTimeoutMs: 10 * 60_000 });
    store = remote.store;
    actors = remote.actors;
    stopFleet = () => remote.stop({ flushMs: 2000 });
    stats = () => remote.stats() as Record<string, Record<string, number>>;
    ready = { type: 'ready', population: { ...remote.population } as unknown as Record<string, number> };
  }
  const stop = async (code: number) => {
    await stopFleet().catch(() => {});
    process.exit(code);
  };
  process.on('disconnect', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));
  const tracker = trackState(store);
  let podVa: ReturnType<typeof trackPodVa> | undefined;
  process.on('message', (m: PeerFleetCommand) => {
    switch (m.type) {
      case 'state':
        return send({ type: 'state', state: tracker.state() });
      case 'counts': {
        send({ type: 'counts', counts });
        if (m.reset) counts = {};
        return;
      }
      case 'churn':
        return send({ type: 'churn', started: actors?.startChurn(m.rate) ?? false });
      case 'churn-stop':
        return send({ type: 'churn-stop', stopped: actors?.stopChurn() ?? false });
      case 'stats':
        return send({ type: 'stats', stats: stats() });
      case 'delete-pods': {
        // Graceful deletion of every pod, as `kubectl delete pods --all` asks it: the kubelets
        // stop the containers, unmount and finish each deletion.
        const t0 = performance.now();
        let deleted = 0;
        for (const p of store.list('pods')) {
          if (p.metadata.deletionTimestamp) continue;
          try {
            store.delete('pods', p.metadata.namespace, p.metadata.name);
            deleted++;
          } catch {
            // gone already
          }
        }
        return send({ type: 'delete-pods', deleted, ms: Math.round(performance.now() - t0) });
      }
      case 'pod-va': {
        if (m.op === 'start') podVa ??= trackPodVa(store);
        if (!podVa) throw new Error(`pod-va ${m.op}: not started`);
        const now = performance.now();
        if (m.op === 'result') return send({ type: 'pod-va', op: 'result', result: podVa.latency.result(now) });
        if (m.op === 'begin') podVa.latency.beginWindow(now);
        else if (m.op === 'end') podVa.latency.endWindow();
        else if (m.op === 'stop') podVa.stop();
        return send({ type: 'pod-va', op: m.op });
      }
    }
  });
  send(ready);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
