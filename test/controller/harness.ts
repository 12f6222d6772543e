/**
 * Integration harness: an empty simulator (attacher and kubelet off — the test plays them, as
 * upstream's integration tests do) and the controller against it through client-node, with
 * shortened timers.
 */
import { createHash } from 'node:crypto';
import { startSimulator, type FaultHooks, type Simulator } from '../../src/sim/server/index.js';
import { startController, type Controller } from '../../src/manager/controller.js';
import type { ControllerOptions } from '../../src/manager/controller-options.js';
import type { KubeObject } from '../../src/sim/store/sim-store.js';

export const DRIVER = 'test.csi.fleet-attach.io';
export const uniqueName = (handle: string) => `kubernetes.io/csi/${DRIVER}^${handle}`;
export const vaName = (handle: string, node: string, driver = DRIVER) => `csi-${createHash('sha256').update(handle + driver + node).digest('hex')}`;

export interface Harness {
  sim: Simulator;
  ctl: Controller;
  stop(): Promise<void>;
}

export async function startHarness(opts: Partial<ControllerOptions> = {}, simOpts: { faults?: FaultHooks } = {}): Promise<Harness> {
  const sim = await startSimulator({ bookmarkIntervalMs: 1000, ...simOpts });
  const ctl = await startController({ ...controllerDefaults(sim), ...opts });
  return {
    sim,
    ctl,
    async stop() {
      await ctl.stop();
      await sim.stop();
    },
  };
}

/** The shortened timers every controller of these tests runs with. */
export function controllerDefaults(sim: Simulator): Partial<ControllerOptions> & Pick<ControllerOptions, 'kubeconfig'> {
  return {
    kubeconfig: { yaml: sim.kubeconfig },
    leaderElect: false,
    workers: 0,
    kernelBuild: 'debug',
    loopPeriodMs: 50,
    reconcileSyncPeriodMs: 60_000,
    dswPopulatorPeriodMs: 1_000,
    dswListPodsPeriodMs: 3_000,
    csiTimeoutMs: 30_000,
    kubeApiQps: 1000,
    kubeApiBurst: 1000,
  };
}

export async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface PassWait {
  /**
   * Counting starts only once this holds (checked between passes; `fn` is checked meanwhile
   * too): e.g. a timer expired by the controller's clock, or some populator passes completed.
   */
  after?: () => unknown | Promise<unknown>;
  /**
   * Fails the test if the passes have not completed by then. Only a stop for a hung wait: a
   * slow machine makes the wait longer, never shorter, and never lets it pass early.
   */
  deadlineMs?: number;
}

/**
 * Asserts `fn` stays falsy while `ctl`'s reconciler completes `passes` more passes (after
 * `o.after` holds, if given): checked between passes (every 10 ms) and after the last one. The
 * passes are counted, not timed, so a slow machine cannot end the watch before the controller
 * had its chances to act; if they do not happen within `o.deadlineMs`, the test fails.
 */
export async function neverDuringPasses(ctl: Pick<Controller, 'reconciler'>, what: string, fn: () => unknown, passes: number, o: PassWait = {}): Promise<void> {
  const deadline = Date.now() + (o.deadlineMs ?? 60_000);
  const start = ctl.reconciler.passes();
  let target = o.after ? undefined : start + passes;
  for (;;) {
    const done = ctl.reconciler.passes(); // read before fn: fn then sees what that pass did
    if (fn()) throw new Error(`unexpected: ${what} (after ${done - start} reconcile passes)`);
    if (target === undefined && (await o.after!())) target = ctl.reconciler.passes() + passes;
    if (target !== undefined && done >= target) return;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${passes} reconcile passes ${target === undefined ? '(its start condition never held) ' : ''}while watching for: ${what} (${done - start} ran)`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Completed populator passes of one kind (C9 'pods-removed', C10 'pods-listed'), from their metric. */
export function populatorPasses(ctl: Controller, pass: 'pods-removed' | 'pods-listed'): Promise<number> {
  return histogramCount(ctl, 'fleet_attach_periodic_pass_busy_seconds', { pass });
}

export function node(name: string, o: { managed?: boolean; ready?: boolean; taints?: Array<{ key: string; effect: string }> } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, annotations: o.managed === false ? {} : { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' } },
    spec: { taints: o.taints ?? [] },
    status: { conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }] },
  };
}

/** Creates the PVC, then the PV bound to it (the store assigns the PVC's uid), then the pod. */
export function createVolumeAndPod(store: Simulator['store'], ns: string, handle: string, o: Parameters<typeof volumeObjects>[2] = {}): void {
  const v = volumeObjects(ns, handle, o);
  const pvc = store.create('persistentvolumeclaims', v.pvc);
  ((v.pv.spec as Record<string, unknown>).claimRef as Record<string, unknown>).uid = pvc.metadata.uid;
  store.create('persistentvolumes', v.pv);
  store.create('pods', v.pod);
}

/** A bound PV/PVC pair and a pod using it. */
export function volumeObjects(ns: string, handle: string, o: { rwx?: boolean; podName?: string; nodeName?: string; bound?: boolean; driver?: string } = {}) {
  const pvcUid = `uid-pvc-${handle}`;
  const pv: KubeObject = {
    apiVersion: 'v1', kind: 'PersistentVolume',
    metadata: { name: `pv-${handle}` },
    spec: {
      accessModes: [o.rwx ? 'ReadWriteMany' : 'ReadWriteOnce'],
      capacity: { storage: '1Gi' },
      csi: { driver: o.driver ?? DRIVER, volumeHandle: handle },
      claimRef: { namespace: ns, name: `pvc-${handle}`, uid: pvcUid },
    },
    status: { phase: 'Bound' },
  };
  const pvc: KubeObject = {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name: `pvc-${handle}`, namespace: ns, uid: pvcUid },
    spec: { accessModes: [o.rwx ? 'ReadWriteMany' : 'ReadWriteOnce'], volumeName: o.bound === false ? '' : `pv-${handle}` },
    status: { phase: o.bound === false ? 'Pending' : 'Bound' },
  };
  return { pv, pvc, pod: pod(ns, o.podName ?? `pod-${handle}`, o.nodeName ?? 'node-a', [`pvc-${handle}`]) };
}

export function pod(ns: string, name: string, nodeName: string, claims: string[]): KubeObject {
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: { nodeName, containers: [{ name: 'c', image: 'x' }], volumes: claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })) },
    status: { phase: 'Running', containerStatuses: [{ name: 'c', state: { running: {} } }] },
  };
}

/** Plays the external attacher for one VA: status.attached = true. */
export function attachVa(sim: Simulator, name: string): void {
  sim.store.mutate('volumeattachments', undefined, name, (va) => {
    va.status = { attached: true };
  });
}

export function volumesAttached(sim: Simulator, nodeName: string): string[] {
  const n = sim.store.get('nodes', undefined, nodeName) as { status?: { volumesAttached?: Array<{ name: string }> } } | undefined;
  return (n?.status?.volumesAttached ?? []).map((v) => v.name);
}

export function setVolumesInUse(sim: Simulator, nodeName: string, names: string[]): void {
  sim.store.mutate('nodes', undefined, nodeName, (n) => {
    (n.status as Record<string, unknown>).volumesInUse = names;
  });
}

/** Starts another controller on the same simulator (restart, second replica). The caller stops it. */
export function startControllerOn(sim: Simulator, opts: Partial<ControllerOptions> = {}): Promise<Controller> {
  return startController({ ...controllerDefaults(sim), ...opts });
}

/** The reflector of one resource (e.g. 'persistentvolumes') of a controller. */
export function reflectorOf(ctl: Controller, resource: string): Controller['reflectors'][number] {
  const r = ctl.reflectors.find((x) => x.resource === resource);
  if (!r) throw new Error(`no reflector for ${resource}`);
  return r;
}

/** Plays the external attacher failing: status.attachError set, attached false. */
export function failVa(sim: Simulator, name: string, message: string): void {
  sim.store.mutate('volumeattachments', undefined, name, (va) => {
    va.status = { attached: false, attachError: { message, time: new Date().toISOString() } };
  });
}

export function vaExists(sim: Simulator, name: string): boolean {
  return sim.store.get('volumeattachments', undefined, name) !== undefined;
}

/** The VA exists and no deletion was requested. */
export function vaLive(sim: Simulator, name: string): boolean {
  const va = sim.store.get('volumeattachments', undefined, name);
  return va !== undefined && !va.metadata.deletionTimestamp;
}

export function setNodeReady(sim: Simulator, nodeName: string, ready: boolean): void {
  sim.store.mutate('nodes', undefined, nodeName, (n) => {
    (n.status as Record<string, unknown>).conditions = [{ type: 'Ready', status: ready ? 'True' : 'False' }];
  });
}

export function addTaint(sim: Simulator, nodeName: string, key: string, effect = 'NoExecute'): void {
  sim.store.mutate('nodes', undefined, nodeName, (n) => {
    const spec = (n.spec ??= {}) as { taints?: Array<{ key: string; effect: string }> };
    spec.taints = [...(spec.taints ?? []), { key, effect }];
  });
}

export const OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';

/**
 * Records every VolumeAttachment change of the store, in commit order: creations, deletion
 * requests and removals, and the most nodes any one volume handle had a VA on at once
 * (a VA counts from creation until removed from the store).
 */
export interface VaRecorder {
  readonly log: ReadonlyArray<{ type: 'created' | 'deleting' | 'removed'; name: string; node: string; handle: string; at: number }>;
  created(handle?: string): number;
  /** Most nodes holding a VA of `handle` at the same time. */
  maxConcurrent(handle: string): number;
  stop(): void;
}

export function recordVolumeAttachments(sim: Simulator, pvHandle: (pvName: string) => string = (pv) => pv.replace(/^pv-/, '')): VaRecorder {
  const log: Array<{ type: 'created' | 'deleting' | 'removed'; name: string; node: string; handle: string; at: number }> = [];
  const live = new Map<string, Set<string>>();
  const max = new Map<string, number>();
  const unsub = sim.store.subscribe((ev) => {
    if (ev.resource !== 'volumeattachments') return;
    const va = ev.object() as KubeObject & { spec: { nodeName: string; source: { persistentVolumeName?: string } } };
    const handle = pvHandle(va.spec.source.persistentVolumeName ?? '');
    const nodes = live.get(handle) ?? new Set<string>();
    live.set(handle, nodes);
    const entry = { name: ev.name, node: va.spec.nodeName, handle, at: Date.now() };
    if (ev.type === 'ADDED') {
      log.push({ type: 'created', ...entry });
      nodes.add(va.spec.nodeName);
      max.set(handle, Math.max(max.get(handle) ?? 0, nodes.size));
    } else if (ev.type === 'DELETED') {
      log.push({ type: 'removed', ...entry });
      nodes.delete(va.spec.nodeName);
    } else if (va.metadata.deletionTimestamp && !log.some((e) => e.type === 'deleting' && e.name === ev.name)) {
      log.push({ type: 'deleting', ...entry });
    }
  });
  return {
    log,
    created: (handle) => log.filter((e) => e.type === 'created' && (handle === undefined || e.handle === handle)).length,
    maxConcurrent: (handle) => max.get(handle) ?? 0,
    stop: unsub,
  };
}

export interface RecordedEvent {
  namespace: string;
  pod: string;
  type: string;
  reason: string;
  message: string;
  count: number;
  component: string;
}

/** core/v1 Events in the store (all namespaces), optionally one reason. */
export function podEvents(sim: Simulator, reason?: string): RecordedEvent[] {
  return sim.store
    .list('events')
    .map((o) => {
      const e = o as KubeObject & {
        involvedObject: { namespace: string; name: string }; type: string; reason: string; message: string; count?: number; source?: { component?: string };
      };
      return {
        namespace: e.involvedObject.namespace, pod: e.involvedObject.name, type: e.type, reason: e.reason,
        message: e.message, count: e.count ?? 1, component: e.source?.component ?? '',
      };
    })
    .filter((e) => reason === undefined || e.reason === reason);
}

/** Value of a counter/gauge sample in the controller's registry (0 when absent). */
export async function metricValue(ctl: Controller, name: string, labels: Record<string, string> = {}): Promise<number> {
  const all = await ctl.metrics.registry.getMetricsAsJSON();
  const m = all.find((x) => x.name === name);
  if (!m) throw new Error(`metric ${name} not registered`);
  const v = (m.values as Array<{ value: number; labels: Record<string, string | number> }>).find((s) =>
    Object.entries(labels).every(([k, val]) => String(s.labels[k]) === val),
  );
  return v?.value ?? 0;
}

export function csiDriver(name: string, attachRequired: boolean): KubeObject {
  return { apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name }, spec: { attachRequired } };
}

/**
 * Brings one volume to "attached and listed in node status" on `nodeName` for pod `pod-<handle>`
 * (the node must exist), playing the attacher; `mounted` also plays the kubelet's volumesInUse.
 * Returns the VA name.
 */
export async function attachVolume(sim: Simulator, handle: string, o: { nodeName?: string; ns?: string; mounted?: boolean; rwx?: boolean } = {}): Promise<string> {
  const nodeName = o.nodeName ?? 'node-a';
  createVolumeAndPod(sim.store, o.ns ?? 'default', handle, { nodeName, ...(o.rwx ? { rwx: true } : {}) });
  const va = vaName(handle, nodeName);
  await waitFor(`VolumeAttachment of ${handle} on ${nodeName}`, () => vaExists(sim, va));
  attachVa(sim, va);
  await waitFor(`${handle} in ${nodeName} volumesAttached`, () => volumesAttached(sim, nodeName).includes(uniqueName(handle)));
  if (o.mounted) setVolumesInUse(sim, nodeName, [...volumesInUse(sim, nodeName), uniqueName(handle)]);
  return va;
}

export function volumesInUse(sim: Simulator, nodeName: string): string[] {
  const n = sim.store.get('nodes', undefined, nodeName) as { status?: { volumesInUse?: string[] } } | undefined;
  return n?.status?.volumesInUse ?? [];
}

export const FORCED_DETACHES = 'attach_detach_controller_attachdetach_controller_forced_detaches';

/** Number of observations of a histogram series in the controller's registry (0 when absent). */
export async function histogramCount(ctl: Controller, name: string, labels: Record<string, string> = {}): Promise<number> {
  const all = await ctl.metrics.registry.getMetricsAsJSON();
  const m = all.find((x) => x.name === name);
  if (!m) throw new Error(`metric ${name} not registered`);
  const samples = m.values as Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>;
  return samples
    .filter((s) => s.metricName === `${name}_count` && Object.entries(labels).every(([k, v]) => String(s.labels[k]) === v))
    .reduce((sum, s) => sum + s.value, 0);
}
