/**
 * The scenario driver: plays every part of a cluster but the attach/detach controller, over the
 * API with the admin kubeconfig, and records what the API server saw.
 *
 * - objects: Nodes (managed annotation, Ready condition through nodes/status), the CSIDriver,
 *   PVs with a CSI source and PVCs bound to them (status through the status subresource), pods
 *   with spec.nodeName;
 * - the CSI external attacher: adds its finalizer to each VolumeAttachment, then sets
 *   status.attached (or status.attachError, per volume, until the scenario allows the attach);
 *   on deletion removes its finalizer;
 * - the kubelet: node.status.volumesInUse, only when a scenario says a volume is mounted;
 * - the recorder: VolumeAttachment creates and deletes per (PV, node) in order, Events (distinct
 *   type, reason, message, involved object and component), and at the end every node's
 *   status.volumesAttached and the VolumeAttachments left.
 *
 * Every wait is bounded and FAILS when its deadline passes (with the record so far).
 */
import { createHash } from 'node:crypto';
import { MERGE, type Kube, type Watcher } from './kube.js';

export const CSI_DRIVER = 'sim.csi.fleet-attach.io';
export const ATTACHER_FINALIZER = 'external-attacher/sim-csi-fleet-attach-io';
export const MANAGED_ANNOTATION = 'volumes.kubernetes.io/controller-managed-attach-detach';
export const OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';

/**
 * The volume handle of a PV of the driver: distinct from the PV name, so records show which is
 * which. PVs named `<x>.<anything>` share the handle (so the unique name) of `<x>`: two PVs, for
 * claims in two namespaces, of one volume.
 */
export const handleOf = (pv: string) => `vol-${pv.split('.')[0]}`;
/** Unique volume name (upstream-rules §1). */
export const uniqueName = (pv: string) => `kubernetes.io/csi/${CSI_DRIVER}^${handleOf(pv)}`;
/** VolumeAttachment name (upstream-rules L1). */
export const vaName = (pv: string, node: string) =>
  `csi-${createHash('sha256').update(handleOf(pv) + CSI_DRIVER + node).digest('hex')}`;

export interface AttachmentRecord {
  va: string;
  pv: string;
  node: string;
  /**
   * In order: `create`, `create(driver)`, `delete`, `delete(driver)` (a delete is the deletion
   * request: deletionTimestamp set, or the object gone at once). A delete made while the node's
   * status.volumesAttached still listed the volume ends in ` while listed` (upstream never does
   * that itself, Q1); "while" is judged by resourceVersion, which one etcd orders across resources.
   */
  ops: string[];
}

interface Op {
  op: string;
  rv: number;
  pv: string;
  node: string;
}

export interface ScenarioRecord {
  attachments: AttachmentRecord[];
  /** VolumeAttachments left at the end: `<pv>@<node> attached|attachError=..|pending[, deleting]`. */
  finalAttachments: string[];
  /** Every Node left at the end: the names in status.volumesAttached (with `(devicePath)` when one is set), sorted. */
  volumesAttached: Record<string, string[]>;
  /** Distinct events: `<Kind> <ns>/<name> <type> <reason> [<source.component>|<reportingComponent>]: <message>`, sorted. */
  events: string[];
  /** What the scenario looked at mid-way (`Driver.checkpoint`), in order. */
  checkpoints: string[];
}

export type AttachPolicy = 'attach' | { error: string } | 'hold';

const SCENARIO_KINDS = new Set(['Pod', 'Node', 'PersistentVolume', 'PersistentVolumeClaim', 'VolumeAttachment', 'CSIDriver', 'CSINode']);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class Driver {
  private readonly vas = new Map<string, any>();
  private readonly nodes = new Map<string, any>();
  private readonly pvcs = new Map<string, any>();
  private readonly pvs = new Map<string, any>();
  private readonly ops = new Map<string, { va: string; pv: string; node: string; ops: Op[] }>();
  /** Every version of every Node seen, in order: its resourceVersion and listed unique names (null: deleted). */
  private readonly nodeHistory = new Map<string, { rv: number; names: string[] | null }[]>();
  private readonly eventLines = new Map<string, number>();
  private readonly deleting = new Set<string>();
  private readonly driverDeletes = new Set<string>();
  private readonly driverCreates = new Set<string>();
  private readonly policies = new Map<string, AttachPolicy>();
  private readonly mounted = new Map<string, Set<string>>();
  private readonly attacherQueue = new Map<string, Promise<void>>();
  private readonly attacherDirty = new Set<string>();
  private readonly watchers: Watcher[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly errors: string[] = [];
  private readonly checkpoints: string[] = [];
  private changes = 0;
  private lastChange = Date.now();
  private stopped = false;

  constructor(readonly kube: Kube, readonly label: string) {}

  // ---------------------------------------------------------------- watches and the recorder

  /** Starts the watches from the current resourceVersion (before anything of the scenario exists). */
  async start(): Promise<void> {
    const streams: [string, (type: string, o: any) => void][] = [
      ['/apis/storage.k8s.io/v1/volumeattachments', (t, o) => this.onVa(t, o)],
      ['/api/v1/nodes', (t, o) => this.onNode(t, o)],
      ['/api/v1/persistentvolumeclaims', (t, o) => this.onCache(this.pvcs, t, o, true)],
      ['/api/v1/persistentvolumes', (t, o) => this.onCache(this.pvs, t, o)],
      ['/api/v1/events', (t, o) => this.onEvent(t, o)],
    ];
    for (const [path, on] of streams) {
      const list = await this.kube.must<any>('GET', path);
      for (const o of list.items ?? []) on('ADDED', o);
      const w = this.kube.watch(path, list.metadata.resourceVersion, (t, o) => {
        try {
          on(t, o);
        } catch (err) {
          this.errors.push(`${path}: ${(err as Error).message}`);
        }
        this.changed();
      });
      this.watchers.push(w);
      await w.ready;
    }
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watchers) w.stop();
  }

  private changed(): void {
    this.changes++;
    this.lastChange = Date.now();
    for (const l of this.listeners) l();
  }

  private onCache(map: Map<string, any>, type: string, o: any, namespaced = false): void {
    const key = namespaced ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
    if (type === 'DELETED') map.delete(key);
    else map.set(key, o);
  }

  private onNode(type: string, o: any): void {
    this.onCache(this.nodes, type, o);
    const h = this.nodeHistory.get(o.metadata.name) ?? [];
    this.nodeHistory.set(o.metadata.name, h);
    h.push({ rv: Number(o.metadata.resourceVersion), names: type === 'DELETED' ? null : (o.status?.volumesAttached ?? []).map((v: any) => v.name) });
  }

  /** Did the node's status list this PV at resourceVersion rv (by the last version at or before it)? */
  private listedAt(node: string, pv: string, rv: number): boolean {
    let names: string[] | null = null;
    for (const v of this.nodeHistory.get(node) ?? []) if (v.rv <= rv) names = v.names;
    return !!names?.includes(uniqueName(pv));
  }

  private onVa(type: string, o: any): void {
    const name: string = o.metadata.name;
    let rec = this.ops.get(name);
    if (!rec) {
      rec = { va: name, pv: o.spec?.source?.persistentVolumeName ?? '<inline>', node: o.spec?.nodeName, ops: [] };
      this.ops.set(name, rec);
    }
    const by = (set: Set<string>) => (set.delete(name) ? '(driver)' : '');
    if (type === 'ADDED') {
      rec.ops.push({ op: `create${by(this.driverCreates)}`, rv: Number(o.metadata.resourceVersion), pv: rec.pv, node: rec.node });
      this.deleting.delete(name);
    }
    const markDelete = () => {
      if (!this.deleting.has(name)) {
        this.deleting.add(name);
        rec!.ops.push({ op: `delete${by(this.driverDeletes)}`, rv: Number(o.metadata.resourceVersion), pv: rec!.pv, node: rec!.node });
      }
    };
    if (type === 'DELETED') {
      markDelete();
      this.deleting.delete(name);
      this.vas.delete(name);
      return;
    }
    if (o.metadata.deletionTimestamp) markDelete();
    this.vas.set(name, o);
    this.kickAttacher(name);
  }

  private onEvent(type: string, e: any): void {
    if (type === 'DELETED') return;
    const io = e.involvedObject ?? {};
    // Only events about the objects of a scenario: the API server's own controllers report on
    // others (e.g. a ServiceCIDR warning at start-up), at times that vary.
    if (!SCENARIO_KINDS.has(io.kind)) return;
    const line = `${io.kind} ${io.namespace ? `${io.namespace}/` : ''}${io.name} ${e.type} ${e.reason} [${e.source?.component ?? ''}|${e.reportingComponent ?? ''}]: ${e.message}`;
    if (!this.eventLines.has(line)) this.eventLines.set(line, this.eventLines.size);
  }

  // ---------------------------------------------------------------- the external attacher

  /** How the attacher answers VolumeAttachments of this PV (on `node` only, if given) from now on (default: attach). */
  setAttachPolicy(pv: string, p: AttachPolicy, node?: string): void {
    this.policies.set(node ? `${pv}@${node}` : pv, p);
    for (const [name, va] of this.vas) if (va.spec?.source?.persistentVolumeName === pv) this.kickAttacher(name);
  }

  private kickAttacher(name: string): void {
    if (this.stopped) return;
    this.attacherDirty.add(name);
    if (this.attacherQueue.has(name)) return;
    const run = async () => {
      while (this.attacherDirty.delete(name) && !this.stopped) {
        try {
          await this.syncAttachment(name);
        } catch (err) {
          this.errors.push(`attacher ${name}: ${(err as Error).message}`);
        }
      }
      this.attacherQueue.delete(name);
    };
    this.attacherQueue.set(name, run());
  }

  private async syncAttachment(name: string): Promise<void> {
    const va = this.vas.get(name);
    if (!va || va.spec?.attacher !== CSI_DRIVER) return;
    const path = `/apis/storage.k8s.io/v1/volumeattachments/${name}`;
    const finalizers: string[] = va.metadata.finalizers ?? [];
    if (va.metadata.deletionTimestamp) {
      // Detach is instant here: drop the finalizer so the object goes.
      if (finalizers.includes(ATTACHER_FINALIZER)) {
        await this.kube.must('PATCH', path, { metadata: { finalizers: finalizers.filter((f) => f !== ATTACHER_FINALIZER), resourceVersion: va.metadata.resourceVersion } }, { contentType: MERGE, ok: [404, 409] });
      }
      return;
    }
    if (!finalizers.includes(ATTACHER_FINALIZER)) {
      await this.kube.must('PATCH', path, { metadata: { finalizers: [...finalizers, ATTACHER_FINALIZER], resourceVersion: va.metadata.resourceVersion } }, { contentType: MERGE, ok: [404, 409] });
      return; // the watch brings the object back with the finalizer
    }
    const pv = va.spec.source?.persistentVolumeName;
    const policy = this.policies.get(`${pv}@${va.spec.nodeName}`) ?? this.policies.get(pv) ?? 'attach';
    const status = va.status ?? {};
    if (policy === 'attach' && (status.attached !== true || status.attachError)) {
      await this.kube.must('PATCH', `${path}/status`, { status: { attached: true, attachError: null } }, { contentType: MERGE, ok: [404] });
    } else if (typeof policy === 'object' && status.attachError?.message !== policy.error) {
      await this.kube.must('PATCH', `${path}/status`, { status: { attached: false, attachError: { message: policy.error, time: new Date().toISOString().replace(/\.\d+Z$/, 'Z') } } }, { contentType: MERGE, ok: [404] });
    }
  }

  // ---------------------------------------------------------------- objects

  async namespace(name: string): Promise<void> {
    await this.kube.must('POST', '/api/v1/namespaces', { metadata: { name } }, { ok: [409] });
  }

  async csiDriver(attachRequired = true): Promise<void> {
    await this.kube.must('POST', '/apis/storage.k8s.io/v1/csidrivers', { metadata: { name: CSI_DRIVER }, spec: { attachRequired, podInfoOnMount: false } });
  }

  /** A managed (annotated) Node with Ready=True, optionally with status.volumesAttached set (a cluster that had a controller before). */
  async node(name: string, opts: { managed?: boolean; ready?: boolean; volumesAttached?: string[] } = {}): Promise<void> {
    const annotations = opts.managed === false ? {} : { [MANAGED_ANNOTATION]: 'true' };
    await this.kube.must('POST', '/api/v1/nodes', { metadata: { name, annotations, labels: { 'kubernetes.io/hostname': name } }, spec: {} });
    const status: any = { conditions: [readyCondition(opts.ready ?? true)] };
    if (opts.volumesAttached) status.volumesAttached = opts.volumesAttached.map((pv) => ({ name: uniqueName(pv), devicePath: '' }));
    await this.kube.must('PATCH', `/api/v1/nodes/${name}/status`, { status }, { contentType: MERGE });
  }

  async setReady(node: string, ready: boolean): Promise<void> {
    await this.kube.must('PATCH', `/api/v1/nodes/${node}/status`, { status: { conditions: [readyCondition(ready)] } }, { contentType: 'application/strategic-merge-patch+json' });
  }

  async taint(node: string, key: string, effect: 'NoExecute' | 'NoSchedule', value = 'shutdown'): Promise<void> {
    const n = await this.kube.must<any>('GET', `/api/v1/nodes/${node}`);
    const taints = [...(n.spec?.taints ?? []), { key, value, effect }];
    await this.kube.must('PATCH', `/api/v1/nodes/${node}`, { spec: { taints } }, { contentType: MERGE });
  }

  /** Makes a node managed after the fact (B1). */
  async annotateNode(node: string): Promise<void> {
    await this.kube.must('PATCH', `/api/v1/nodes/${node}`, { metadata: { annotations: { [MANAGED_ANNOTATION]: 'true' } } }, { contentType: MERGE });
  }

  async deleteNode(node: string): Promise<void> {
    await this.kube.must('DELETE', `/api/v1/nodes/${node}`);
  }

  /** The kubelet: sets node.status.volumesInUse to exactly these PVs' unique names. */
  async mount(node: string, pvs: string[]): Promise<void> {
    this.mounted.set(node, new Set(pvs));
    const names = pvs.map(uniqueName).sort();
    await this.kube.must('PATCH', `/api/v1/nodes/${node}/status`, { status: { volumesInUse: names.length ? names : null } }, { contentType: MERGE });
  }

  /**
   * A PV of the driver and a PVC for it in `ns` (named like the PV unless `claim` says). `bound`
   * (the default): PVC Bound to the PV with spec.volumeName, PV claimRef with the PVC's uid;
   * `false`: neither; `'pv-later'`: the PVC bound, the PV not created yet (`createLatePv`).
   */
  async volume(pv: string, opts: { ns?: string; accessModes?: string[]; bound?: boolean | 'pv-later'; claim?: string } = {}): Promise<void> {
    const ns = opts.ns ?? 'default';
    const claim = opts.claim ?? pv;
    const accessModes = opts.accessModes ?? ['ReadWriteOnce'];
    const pvLater = opts.bound === 'pv-later';
    const bound = opts.bound !== false;
    const pvc = await this.kube.must<any>('POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
      metadata: { name: claim },
      spec: { accessModes, resources: { requests: { storage: '1Gi' } }, storageClassName: '', ...(bound ? { volumeName: pv } : {}), volumeMode: 'Filesystem' },
    });
    if (pvLater) this.latePvs.set(pv, { ns, claim, uid: pvc.metadata.uid, accessModes });
    else await this.createPv(pv, accessModes, bound ? { ns, claim, uid: pvc.metadata.uid } : undefined);
    if (bound) await this.bindClaimStatus(ns, claim, accessModes);
  }

  private readonly latePvs = new Map<string, { ns: string; claim: string; uid: string; accessModes: string[] }>();

  /** Creates the PV of a `volume(pv, { bound: 'pv-later' })`, bound to its claim. */
  async createLatePv(pv: string): Promise<void> {
    const l = this.latePvs.get(pv);
    if (!l) throw new Error(`${pv} is not a pv-later volume`);
    await this.createPv(pv, l.accessModes, l);
  }

  private async createPv(pv: string, accessModes: string[], claimRef?: { ns: string; claim: string; uid: string }): Promise<void> {
    await this.kube.must('POST', '/api/v1/persistentvolumes', {
      metadata: { name: pv },
      spec: {
        capacity: { storage: '1Gi' }, accessModes, persistentVolumeReclaimPolicy: 'Retain', storageClassName: '', volumeMode: 'Filesystem',
        csi: { driver: CSI_DRIVER, volumeHandle: handleOf(pv), fsType: 'ext4' },
        ...(claimRef ? { claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: claimRef.ns, name: claimRef.claim, uid: claimRef.uid } } : {}),
      },
    });
  }

  async deleteClaim(claim: string, ns = 'default'): Promise<void> {
    await this.kube.must('DELETE', `/api/v1/namespaces/${ns}/persistentvolumeclaims/${claim}`);
  }

  /**
   * Binds a pending claim as the PV controller does: the PV's claimRef first, then (once this
   * driver's own watch has seen it) the PVC's spec.volumeName, then its status Bound.
   */
  async bindLate(pv: string, opts: { ns?: string; claim?: string } = {}): Promise<void> {
    const ns = opts.ns ?? 'default';
    const claim = opts.claim ?? pv;
    const pvc = await this.kube.must<any>('GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims/${claim}`);
    await this.kube.must('PATCH', `/api/v1/persistentvolumes/${pv}`, { spec: { claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: ns, name: claim, uid: pvc.metadata.uid } } }, { contentType: MERGE });
    await this.waitFor(`PV ${pv} claimRef seen`, () => this.pvs.get(pv)?.spec?.claimRef?.uid === pvc.metadata.uid, 10_000);
    await this.kube.must('PATCH', `/api/v1/namespaces/${ns}/persistentvolumeclaims/${claim}`, { spec: { volumeName: pv } }, { contentType: MERGE });
    await this.bindClaimStatus(ns, claim, pvc.spec.accessModes);
  }

  private async bindClaimStatus(ns: string, claim: string, accessModes: string[]): Promise<void> {
    await this.kube.must('PATCH', `/api/v1/namespaces/${ns}/persistentvolumeclaims/${claim}/status`, { status: { phase: 'Bound', accessModes, capacity: { storage: '1Gi' } } }, { contentType: MERGE });
  }

  /** A pod scheduled to `node` using these claims (one volume each). */
  async pod(name: string, opts: { node: string; claims: string[]; ns?: string }): Promise<void> {
    const ns = opts.ns ?? 'default';
    await this.kube.must('POST', `/api/v1/namespaces/${ns}/pods`, {
      metadata: { name },
      spec: {
        nodeName: opts.node,
        containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', volumeMounts: opts.claims.map((c, i) => ({ name: `v${i}`, mountPath: `/data/${i}` })) }],
        volumes: opts.claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })),
        terminationGracePeriodSeconds: 30,
      },
    });
  }

  /** Deletes a pod at once (grace period 0), as the kubelet's final delete or the pod GC does. */
  async deletePod(name: string, ns = 'default'): Promise<void> {
    await this.kube.must('DELETE', `/api/v1/namespaces/${ns}/pods/${name}`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 });
  }

  /** An update of the pod that changes nothing a controller reads (a label). */
  async touchPod(name: string, ns = 'default'): Promise<void> {
    await this.kube.must('PATCH', `/api/v1/namespaces/${ns}/pods/${name}`, { metadata: { labels: { touched: String(Date.now()) } } }, { contentType: MERGE });
  }

  /** Deletes a pod with its default grace period: it stays, with a deletionTimestamp, as no kubelet finishes it. */
  async deletePodGracefully(name: string, ns = 'default'): Promise<void> {
    await this.kube.must('DELETE', `/api/v1/namespaces/${ns}/pods/${name}`);
  }

  /** The kubelet reports the pod's one container running (phase Running) or terminated (the phase is left as it is). */
  async containerState(name: string, state: 'running' | 'terminated', ns = 'default'): Promise<void> {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const cs = {
      name: 'c', image: 'registry.k8s.io/pause:3.10', imageID: '', ready: state === 'running', restartCount: 0,
      state: state === 'running' ? { running: { startedAt: now } } : { terminated: { exitCode: 0, reason: 'Completed', startedAt: now, finishedAt: now } },
    };
    const status: any = { containerStatuses: [cs] };
    if (state === 'running') status.phase = 'Running';
    await this.kube.must('PATCH', `/api/v1/namespaces/${ns}/pods/${name}/status`, { status }, { contentType: MERGE });
  }

  async podPhase(name: string, phase: 'Succeeded' | 'Failed' | 'Running', ns = 'default'): Promise<void> {
    await this.kube.must('PATCH', `/api/v1/namespaces/${ns}/pods/${name}/status`, { status: { phase } }, { contentType: MERGE });
  }

  /** A VolumeAttachment as the controller would have created it, optionally already attached (for start-up scenarios). */
  async createAttachment(pv: string, node: string, opts: { attached: boolean }): Promise<void> {
    const name = vaName(pv, node);
    this.driverCreates.add(name);
    await this.kube.must('POST', '/apis/storage.k8s.io/v1/volumeattachments', {
      metadata: { name }, spec: { attacher: CSI_DRIVER, nodeName: node, source: { persistentVolumeName: pv } },
    });
    if (opts.attached) {
      await this.kube.must('PATCH', `/apis/storage.k8s.io/v1/volumeattachments/${name}/status`, { status: { attached: true } }, { contentType: MERGE });
    }
  }

  /** Someone else deletes a VolumeAttachment. */
  async deleteAttachment(pv: string, node: string): Promise<void> {
    const name = vaName(pv, node);
    this.driverDeletes.add(name);
    await this.kube.must('DELETE', `/apis/storage.k8s.io/v1/volumeattachments/${name}`);
  }

  // ---------------------------------------------------------------- conditions and waits

  /** Waits until `cond` holds; FAILS (throws) when `timeoutMs` passes first. */
  async waitFor(what: string, cond: () => boolean, timeoutMs = 60_000): Promise<void> {
    if (cond()) return;
    await new Promise<void>((ok, fail) => {
      const check = () => {
        if (cond()) done();
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        clearInterval(tick);
        fail(new Error(`[${this.label}] timed out after ${timeoutMs} ms waiting for: ${what}\nrecord so far: ${JSON.stringify(this.snapshot(), null, 1)}${this.errors.length ? `\ndriver errors: ${this.errors.join('\n')}` : ''}`));
      }, timeoutMs);
      const tick = setInterval(check, 200);
      const done = () => {
        clearTimeout(timer);
        clearInterval(tick);
        this.listeners.delete(check);
        ok();
      };
      this.listeners.add(check);
    });
  }

  /** Until nothing recorded has changed for `quietMs` (bounded; fails after `timeoutMs`). */
  async settle(quietMs = 2000, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    this.lastChange = Date.now();
    while (Date.now() - this.lastChange < quietMs) {
      if (Date.now() > deadline) throw new Error(`[${this.label}] the cluster did not settle within ${timeoutMs} ms`);
      await sleep(100);
    }
    await Promise.all(this.attacherQueue.values());
  }

  /**
   * Records what the API shows now (VolumeAttachments and every node's volumesAttached, from the
   * driver's watches), under `label`: for steps whose point is what has NOT happened yet.
   */
  checkpoint(label: string): void {
    const s = this.snapshot();
    this.checkpoints.push(`${label}: attachments [${s.finalAttachments.join('; ')}] volumesAttached ${JSON.stringify(s.volumesAttached)}`);
  }

  /** A fixed pause, for the few steps whose effect (or its absence) the API cannot show. */
  pause(ms: number): Promise<void> {
    return sleep(ms);
  }

  vaAttached(pv: string, node: string): boolean {
    const va = this.vas.get(vaName(pv, node));
    return !!va && va.status?.attached === true && !va.metadata.deletionTimestamp;
  }

  claimExists(claim: string, ns = 'default'): boolean {
    return this.pvcs.has(`${ns}/${claim}`);
  }

  nodeExists(node: string): boolean {
    return this.nodes.has(node);
  }

  vaExists(pv: string, node: string): boolean {
    return this.vas.has(vaName(pv, node));
  }

  /** The node's status.volumesAttached lists exactly these PVs. */
  nodeLists(node: string, pvs: string[]): boolean {
    const n = this.nodes.get(node);
    if (!n) return false;
    const got = (n.status?.volumesAttached ?? []).map((v: any) => v.name).sort();
    const want = pvs.map(uniqueName).sort();
    return JSON.stringify(got) === JSON.stringify(want);
  }

  /** An event with this reason about this pod (and, if given, a message containing `text`) was recorded. */
  eventSeen(reason: string, pod: string, text = '', ns = 'default'): boolean {
    for (const line of this.eventLines.keys()) {
      if (line.startsWith(`Pod ${ns}/${pod} `) && line.includes(` ${reason} `) && line.includes(text)) return true;
    }
    return false;
  }

  async waitAttached(pv: string, nodes: string[], pods: string[] = [], ns = 'default'): Promise<void> {
    for (const node of nodes) await this.waitFor(`VolumeAttachment ${pv}@${node} attached`, () => this.vaAttached(pv, node));
    for (const pod of pods) await this.waitFor(`SuccessfulAttachVolume for ${ns}/${pod}`, () => this.eventSeen('SuccessfulAttachVolume', pod, '', ns));
  }

  async waitGone(pv: string, node: string, timeoutMs = 60_000): Promise<void> {
    await this.waitFor(`VolumeAttachment ${pv}@${node} gone`, () => !this.vaExists(pv, node), timeoutMs);
  }

  async waitListed(node: string, pvs: string[], timeoutMs = 60_000): Promise<void> {
    await this.waitFor(`node ${node} volumesAttached = [${pvs.join(', ')}]`, () => this.nodeLists(node, pvs), timeoutMs);
  }

  // ---------------------------------------------------------------- the record

  private snapshot(): ScenarioRecord {
    return {
      attachments: [...this.ops.values()].map((r) => ({
        ...r,
        ops: r.ops.map((o) => (o.op.startsWith('delete') && this.listedAt(o.node, o.pv, o.rv) ? `${o.op} while listed` : o.op)),
      })).sort((a, b) => `${a.pv}@${a.node}`.localeCompare(`${b.pv}@${b.node}`)),
      finalAttachments: [...this.vas.values()].map(describeVa).sort(),
      volumesAttached: Object.fromEntries([...this.nodes.values()].map((n) => [n.metadata.name, volumesAttachedOf(n)]).sort(([a], [b]) => a.localeCompare(b))),
      events: [...this.eventLines.keys()].sort(),
      checkpoints: [...this.checkpoints],
    };
  }

  /** The record, with nodes and VolumeAttachments read afresh from the API server. */
  async record(): Promise<ScenarioRecord> {
    if (this.errors.length) throw new Error(`[${this.label}] driver errors:\n${this.errors.join('\n')}`);
    const snap = this.snapshot();
    const nodes = await this.kube.must<any>('GET', '/api/v1/nodes');
    const vas = await this.kube.must<any>('GET', '/apis/storage.k8s.io/v1/volumeattachments');
    snap.volumesAttached = Object.fromEntries(nodes.items.map((n: any) => [n.metadata.name, volumesAttachedOf(n)]).sort(([a]: [string], [b]: [string]) => a.localeCompare(b)));
    snap.finalAttachments = vas.items.map(describeVa).sort();
    return snap;
  }
}

function readyCondition(ready: boolean) {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'KubeletReady' : 'KubeletNotReady', message: ready ? 'kubelet is posting ready status' : 'node shut down', lastHeartbeatTime: now, lastTransitionTime: now };
}

function volumesAttachedOf(n: any): string[] {
  return (n.status?.volumesAttached ?? []).map((v: any) => (v.devicePath ? `${v.name} (${v.devicePath})` : v.name)).sort();
}

function describeVa(va: any): string {
  const s = va.status ?? {};
  const state = s.attached ? 'attached' : s.attachError ? `attachError=${s.attachError.message}` : 'pending';
  return `${va.spec?.source?.persistentVolumeName ?? '<inline>'}@${va.spec?.nodeName} ${state}${va.metadata.deletionTimestamp ? ', deleting' : ''}`;
}
