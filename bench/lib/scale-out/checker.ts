/**
 * The scale-out chaos checker: an independent judge of several controller replicas, fed every
 * change the simulated API server commits (in commit order, with the object as committed) and,
 * for each, who committed it (the simulator's write log). It keeps its own small model of the
 * cluster and never looks at what a controller believes.
 *
 * Invariants (reference scale-out.md §5.5):
 * - I1: a ReadWriteOnce (or ReadWriteOncePod) volume never has VolumeAttachments on two nodes
 *   at one resourceVersion, unless both are being deleted (the project's multi-attach rule).
 * - I2: every node status write and every VolumeAttachment create or delete by a replica is
 *   made by the holder of the node's bucket at that resourceVersion (bucket Leases as committed
 *   before it).
 * - I3: no VolumeAttachment deletion is committed while its volume is in the node's
 *   volumesInUse; I4: nor while it is in the node's volumesAttached. Forced detaches (the node
 *   out of service, within a grace after the taint went, or NotReady for longer than the
 *   max-wait) are exempt and counted.
 * - I5: at most one successful create per VolumeAttachment name between its deletions.
 * - I6: `convergence()`: every desired pair attached and reported, nothing stray; the caller
 *   records the I6 violation when it does not hold by its deadline.
 *
 * Pure: no timers, no I/O; the caller gives each change its arrival time.
 */
import type { BucketHolders } from './bucket-holders.js';

export type Invariant = 'I1' | 'I2' | 'I3' | 'I4' | 'I5' | 'I6';
export const INVARIANTS: readonly Invariant[] = ['I1', 'I2', 'I3', 'I4', 'I5', 'I6'];

export interface Writer {
  user: string;
  verb: string;
  subresource?: string;
}

/** One committed change, as the store publishes it. */
export interface ObservedChange {
  rv: number;
  /** Arrival time (ms, any monotonic clock shared with the caller). */
  at: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  resource: string;
  namespace?: string;
  name: string;
  /** The object as committed; read during the call only. */
  object: unknown;
  /** Who committed it; undefined when unknown (then I2 is not judged for it). */
  writer?: Writer;
}

export interface CheckerViolation {
  invariant: Invariant;
  rv: number;
  node: string;
  volume: string;
  writer: string;
  detail: string;
}

export interface ConvergenceStatus {
  desired: number;
  attached: number;
  strayAttachments: number;
  strayReports: number;
  /** Up to 5 pending pairs, `volume on node`. */
  pending: string[];
  converged: boolean;
}

export interface ChaosCheckerOptions {
  /** Bucket holders, fed by the same changes (the checker applies Lease changes to it). */
  holders: BucketHolders;
  /** True for the users of controller replicas (the writers I2 judges). */
  isReplica: (user: string) => boolean;
  /** The controllers' --max-wait-for-unmount. */
  maxWaitForUnmountMs: number;
  /** How long after the out-of-service taint is removed a detach still counts as forced. Default 10 s. */
  outOfServiceGraceMs?: number;
  /** Violations kept in full (all are counted). Default 200. */
  maxRecorded?: number;
}

export interface ChaosChecker {
  apply(c: ObservedChange): void;
  /** Records a violation found outside the stream (I6 at the caller's deadline). */
  record(v: CheckerViolation): void;
  violations(): readonly CheckerViolation[];
  counts(): Record<Invariant, number>;
  /** Writes judged by I2, and deletions judged by I3/I4. */
  checked(): { replicaWrites: number; deletions: number; creates: number };
  /** Detaches of mounted or reported volumes exempted as forced. */
  forcedDetaches(): number;
  convergence(): ConvergenceStatus;
}

interface NodeState { inUse: Set<string>; attached: Set<string>; ready: boolean; notReadySince?: number; outOfService: boolean; taintGoneAt?: number }
interface VaState { node: string; pv: string; attached: boolean; deleting: boolean }
interface PvState { u: string; rwo: boolean }
interface PodState { node: string; claims: string[]; live: boolean }

const OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
type Obj = { metadata?: { name?: string; namespace?: string; deletionTimestamp?: string }; spec?: Record<string, unknown>; status?: Record<string, unknown> };

export function createChaosChecker(opts: ChaosCheckerOptions): ChaosChecker {
  const nodes = new Map<string, NodeState>();
  const vas = new Map<string, VaState>();
  const vasByPv = new Map<string, Set<string>>();
  const pvs = new Map<string, PvState>();
  const pvcs = new Map<string, string>();
  const pods = new Map<string, PodState>();
  const creates = new Map<string, number>();
  const recorded: CheckerViolation[] = [];
  const counts = Object.fromEntries(INVARIANTS.map((i) => [i, 0])) as Record<Invariant, number>;
  const checked = { replicaWrites: 0, deletions: 0, creates: 0 };
  let forced = 0;
  const max = opts.maxRecorded ?? 200;
  const oosGrace = opts.outOfServiceGraceMs ?? 10_000;

  const record = (v: CheckerViolation) => {
    counts[v.invariant]++;
    if (recorded.length < max) recorded.push(v);
  };
  const who = (c: ObservedChange) => c.writer?.user ?? '?';
  const volumeOf = (pv: string) => pvs.get(pv)?.u ?? `pv:${pv}`;

  function onNode(c: ObservedChange, o: Obj): void {
    if (c.type === 'DELETED') return void nodes.delete(c.name);
    const status = (o.status ?? {}) as { volumesInUse?: string[]; volumesAttached?: Array<{ name: string }>; conditions?: Array<{ type: string; status: string }> };
    const taints = ((o.spec ?? {}) as { taints?: Array<{ key: string }> }).taints ?? [];
    const prev = nodes.get(c.name);
    const ready = status.conditions?.find((x) => x.type === 'Ready')?.status === 'True';
    const outOfService = taints.some((t) => t.key === OUT_OF_SERVICE);
    nodes.set(c.name, {
      inUse: new Set(status.volumesInUse ?? []),
      attached: new Set((status.volumesAttached ?? []).map((a) => a.name)),
      ready,
      notReadySince: ready ? undefined : (prev && !prev.ready ? prev.notReadySince : c.at),
      outOfService,
      taintGoneAt: outOfService ? undefined : prev?.outOfService ? c.at : prev?.taintGoneAt,
    });
  }

  function judgeWriter(c: ObservedChange, node: string, volume: string): void {
    const w = c.writer;
    if (!w || !opts.isReplica(w.user)) return;
    checked.replicaWrites++;
    const holder = opts.holders.holderOf(node);
    if (holder !== w.user) record({ invariant: 'I2', rv: c.rv, node, volume, writer: w.user, detail: `${w.verb} ${c.resource}${w.subresource ? `/${w.subresource}` : ''} ${c.name} by ${w.user} while bucket ${opts.holders.bucketOf(node)} is held by ${holder || 'nobody'}` });
  }

  function judgeDeletion(c: ObservedChange, name: string, va: VaState): void {
    checked.deletions++;
    const n = nodes.get(va.node);
    const u = volumeOf(va.pv);
    const inUse = n?.inUse.has(u) ?? false;
    const reported = n?.attached.has(u) ?? false;
    if (!inUse && !reported) return;
    const isForced = n !== undefined && (n.outOfService || (n.taintGoneAt !== undefined && c.at - n.taintGoneAt <= oosGrace) || (!n.ready && n.notReadySince !== undefined && c.at - n.notReadySince > opts.maxWaitForUnmountMs));
    if (isForced) return void forced++;
    if (inUse) record({ invariant: 'I3', rv: c.rv, node: va.node, volume: u, writer: who(c), detail: `VolumeAttachment ${name} deletion committed while the volume is in ${va.node}'s volumesInUse` });
    if (reported) record({ invariant: 'I4', rv: c.rv, node: va.node, volume: u, writer: who(c), detail: `VolumeAttachment ${name} deletion committed while the volume is in ${va.node}'s volumesAttached` });
  }

  function onVa(c: ObservedChange, o: Obj): void {
    const prev = vas.get(c.name);
    const spec = (o.spec ?? {}) as { nodeName?: string; source?: { persistentVolumeName?: string } };
    const next: VaState | undefined = c.type === 'DELETED' ? undefined : {
      node: spec.nodeName ?? prev?.node ?? '',
      pv: spec.source?.persistentVolumeName ?? prev?.pv ?? '',
      attached: (o.status as { attached?: boolean } | undefined)?.attached === true,
      deleting: o.metadata?.deletionTimestamp !== undefined,
    };
    const va = (next ?? prev)!;
    if (!va) return;
    if (c.writer?.verb === 'create' || c.writer?.verb === 'delete') judgeWriter(c, va.node, volumeOf(va.pv));
    if (c.type === 'ADDED' && next) {
      checked.creates++;
      const n = (creates.get(c.name) ?? 0) + 1;
      creates.set(c.name, n);
      if (n > 1) record({ invariant: 'I5', rv: c.rv, node: next.node, volume: volumeOf(next.pv), writer: who(c), detail: `VolumeAttachment ${c.name} created ${n} times without a deletion between` });
      const pv = pvs.get(next.pv);
      if (pv?.rwo) {
        for (const other of vasByPv.get(next.pv) ?? []) {
          const x = vas.get(other);
          if (!x || other === c.name || x.node === next.node || (x.deleting && next.deleting)) continue;
          record({ invariant: 'I1', rv: c.rv, node: next.node, volume: pv.u, writer: who(c), detail: `ReadWriteOnce volume has VolumeAttachments on ${x.node} (${other}${x.deleting ? ', being deleted' : ''}) and on ${next.node} (${c.name})` });
        }
      }
    }
    if (prev && !prev.deleting && (!next || next.deleting)) judgeDeletion(c, c.name, prev);
    if (next) {
      vas.set(c.name, next);
      let set = vasByPv.get(next.pv);
      if (!set) vasByPv.set(next.pv, (set = new Set()));
      set.add(c.name);
    } else {
      vas.delete(c.name);
      creates.delete(c.name);
      vasByPv.get(va.pv)?.delete(c.name);
    }
  }

  function onPv(c: ObservedChange, o: Obj): void {
    if (c.type === 'DELETED') return void pvs.delete(c.name);
    const spec = (o.spec ?? {}) as { accessModes?: string[]; csi?: { driver: string; volumeHandle: string } };
    const modes = spec.accessModes ?? [];
    pvs.set(c.name, {
      u: spec.csi ? `kubernetes.io/csi/${spec.csi.driver}^${spec.csi.volumeHandle}` : `pv:${c.name}`,
      rwo: modes.length > 0 && modes.every((m) => m === 'ReadWriteOnce' || m === 'ReadWriteOncePod'),
    });
  }

  function onPod(c: ObservedChange, o: Obj): void {
    const key = `${c.namespace ?? ''}/${c.name}`;
    if (c.type === 'DELETED') return void pods.delete(key);
    const spec = (o.spec ?? {}) as { nodeName?: string; volumes?: Array<{ persistentVolumeClaim?: { claimName: string } }> };
    const phase = (o.status as { phase?: string } | undefined)?.phase;
    pods.set(key, {
      node: spec.nodeName ?? '',
      claims: (spec.volumes ?? []).flatMap((v) => (v.persistentVolumeClaim ? [`${c.namespace ?? ''}/${v.persistentVolumeClaim.claimName}`] : [])),
      live: spec.nodeName !== undefined && o.metadata?.deletionTimestamp === undefined && phase !== 'Succeeded' && phase !== 'Failed',
    });
  }

  return {
    apply(c) {
      const o = (c.object ?? {}) as Obj;
      switch (c.resource) {
        case 'leases':
          return opts.holders.apply(c.rv, c.name, c.type === 'DELETED' ? '' : (((o.spec ?? {}) as { holderIdentity?: string }).holderIdentity ?? ''));
        case 'nodes':
          if (c.writer?.subresource === 'status' && c.type === 'MODIFIED') judgeWriter(c, c.name, '');
          return onNode(c, o);
        case 'volumeattachments':
          return onVa(c, o);
        case 'persistentvolumes':
          return onPv(c, o);
        case 'persistentvolumeclaims':
          if (c.type === 'DELETED') pvcs.delete(`${c.namespace ?? ''}/${c.name}`);
          else pvcs.set(`${c.namespace ?? ''}/${c.name}`, ((o.spec ?? {}) as { volumeName?: string }).volumeName ?? '');
          return;
        case 'pods':
          return onPod(c, o);
        default:
      }
    },
    record,
    violations: () => recorded,
    counts: () => ({ ...counts }),
    checked: () => ({ ...checked }),
    forcedDetaches: () => forced,
    convergence() {
      // Desired pairs: live pods' bound volumes on existing nodes; a ReadWriteOnce volume wanted
      // on two nodes is a conflict the controller must not resolve, and is left out.
      const desired = new Map<string, { u: string; node: string; pv: string }>();
      const rwoNodes = new Map<string, Set<string>>();
      for (const p of pods.values()) {
        if (!p.live || !nodes.has(p.node)) continue;
        for (const claim of p.claims) {
          const pvName = pvcs.get(claim);
          const pv = pvName ? pvs.get(pvName) : undefined;
          if (!pvName || !pv) continue;
          desired.set(`${pv.u}|${p.node}`, { u: pv.u, node: p.node, pv: pvName });
          if (pv.rwo) rwoNodes.set(pv.u, (rwoNodes.get(pv.u) ?? new Set()).add(p.node));
        }
      }
      for (const [u, ns] of rwoNodes) if (ns.size > 1) for (const n of ns) desired.delete(`${u}|${n}`);
      let attached = 0;
      const pending: string[] = [];
      const vaOn = new Map<string, VaState>();
      for (const va of vas.values()) vaOn.set(`${volumeOf(va.pv)}|${va.node}`, va);
      for (const [key, d] of desired) {
        const va = vaOn.get(key);
        if (va?.attached && !va.deleting && nodes.get(d.node)?.attached.has(d.u)) attached++;
        else if (pending.length < 5) pending.push(`${d.u} on ${d.node}`);
      }
      let strayAttachments = 0;
      for (const key of vaOn.keys()) if (!desired.has(key)) strayAttachments++;
      let strayReports = 0;
      for (const [name, n] of nodes) for (const u of n.attached) if (!desired.has(`${u}|${name}`)) strayReports++;
      return { desired: desired.size, attached, strayAttachments, strayReports, pending, converged: attached === desired.size && strayAttachments === 0 && strayReports === 0 };
    },
  };
}
