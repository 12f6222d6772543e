/**
 * The simulated kubelets of every node, as one actor. On a Ready node a pod's volume is added
 * to `status.volumesInUse` a mount latency after `status.volumesAttached` lists it, and removed
 * an unmount latency after no live pod on the node uses it. A pod deleted gracefully has its
 * containers stopped, its volumes unmounted, and is then deleted with gracePeriodSeconds 0.
 * NotReady nodes do nothing until they recover. Changes of one node are coalesced into one
 * status write per tick. Heartbeat Leases are a separate actor (node-lease.ts).
 */
import type { KubeObject, ResourceName, SimStore, StoreEventType } from '../store/sim-store.js';
import { createWriteErrorLog, type FleetActor } from './actor.js';
import { DelayQueue } from './delay-queue.js';
import { nodeVolumeNames, podNodeName, pvClaimRef } from './fields.js';
import type { FleetIndex } from './fleet-index.js';
import { objectKey } from './names.js';

export interface KubeletDeps {
  store: SimStore;
  index: FleetIndex;
  mountLatencyMs: number;
  unmountLatencyMs: number;
}

interface NodeVolumes {
  attached: number[];
  inUse: number[];
  add?: Set<number>;
  remove?: Set<number>;
}

// Volume queue keys pack (node id, volume id) into one number.
const VOL_KEY = 2 ** 26;
const FINISH_RECHECK_MS = 100;
const MAX_UNRESOLVED_CLAIMS = 10_000;

export function createKubelet(deps: KubeletDeps): FleetActor {
  return new Kubelet(deps);
}

class Kubelet implements FleetActor {
  readonly name = 'kubelet';
  readonly resources: ReadonlySet<ResourceName> = new Set<ResourceName>(['nodes', 'pods', 'persistentvolumes']);
  readonly tickMs = 50;
  private readonly vols: Array<NodeVolumes | undefined> = [];
  private readonly dirty = new Set<number>();
  private readonly flushes = new Set<number>();
  /**
   * Each node's wanted volumes (read only), kept until a pod on the node changes or a claim's
   * volume changes (FleetIndex.volumeGeneration); node status changes, most of what wakes a
   * node, leave them as they are.
   */
  private readonly wantedCache: Array<ReadonlySet<number> | undefined> = [];
  private wantedGen = -1;
  /** Nodes with a pod whose claim (the key) is not bound yet: woken when that claim's PV arrives. */
  private readonly unresolved = new Map<string, Set<number>>();
  private readonly volumeQueue = new DelayQueue<number>();
  private readonly finishQueue = new DelayQueue<string>();
  private readonly terminating = new Set<string>();
  /**
   * Per node, pods seen marked for deletion whose containers this kubelet has not stopped: what
   * a node's reconcile stops, so it never walks all the node's pods (the walk was most of the
   * kubelet's time under churn). Kept while the node is NotReady; a pod's removal forgets it.
   */
  private readonly toStop: Array<Set<string> | undefined> = [];
  private readonly writeError = createWriteErrorLog('kubelet');
  private readonly counters = { mounted: 0, unmounted: 0, nodeStatusWrites: 0, podsStopped: 0, podsFinished: 0, writeErrors: 0, nodeReconciles: 0, wantedComputed: 0 };

  constructor(private readonly d: KubeletDeps) {}

  onEvent(type: StoreEventType, resource: ResourceName, o: KubeObject): void {
    const { index } = this.d;
    if (resource === 'nodes') {
      const id = index.nodeId(o.metadata.name);
      if (type === 'DELETED') {
        this.vols[id] = undefined;
        this.wantedCache[id] = undefined;
        return;
      }
      const v = this.vols[id];
      const attached = index.internAll(nodeVolumeNames(o, 'volumesAttached'), v?.attached);
      const inUse = index.internAll(nodeVolumeNames(o, 'volumesInUse'), v?.inUse);
      if (v) {
        v.attached = attached;
        v.inUse = inUse;
      } else if (attached.length > 0 || inUse.length > 0) {
        this.vols[id] = { attached, inUse };
      }
      this.dirty.add(id);
    } else if (resource === 'pods') {
      const node = podNodeName(o);
      const id = node === undefined ? -1 : index.nodeId(node);
      if (id >= 0) {
        this.dirty.add(id);
        this.wantedCache[id] = undefined;
      }
      if (type === 'DELETED') {
        const key = objectKey(o.metadata.namespace, o.metadata.name);
        this.terminating.delete(key);
        this.finishQueue.delete(key);
        if (id >= 0) this.toStop[id]?.delete(key);
      } else if (id >= 0 && o.metadata.deletionTimestamp !== undefined) {
        const key = objectKey(o.metadata.namespace, o.metadata.name);
        if (!this.terminating.has(key)) (this.toStop[id] ??= new Set()).add(key);
      }
    } else if (this.unresolved.size > 0 && type !== 'DELETED') {
      // A PV bound to a claim: pods waiting for that claim may resolve now.
      const ref = pvClaimRef(o);
      const nodes = ref && this.unresolved.get(objectKey(ref.namespace, ref.name));
      if (nodes) {
        for (const id of nodes) this.dirty.add(id);
        this.unresolved.delete(objectKey(ref.namespace, ref.name));
      }
    }
  }

  tick(now: number, deadline: number): void {
    for (const key of this.volumeQueue.popDue(now, 4096)) this.volumeDue(Math.floor(key / VOL_KEY), key % VOL_KEY);
    for (const id of this.dirty) {
      if (performance.now() > deadline) break;
      this.dirty.delete(id);
      this.reconcile(id, now);
    }
    for (const id of this.flushes) {
      if (performance.now() > deadline) break;
      this.flushes.delete(id);
      this.flush(id);
    }
    while (performance.now() < deadline) {
      const due = this.finishQueue.popDue(now, 64);
      if (due.length === 0) break;
      for (const key of due) this.finish(key, now);
    }
  }

  /** Volumes wanted on a node: those of its pods that are neither deleting nor terminated. */
  private wanted(id: number): ReadonlySet<number> {
    const { index } = this.d;
    if (this.wantedGen !== index.volumeGeneration()) {
      this.wantedCache.length = 0;
      this.wantedGen = index.volumeGeneration();
    }
    const cached = this.wantedCache[id];
    if (cached) return cached;
    this.counters.wantedComputed++;
    const out = new Set<number>();
    let resolved = true;
    for (const pod of index.podsOn(id)) {
      if (index.podDeleting(pod) || index.podTerminal(pod)) continue;
      const vols = index.podVolumes(pod);
      if (vols) for (const vid of vols) out.add(vid);
      else {
        resolved = false;
        this.waitForClaim(index.unboundClaim(pod), id);
      }
    }
    // A node still waiting for a claim is computed again when it is woken.
    if (resolved) this.wantedCache[id] = out;
    return out;
  }

  private waitForClaim(claim: string | undefined, node: number): void {
    if (claim === undefined) return;
    if (this.unresolved.size >= MAX_UNRESOLVED_CLAIMS) {
      // Claims that are never bound would pile up: wake everything once and start over.
      for (const nodes of this.unresolved.values()) for (const id of nodes) this.dirty.add(id);
      this.unresolved.clear();
    }
    let nodes = this.unresolved.get(claim);
    if (!nodes) this.unresolved.set(claim, (nodes = new Set()));
    nodes.add(node);
  }

  private reconcile(id: number, now: number): void {
    const { index } = this.d;
    if (!index.exists(id) || !index.isReady(id)) return;
    this.counters.nodeReconciles++;
    const stop = this.toStop[id];
    if (stop !== undefined) {
      this.toStop[id] = undefined;
      for (const key of stop) if (index.pod(key)?.deleting && !this.terminating.has(key)) this.stopPod(key, now);
    }
    const v = this.vols[id];
    if (!v) return;
    const wanted = this.wanted(id);
    for (const vid of v.attached) {
      if (wanted.has(vid) && !v.inUse.includes(vid) && !v.add?.has(vid)) this.volumeQueue.add(id * VOL_KEY + vid, now + this.d.mountLatencyMs);
    }
    for (const vid of v.inUse) {
      if (!wanted.has(vid) && !v.remove?.has(vid)) this.volumeQueue.add(id * VOL_KEY + vid, now + this.d.unmountLatencyMs);
    }
  }

  /** A mount or unmount is due: the node's current state decides which, if any. */
  private volumeDue(id: number, vid: number): void {
    const v = this.vols[id];
    if (!v || !this.d.index.isReady(id)) return;
    // Mounts due together on one node share the node's cached wanted volumes.
    const want = this.wanted(id).has(vid);
    if (want && v.attached.includes(vid) && !v.inUse.includes(vid)) {
      (v.add ??= new Set()).add(vid);
      v.remove?.delete(vid);
      this.flushes.add(id);
    } else if (!want && v.inUse.includes(vid)) {
      (v.remove ??= new Set()).add(vid);
      v.add?.delete(vid);
      this.flushes.add(id);
    }
  }

  /** Writes a node's pending volumesInUse changes in one status write. */
  private flush(id: number): void {
    const v = this.vols[id];
    if (!v) return;
    const add = v.add ?? new Set<number>();
    const remove = v.remove ?? new Set<number>();
    v.add = undefined;
    v.remove = undefined;
    if (!this.d.index.isReady(id) || (add.size === 0 && remove.size === 0)) return;
    const { index } = this.d;
    const name = index.nodeNames[id];
    try {
      const done = this.d.store.mutate('nodes', undefined, name, (o) => {
        const set = new Set(nodeVolumeNames(o, 'volumesInUse'));
        for (const vid of remove) set.delete(index.volumeName(vid));
        for (const vid of add) set.add(index.volumeName(vid));
        o.status = { ...((o.status ?? {}) as Record<string, unknown>), volumesInUse: [...set].sort() };
      });
      if (done) {
        this.counters.nodeStatusWrites++;
        this.counters.mounted += add.size;
        this.counters.unmounted += remove.size;
      }
    } catch (err) {
      this.counters.writeErrors++;
      this.writeError(err, `volumesInUse of node ${name}`);
      this.dirty.add(id);
    }
  }

  /** Stops the containers of a pod being deleted; it finishes once its volumes are unmounted. */
  private stopPod(key: string, now: number): void {
    const pod = this.d.index.pod(key);
    if (!pod) return;
    this.terminating.add(key);
    this.finishQueue.add(key, now + this.d.unmountLatencyMs);
    const finishedAt = new Date(now).toISOString();
    try {
      this.d.store.mutate('pods', pod.namespace, pod.name, (o) => {
        const status = (o.status ?? {}) as Record<string, unknown>;
        const list = Array.isArray(status.containerStatuses) ? (status.containerStatuses as Array<Record<string, unknown>>) : [];
        if (!list.some((cs) => cs.state !== null && typeof cs.state === 'object' && 'running' in cs.state)) return;
        status.containerStatuses = list.map((cs) => ({ ...cs, ready: false, state: { terminated: { exitCode: 0, reason: 'Completed', finishedAt } } }));
        o.status = status;
      });
      this.counters.podsStopped++;
    } catch (err) {
      this.counters.writeErrors++;
      this.writeError(err, `stop pod ${key}`);
    }
  }

  /** Deletes a terminating pod for good once none of its volumes is still mounted for it. */
  private finish(key: string, now: number): void {
    const { index } = this.d;
    const pod = index.pod(key);
    if (!pod || !pod.deleting) {
      this.terminating.delete(key);
      return;
    }
    if (!index.isReady(pod.node)) {
      // Stopped again when the node recovers.
      this.terminating.delete(key);
      (this.toStop[pod.node] ??= new Set()).add(key);
      return;
    }
    const inUse = this.vols[pod.node]?.inUse ?? [];
    const wanted = this.wanted(pod.node);
    if ((index.podVolumes(pod) ?? []).some((vid) => inUse.includes(vid) && !wanted.has(vid))) {
      this.finishQueue.add(key, now + FINISH_RECHECK_MS);
      return;
    }
    try {
      this.d.store.delete('pods', pod.namespace, pod.name, { gracePeriodSeconds: 0 });
      this.counters.podsFinished++;
    } catch (err) {
      this.counters.writeErrors++;
      this.writeError(err, `finish pod ${key}`);
    }
  }

  stats(): Record<string, number> {
    return { ...this.counters, pendingMounts: this.volumeQueue.size, terminating: this.terminating.size };
  }
}
