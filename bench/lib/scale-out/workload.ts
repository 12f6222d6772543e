/**
 * The chaos run's workload, driven on the simulator's store as a scheduler and workload
 * controllers would, aimed at the sharding hazards (reference scale-out.md §5.3):
 * - `move`: a ReadWriteOnce pod deleted, then created again under its name and claim on a node
 *   whose bucket another replica holds (when one exists);
 * - `race`: a ReadWriteOnce pod deleted, then two pods for its claim created within 10 ms on
 *   nodes of different replicas; after a while the one not attached goes (as a StatefulSet's
 *   loser would be);
 * - `recreate`: a pod deleted and created again on the same node within a second of being gone
 *   (the kubelet mounts the volume again while a lagging replica may still see it unmounted).
 * Node failures and the out-of-service taint come from the fleet's own actor. Per-pod errors are
 * counted and skipped: the driver never throws.
 */
import type { ServableStore, KubeObject } from '../../../src/sim/store/index.js';
import { FLEET_NAMESPACE } from '../../../src/sim/actors/names.js';
import type { Prng } from '../../../src/sim/actors/prng.js';
import type { BucketHolders } from './bucket-holders.js';

export type WorkKind = 'move' | 'race' | 'recreate';

export interface WorkloadOptions {
  store: ServableStore;
  holders: BucketHolders;
  prng: Prng;
  /** Operations started per second. */
  rate: number;
  /** Share of each kind (normalised). */
  mix: Record<WorkKind, number>;
  /** Operations in flight at most. */
  maxInFlight?: number;
  /** How long a race's two pods both stay before the loser goes. */
  raceHoldMs?: number;
}

export interface Workload {
  start(): void;
  /** Stops starting operations and waits for those in flight. */
  stop(): Promise<void>;
  /** Deletes every pod but the first of a ReadWriteOnce claim wanted by several live pods. */
  resolveConflicts(): number;
  /** Starts one operation now (tests and mutation runs). */
  run(kind: WorkKind): Promise<void>;
  /** Moves a ReadWriteOnce pod from another node onto `node`; resolves once it is created there (false: none moved). */
  moveOnto(node: string): Promise<boolean>;
  stats(): Record<string, number>;
}

type PodSpec = { nodeName: string; volumes?: Array<{ persistentVolumeClaim?: { claimName: string } }> };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createWorkload(o: WorkloadOptions): Workload {
  const { store, holders, prng } = o;
  const busy = new Set<string>();
  const inFlight = new Set<Promise<void>>();
  const stats: Record<string, number> = { move: 0, crossReplicaMoves: 0, race: 0, recreate: 0, skipped: 0, errors: 0, conflictsResolved: 0 };
  let timer: NodeJS.Timeout | undefined;
  let stopping = false;

  const claimsOf = (p: KubeObject) => ((p.spec as PodSpec).volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [v.persistentVolumeClaim.claimName] : []));
  const rwo = (claim: string) => {
    const modes = (store.get('persistentvolumeclaims', FLEET_NAMESPACE, claim)?.spec as { accessModes?: string[] } | undefined)?.accessModes ?? [];
    return modes.length > 0 && modes.every((m) => m === 'ReadWriteOnce');
  };
  const live = (p: KubeObject) => p.metadata.deletionTimestamp === undefined;
  const readyNodes = () => store.list('nodes').filter((n) => ((n.status as { conditions?: Array<{ type: string; status: string }> }).conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') && !((n.spec as { taints?: unknown[] }).taints?.length)).map((n) => n.metadata.name);

  /** A random live ReadWriteOnce pod on a Ready node nobody is working on. */
  function pickPod(): KubeObject | undefined {
    const pods = store.list('pods', FLEET_NAMESPACE);
    const ready = new Set(readyNodes());
    for (let tries = 0; tries < 50 && pods.length > 0; tries++) {
      const p = pods[prng.int(pods.length)]!;
      const claims = claimsOf(p);
      if (!live(p) || busy.has(p.metadata.name) || claims.length === 0 || !claims.every(rwo) || claims.some((c) => busy.has(`claim:${c}`))) continue;
      if (!ready.has((p.spec as PodSpec).nodeName)) continue;
      return p;
    }
    return undefined;
  }

  /** A Ready node another replica acts on than `from`'s, or any other Ready node. */
  function otherNode(from: string, avoidHolder?: string): { node: string; cross: boolean } | undefined {
    const nodes = readyNodes().filter((n) => n !== from);
    if (nodes.length === 0) return undefined;
    const src = avoidHolder ?? holders.holderOf(from);
    for (let tries = 0; tries < 40; tries++) {
      const n = nodes[prng.int(nodes.length)]!;
      const h = holders.holderOf(n);
      if (h !== '' && h !== src) return { node: n, cross: true };
    }
    return { node: nodes[prng.int(nodes.length)]!, cross: false };
  }

  async function deleteAndWait(name: string, timeoutMs = 30_000): Promise<boolean> {
    try {
      store.delete('pods', FLEET_NAMESPACE, name);
    } catch {
      return false;
    }
    const end = performance.now() + timeoutMs;
    while (performance.now() < end) {
      if (store.get('pods', FLEET_NAMESPACE, name) === undefined) return true;
      await sleep(25);
    }
    return false;
  }

  function createPod(template: KubeObject, name: string, node: string): void {
    const spec = template.spec as PodSpec;
    store.create('pods', {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name, namespace: FLEET_NAMESPACE, labels: template.metadata.labels },
      spec: { ...spec, nodeName: node },
      status: { phase: 'Running', containerStatuses: [{ name: 'c', ready: true, state: { running: {} } }] },
    });
  }

  async function runKind(kind: WorkKind): Promise<void> {
    const p = pickPod();
    if (!p) return void stats.skipped++;
    const name = p.metadata.name;
    const from = (p.spec as PodSpec).nodeName;
    const claims = claimsOf(p);
    busy.add(name);
    for (const c of claims) busy.add(`claim:${c}`);
    try {
      if (kind === 'recreate') {
        if (!(await deleteAndWait(name))) return void stats.skipped++;
        // Back within a second: before a replica whose watch lags has seen it come back.
        await sleep(prng.int(1000));
        createPod(p, name, from);
        stats.recreate++;
      } else if (kind === 'move') {
        const to = otherNode(from);
        if (!to) return void stats.skipped++;
        if (!(await deleteAndWait(name))) return void stats.skipped++;
        createPod(p, name, to.node);
        stats.move++;
        if (to.cross) stats.crossReplicaMoves++;
      } else {
        const a = otherNode(from);
        const b = a ? otherNode(a.node, holders.holderOf(a.node)) : undefined;
        if (!a || !b || a.node === b.node) return void stats.skipped++;
        if (!(await deleteAndWait(name))) return void stats.skipped++;
        const second = `${name}-race`;
        createPod(p, name, a.node);
        await sleep(prng.int(10));
        createPod(p, second, b.node);
        stats.race++;
        await sleep(o.raceHoldMs ?? 8000);
        // The pod whose volume got attached stays; the other goes (the second when neither).
        const attachedOn = new Set(store.list('volumeattachments').filter((va) => (va.status as { attached?: boolean } | undefined)?.attached).map((va) => (va.spec as { nodeName: string }).nodeName));
        const loser = attachedOn.has(b.node) && !attachedOn.has(a.node) ? name : second;
        await deleteAndWait(loser);
      }
    } catch {
      stats.errors++;
    } finally {
      busy.delete(name);
      for (const c of claims) busy.delete(`claim:${c}`);
    }
  }

  function track(kind: WorkKind): Promise<void> {
    const run = runKind(kind).finally(() => inFlight.delete(run));
    inFlight.add(run);
    return run;
  }

  const kinds = Object.entries(o.mix) as Array<[WorkKind, number]>;
  const total = kinds.reduce((s, [, w]) => s + w, 0);
  const draw = (): WorkKind => {
    let x = prng.float() * total;
    for (const [k, w] of kinds) if ((x -= w) < 0) return k;
    return kinds[0]![0];
  };

  return {
    start() {
      const tick = () => {
        if (stopping) return;
        if (inFlight.size < (o.maxInFlight ?? 24)) void track(draw());
        timer = setTimeout(tick, prng.exponential(1000 / o.rate));
      };
      tick();
    },
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await Promise.all([...inFlight]);
    },
    resolveConflicts() {
      const seen = new Map<string, string>();
      let n = 0;
      for (const p of store.list('pods', FLEET_NAMESPACE)) {
        if (!live(p)) continue;
        for (const c of claimsOf(p)) {
          if (!rwo(c)) continue;
          if (!seen.has(c)) {
            seen.set(c, p.metadata.name);
            continue;
          }
          try {
            store.delete('pods', FLEET_NAMESPACE, p.metadata.name);
            n++;
          } catch {
            stats.errors++;
          }
        }
      }
      stats.conflictsResolved += n;
      return n;
    },
    run: (kind) => track(kind),
    async moveOnto(node) {
      for (let tries = 0; tries < 20; tries++) {
        const p = pickPod();
        if (!p || (p.spec as PodSpec).nodeName === node) continue;
        const name = p.metadata.name;
        const claims = claimsOf(p);
        busy.add(name);
        for (const c of claims) busy.add(`claim:${c}`);
        try {
          if (!(await deleteAndWait(name))) continue;
          createPod(p, name, node);
          stats.move++;
          return true;
        } finally {
          busy.delete(name);
          for (const c of claims) busy.delete(`claim:${c}`);
        }
      }
      return false;
    },
    stats: () => ({ ...stats }),
  };
}
