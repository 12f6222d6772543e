/**
 * Integration harness: an empty simulator (attacher and kubelet off — the test plays them, as
 * upstream's integration tests do) and the controller against it through client-node, with
 * shortened timers.
 */
import { createHash } from 'node:crypto';
import { startSimulator, type Simulator } from '../../src/sim/server/index.js';
import { startController, type Controller } from '../../src/manager/controller.js';
import type { ControllerOptions } from '../../src/manager/controller-options.js';
import type { KubeObject } from '../../src/sim/store/sim-store.js';

export const DRIVER = 'test.csi.fleet-attach.io';
export const uniqueName = (handle: string) => `kubernetes.io/csi/${DRIVER}^${handle}`;
export const vaName = (handle: string, node: string) => `csi-${createHash('sha256').update(handle + DRIVER + node).digest('hex')}`;

export interface Harness {
  sim: Simulator;
  ctl: Controller;
  stop(): Promise<void>;
}

export async function startHarness(opts: Partial<ControllerOptions> = {}): Promise<Harness> {
  const sim = await startSimulator({ bookmarkIntervalMs: 1000 });
  const ctl = await startController({
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
    ...opts,
  });
  return {
    sim,
    ctl,
    async stop() {
      await ctl.stop();
      await sim.stop();
    },
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

/** Asserts `fn` stays falsy for `ms`. */
export async function never(what: string, fn: () => unknown, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (fn()) throw new Error(`unexpected: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
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
export function createVolumeAndPod(store: Simulator['store'], ns: string, handle: string, o: Parameters<typeof volumeObjects>[3] = {}): void {
  const v = volumeObjects(ns, handle, o);
  const pvc = store.create('persistentvolumeclaims', v.pvc);
  ((v.pv.spec as Record<string, unknown>).claimRef as Record<string, unknown>).uid = pvc.metadata.uid;
  store.create('persistentvolumes', v.pv);
  store.create('pods', v.pod);
}

/** A bound PV/PVC pair and a pod using it. */
export function volumeObjects(ns: string, handle: string, o: { rwx?: boolean; podName?: string; nodeName?: string; bound?: boolean } = {}) {
  const pvcUid = `uid-pvc-${handle}`;
  const pv: KubeObject = {
    apiVersion: 'v1', kind: 'PersistentVolume',
    metadata: { name: `pv-${handle}` },
    spec: {
      accessModes: [o.rwx ? 'ReadWriteMany' : 'ReadWriteOnce'],
      capacity: { storage: '1Gi' },
      csi: { driver: DRIVER, volumeHandle: handle },
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
